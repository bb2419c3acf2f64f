import { randomBytes } from 'node:crypto'
import type { Ctx } from '../http/types.ts'
import type { Tx } from '../store/api.ts'
import { FieldErrors } from '../domain/field-errors.ts'
import type { App } from '../api/kit/app.ts'
import { sha256 } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { optionalRoot } from '../api/kit/params.ts'
import { changeFound } from './change-found.ts'
import { check, optionalString } from './input.ts'
import { isWebUrl } from '../config.ts'

/** A link is good for an hour (C14), once. */
const LINK_LIFETIME_MS = 3_600_000
/** Dead links and sessions are deleted when a new link is made, after a day (a support question's worth). */
const KEEP_EXPIRED_MS = 86_400_000
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/**
 * POST /admin/api/v1/users/:id/portal_sessions `{portal_session: {return_url?}}` → 201 `{url,
 * expires_at}` (C14, like Stripe's billing-portal sessions): the shop's backend hands the link to
 * its signed-in customer. The token is shown only here; the database keeps its hash.
 */
export const createPortalSession = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.accounts.findUser(id), async (tx, user, ctx) => {
    const attrs = optionalRoot(ctx, 'portal_session')
    const errors = new FieldErrors()
    const returnUrl = optionalString(attrs, 'return_url', errors, 2000)
    if (returnUrl !== null && !isWebUrl(returnUrl)) errors.add('return_url', 'invalid')
    check(errors)
    const now = Date.now()
    const expiresAt = new Date(now + LINK_LIFETIME_MS).toISOString()
    await prunePortalLinks(tx, now)
    const token = await createPortalLink(tx, user.id, returnUrl, expiresAt, new Date(now).toISOString())
    return ok({ url: `${baseUrl(app, ctx)}/portal/sessions/${token}`, expires_at: expiresAt }, 201)
  })

/**
 * A one-time portal link for the user, valid until `expiresAt`: answers its token, which only the
 * link holds (the database keeps its hash). The admin API's links and the upcoming mails' (C17).
 */
export async function createPortalLink(tx: Tx, userId: number, returnUrl: string | null, expiresAt: string, now: string): Promise<string> {
  const token = `rplp_${randomBytes(32).toString('base64url')}`
  await tx.portal.createLink(sha256(token), userId, returnUrl, expiresAt, now)
  return token
}

/** Links and sessions dead for a day go (kept that long for a support question). */
export function prunePortalLinks(tx: Tx, nowMs: number): Promise<void> {
  return tx.portal.pruneExpired(new Date(nowMs - KEEP_EXPIRED_MS).toISOString())
}

/**
 * REPLENISH_PUBLIC_URL when set; else the scheme and Host this request came with (the shop's
 * backend usually calls the same address its customers use), X-Forwarded-Proto only from a proxy
 * we trust. A Host that is not a host name falls back to the address the request reached.
 */
function baseUrl(app: App, ctx: Ctx): string {
  if (app.config.publicUrl !== undefined) return app.config.publicUrl
  const encrypted = (ctx.req.socket as { encrypted?: boolean }).encrypted === true
  const forwarded = app.config.trustProxy ? ctx.req.headers['x-forwarded-proto'] : undefined
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(',')[0]?.trim().toLowerCase()
  const scheme = proto === 'https' || proto === 'http' ? proto : encrypted ? 'https' : 'http'
  const host = ctx.req.headers.host
  if (host !== undefined && HOST_HEADER.test(host)) return `${scheme}://${host}`
  const local = ctx.req.socket.localAddress ?? '127.0.0.1'
  return `${scheme}://${local.includes(':') ? `[${local}]` : local}:${ctx.req.socket.localPort ?? 80}`
}
