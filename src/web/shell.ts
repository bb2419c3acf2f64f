import type { Config } from '../config.ts'
import type { Reply } from '../http/types.ts'
import type { Language } from '../domain/messages.ts'
import { assetUrl, type AssetMap } from './assets.ts'
import { HTML_TYPE, PAGE_HEADERS } from './page-headers.ts'
import { translator } from './client/lib/i18n.ts'

export type WebApp = 'admin' | 'portal'

export interface PageSpec {
  readonly app: WebApp
  readonly language: Language
  readonly config: Config
  readonly assets: AssetMap
  readonly title: string
  /** Markup inside `<main>`; the caller escapes what it puts in. */
  readonly main: string
  /** The app's script; the 410 page has none. */
  readonly script: boolean
  readonly status?: number
}

/**
 * A page of the console: the shop's bar, a `<main>` the app's script fills, and the branding as
 * `data-*` attributes on `<body>` (the policy forbids inline script, so nothing is passed in code).
 * The accent colour comes as theme.css, made from the configuration, so it needs no script either.
 */
export function renderPage(spec: PageSpec): Reply {
  const t = translator(spec.language)
  const { config, assets } = spec
  const logo = config.shopLogoUrl === undefined ? '' : `<img class="shop-logo" src="${escapeHtml(config.shopLogoUrl)}" alt="" width="32" height="32">`
  // An app's words in the page's language, when it ships them apart (client-bundle.ts), run first.
  const words = `${spec.app}-${spec.language}.js`
  const script = spec.script
    ? `${assets.has(words) ? `\n<script defer src="${escapeHtml(assetUrl(assets, words))}"></script>` : ''}\n<script defer src="${escapeHtml(assetUrl(assets, `${spec.app}.js`))}"></script>`
    : ''
  const html = `<!doctype html>
<html lang="${spec.language}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${spec.title} · ${config.shopName}`)}</title>
<link rel="stylesheet" href="${escapeHtml(assetUrl(assets, `${spec.app}.css`))}">
<link rel="stylesheet" href="${escapeHtml(assetUrl(assets, 'theme.css'))}">${script}
</head>
<body data-app="${spec.app}" data-shop-name="${escapeHtml(config.shopName)}" data-shop-logo-url="${escapeHtml(config.shopLogoUrl ?? '')}" data-shop-accent="${config.shopAccent}">
<a class="skip-link" href="#main">${escapeHtml(t('common.skip_to_content'))}</a>
<header class="shop-bar"><span class="shop-name">${logo}${escapeHtml(config.shopName)}</span><nav id="shop-nav" class="shop-nav" aria-label="${escapeHtml(spec.title)}"></nav></header>
<main id="main" tabindex="-1">${spec.main}</main>
</body>
</html>
`
  return { status: spec.status ?? 200, body: html, contentType: HTML_TYPE, headers: { ...PAGE_HEADERS } }
}

/** The shell of an app: the script replaces the loading line once it has what it shows. */
export function renderShell(app: WebApp, language: Language, config: Config, assets: AssetMap): Reply {
  const t = translator(language)
  const title = t(app === 'admin' ? 'shell.admin_title' : 'shell.portal_title')
  const main = `<p class="loading" role="status">${escapeHtml(t('common.loading'))}</p><noscript><p>${escapeHtml(t('common.noscript'))}</p></noscript>`
  return renderPage({ app, language, config, assets, title, main, script: true })
}

/** `:root { --accent }` from REPLENISH_SHOP_ACCENT (config.ts checked it reads on white). */
export function themeCss(config: Config): string {
  return `:root{--accent:${config.shopAccent}}\n`
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
}
