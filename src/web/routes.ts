import type { Handler, Route } from '../http/types.ts'
import type { App } from '../api/kit/app.ts'
import { endpoint } from '../api/kit/endpoint.ts'
import { negotiateLanguage } from '../domain/messages.ts'
import { FAVICON, createAssets, serveAsset, type Assets } from './assets.ts'
import { HTML_TYPE, PAGE_HEADERS } from './page-headers.ts'
import { renderShell, themeCss, type WebApp } from './shell.ts'
import { openPortalLink } from './portal/open-link.ts'
import { showPortalSession, signOutOfPortal } from './portal/session-api.ts'
import { updatePortalSettings } from './portal/settings-api.ts'

/**
 * The web console (C14): the staff dashboard's and the portal's pages, their assets, and the
 * portal's session routes. The pages call the JSON APIs like any client (docs/console.md).
 */
export function webRoutes(app: App): Route[] {
  const assets = createAssets({ 'theme.css': themeCss(app.config) })
  return [
    ['GET', '/', () => ({ status: 302, body: '', contentType: HTML_TYPE, headers: { ...PAGE_HEADERS, location: '/admin/' } })],
    ['GET', '/assets/:name', serveAsset(assets)],
    ['GET', '/favicon.ico', serveAsset(assets, FAVICON)],
    ['GET', '/admin', shell(assets, 'admin', app)],
    ['GET', '/portal', shell(assets, 'portal', app)],
    ['GET', '/portal/sessions/:token', openPortalLink(app, assets)],
    ['GET', '/portal/api/session', endpoint(app, showPortalSession(app))],
    ['POST', '/portal/api/sign_out', endpoint(app, signOutOfPortal(app))],
    ['PATCH', '/portal/api/settings', endpoint(app, updatePortalSettings(app))],
  ]
}

/** `/admin/` and `/portal/` (the router treats a trailing slash as none). */
function shell(assets: Assets, webApp: WebApp, app: App): Handler {
  return async (ctx) => renderShell(webApp, negotiateLanguage(ctx.req.headers['accept-language'] as string | undefined), app.config, await assets.all())
}
