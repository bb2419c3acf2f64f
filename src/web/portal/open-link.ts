import { randomBytes } from 'node:crypto'
import type { Handler } from '../../http/types.ts'
import type { App } from '../../api/kit/app.ts'
import { PORTAL_IDLE_MS, sha256 } from '../../api/kit/auth.ts'
import { negotiateLanguage } from '../../domain/messages.ts'
import type { Assets } from '../assets.ts'
import { HTML_TYPE, PAGE_HEADERS } from '../page-headers.ts'
import { gonePage } from './gone-page.ts'
import { sessionCookie, viaHttps } from './cookie.ts'

/** Link tokens are `rplp_` and 43 base64url characters (portal-sessions.ts); anything else is not one. */
const TOKEN_SHAPE = /^rplp_[A-Za-z0-9_-]{43}$/

/**
 * GET /portal/sessions/:token (C14): the one-time link trades itself for a session. Marking the
 * link used and making the session happen in one unit, so a link opened twice at once makes one
 * session. The session id goes only into the cookie; the database keeps its hash.
 */
export function openPortalLink(app: App, assets: Assets): Handler {
  return async (ctx) => {
    const language = negotiateLanguage(ctx.req.headers['accept-language'] as string | undefined)
    const token = ctx.params['token'] ?? ''
    const id = TOKEN_SHAPE.test(token) ? await startSession(app, token) : undefined
    if (id === undefined) {
      // The spent link's own way back (C18); an unknown token has none.
      const returnUrl = TOKEN_SHAPE.test(token) ? await app.store.portal.returnUrlOfLink(sha256(token)) : null
      return gonePage(language, app.config, await assets.all(), returnUrl)
    }
    return {
      status: 303,
      body: '',
      contentType: HTML_TYPE,
      headers: { ...PAGE_HEADERS, location: '/portal/', 'set-cookie': sessionCookie(id, viaHttps(app, ctx)) },
    }
  }
}

async function startSession(app: App, token: string): Promise<string | undefined> {
  const now = Date.now()
  const at = new Date(now).toISOString()
  return app.store.write(async (tx) => {
    const link = await tx.portal.useLink(sha256(token), at)
    if (link === undefined) return undefined
    const id = randomBytes(32).toString('base64url')
    const csrf = randomBytes(32).toString('base64url')
    await tx.portal.createSession(sha256(id), link.user_id, csrf, link.return_url, new Date(now + PORTAL_IDLE_MS).toISOString(), at)
    return id
  })
}
