import type { Ctx } from '../../http/types.ts'
import type { App } from '../../api/kit/app.ts'
import { PORTAL_COOKIE } from '../../api/kit/auth.ts'

/**
 * Whether the customer reached us over https: the socket's own TLS, or, behind a proxy we were
 * told to trust (REPLENISH_TRUST_PROXY), its X-Forwarded-Proto; a public URL in https says so too.
 */
export function viaHttps(app: App, ctx: Ctx): boolean {
  if ((ctx.req.socket as { encrypted?: boolean }).encrypted === true) return true
  if (app.config.trustProxy) {
    const proto = ctx.req.headers['x-forwarded-proto']
    const first = (Array.isArray(proto) ? proto[0] : proto)?.split(',')[0]?.trim().toLowerCase()
    if (first !== undefined) return first === 'https'
  }
  return app.config.publicUrl?.startsWith('https:') === true
}

/**
 * The session cookie (C14): script cannot read it (HttpOnly), other sites' requests do not carry
 * it (SameSite=Strict; same-site pages on other ports still can, which the CSRF token covers),
 * and over https it never travels in clear (Secure). No Max-Age: the server's 12 h idle expiry
 * decides, and a closed browser forgets it sooner.
 */
export function sessionCookie(id: string, secure: boolean): string {
  return `${PORTAL_COOKIE}=${id}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}

export function clearedCookie(secure: boolean): string {
  return `${PORTAL_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`
}
