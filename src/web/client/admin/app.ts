/**
 * The dashboard's frame: sign-in, the section links, and drawing the page the URL's fragment
 * names. Each page reads the admin API afresh when drawn; nothing is cached between pages.
 */
import { h, replace } from '../lib/dom.ts'
import type { PageContext } from '../lib/page.ts'
import { ApiError, whenUnauthorized } from './api.ts'
import * as router from './router.ts'
import * as session from './session.ts'
import { t, type AdminKey } from './strings.ts'
import { signInView } from './sign-in.ts'
import type { Page, PageCtx } from './page.ts'
import { overviewPage } from './pages/overview.ts'
import { subscriptionsPage } from './pages/subscriptions.ts'
import { subscriptionPage } from './pages/subscription.ts'
import { customersPage, customerPage } from './pages/customers.ts'
import { catalogPage } from './pages/catalog.ts'
import { installmentsPage } from './pages/installments.ts'
import { webhooksPage, deliveriesPage } from './pages/webhooks.ts'
import { tokensPage } from './pages/tokens.ts'

/**
 * The sections: route, name, list page, detail page. Admin tokens are scope admin's alone in the
 * API (C13: a `read` token may not list them), so a `read` session is not offered the link; the
 * URL typed in shows the API's 403.
 */
const SECTIONS: readonly [route: string, key: AdminKey, list: Page, detail?: Page, adminOnly?: boolean][] = [
  ['', 'admin.nav.overview', overviewPage],
  ['subscriptions', 'admin.nav.subscriptions', subscriptionsPage, subscriptionPage],
  ['customers', 'admin.nav.customers', customersPage, customerPage],
  ['catalog', 'admin.nav.catalog', catalogPage],
  ['installments', 'admin.nav.installments', installmentsPage],
  ['webhooks', 'admin.nav.webhooks', webhooksPage, deliveriesPage],
  ['tokens', 'admin.nav.tokens', tokensPage, undefined, true],
]

export function startApp(page: PageContext): void {
  let drawing = 0
  let flash: string | undefined
  let signedOutBecause: string | undefined

  const draw = async (): Promise<void> => {
    const mine = ++drawing
    if (session.token() === null) {
      replace(page.nav)
      replace(page.main, signInView(() => void draw(), signedOutBecause))
      signedOutBecause = undefined
      document.title = `${t('admin.signIn.title')} · ${page.shopName}`
      return
    }
    const where = router.current()
    const [section = '', ...params] = where.parts
    const found = SECTIONS.find(([route]) => route === section)
    drawNav(page.nav, section, () => {
      session.signOut()
      location.hash = ''
      void draw()
    })
    const ctx: PageCtx = {
      params,
      query: where.query,
      canWrite: session.canWrite(),
      refresh: (message) => {
        flash = message
        void draw()
      },
    }
    const announce = flash
    flash = undefined
    let view
    try {
      if (!found) throw new ApiError(404, t('admin.notFound'))
      const render = params.length > 0 ? found[3] : found[2]
      if (!render) throw new ApiError(404, t('admin.notFound'))
      view = await render(ctx)
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return // signed out: drawn by the handler below
      const title = err instanceof ApiError && err.status === 404 ? t('admin.notFound') : found ? t(found[1]) : t('admin.title')
      view = { title, content: h('div', { class: 'problem', role: 'alert' }, err instanceof Error ? err.message : String(err)) }
    }
    if (mine !== drawing) return // a newer navigation won
    const heading = h('h1', { tabindex: '-1' }, view.title)
    const notice = announce === undefined ? null : h('div', { class: 'notice', role: 'status', tabindex: '-1' }, announce)
    replace(page.main, heading, session.canWrite() ? null : h('p', { class: 'read-only' }, t('admin.readOnly')), notice, view.content)
    document.title = `${view.title} · ${page.shopName}`
    ;(notice ?? heading).focus()
  }

  whenUnauthorized((err) => {
    session.signOut()
    signedOutBecause = err.message
    void draw()
  })
  window.addEventListener('hashchange', () => void draw())
  void draw()
}

function drawNav(nav: HTMLElement, active: string, signOut: () => void): void {
  const who = session.who()
  const name = who === null ? '' : who.id === null ? t('admin.session.configured') : `${who.label ?? who.prefix ?? ''} (${who.scope})`
  replace(nav,
    h('ul', { class: 'admin-nav' }, SECTIONS.filter(([, , , , adminOnly]) => !adminOnly || session.canWrite()).map(([route, key]) =>
      h('li', null, h('a', { href: router.href(...(route ? [route] : [])), 'aria-current': route === active ? 'page' : null }, t(key))))),
    h('span', { class: 'muted session' }, t('admin.session', { token: name })),
    h('button', { type: 'button', class: 'button secondary', onclick: signOut }, t('common.sign_out')))
}
