import type { App } from '../../api/kit/app.ts'
import { PORTAL_COOKIE, cookieValue, portalSession, sha256 } from '../../api/kit/auth.ts'
import { ok, type ApiHandler } from '../../api/kit/endpoint.ts'
import type { Subscribable } from '../../domain/types.ts'
import { clearedCookie, viaHttps } from './cookie.ts'

/** The catalogue the page names items from, at most this many items (a shop of a few hundred products). */
const CATALOGUE_LIMIT = 500

/**
 * GET /portal/api/session: what the portal's script needs besides the customer API. The CSRF
 * token is read here by the page itself; another site's page can make the browser send this
 * request, never read its answer (no CORS credentials are ever allowed).
 */
export const showPortalSession = (app: App): ApiHandler => async (ctx) => {
  const session = await portalSession(app, ctx)
  ctx.userId = session.user_id
  const user = await app.store.accounts.findUser(session.user_id)
  const { config } = app
  return ok({
    user: {
      id: session.user_id, email: user?.email ?? null,
      // C17: the customer's own e-mail settings, which the portal lets them change (settings-api.ts).
      locale: user?.locale ?? config.defaultLocale, email_notifications: user?.email_notifications ?? false,
    },
    csrf_token: session.csrf_token,
    return_url: session.return_url,
    expires_at: session.expires_at,
    today: app.clock.today(),
    shop: { name: config.shopName, logo_url: config.shopLogoUrl ?? null, accent: config.shopAccent },
    catalogue: await catalogue(app),
  })
}

/** POST /portal/api/sign_out (CSRF token required, as for every write): the session ends here. */
export const signOutOfPortal = (app: App): ApiHandler => async (ctx) => {
  const session = await portalSession(app, ctx)
  ctx.userId = session.user_id
  const id = cookieValue(ctx.req.headers.cookie, PORTAL_COOKIE) as string
  await app.store.write((tx) => tx.portal.deleteSession(sha256(id)))
  return { status: 200, body: { signed_out: true, return_url: session.return_url }, headers: { 'set-cookie': clearedCookie(viaHttps(app, ctx)) } }
}

/**
 * The catalogue by id, for the items' names and the "add an item" choices (only `subscribable`
 * ones can be added: the API refuses the others with its own message).
 */
async function catalogue(app: App): Promise<CatalogueEntry[]> {
  const out: CatalogueEntry[] = []
  let after = 0
  for (;;) {
    const page: Subscribable[] = await app.store.catalog.listSubscribables(after, 100)
    for (const s of page) out.push({ id: s.id, sku: s.sku, name: s.name, subscribable: s.subscribable })
    if (page.length < 100 || out.length >= CATALOGUE_LIMIT) return out.slice(0, CATALOGUE_LIMIT)
    after = (page[page.length - 1] as Subscribable).id
  }
}

interface CatalogueEntry {
  readonly id: number
  readonly sku: string
  readonly name: string
  readonly subscribable: boolean
}
