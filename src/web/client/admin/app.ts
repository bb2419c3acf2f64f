/**
 * The dashboard's frame: sign-in, the section links, the search box, and drawing the page the
 * URL's fragment names. Each page reads the admin API afresh when drawn; nothing is cached
 * between pages.
 */
import { h, replace } from '../lib/dom.ts'
import type { PageContext } from '../lib/page.ts'
import { ApiError, problemLines, whenUnauthorized } from './api.ts'
import * as router from './router.ts'
import * as session from './session.ts'
import { t, type AdminKey } from './strings.ts'
import { signInView } from './sign-in.ts'
import type { Page, PageCtx } from './page.ts'
import { overviewPage } from './pages/overview.ts'
import { subscriptionsPage } from './pages/subscriptions.ts'
import { subscriptionPage } from './pages/subscription.ts'
import { customersPage } from './pages/customers.ts'
import { customerPage } from './pages/customer.ts'
import { catalogPage } from './pages/catalog.ts'
import { installmentsPage } from './pages/installments.ts'
import { webhooksPage, deliveriesPage } from './pages/webhooks.ts'
import { tokensPage } from './pages/tokens.ts'
import { searchForm, searchPage } from './pages/search.ts'
import { emailsPage } from './pages/emails.ts'

interface Section {
  readonly route: string
  readonly key: AdminKey
  readonly list: Page
  readonly detail?: Page
  /**
   * Admin tokens are scope admin's alone in the API (C13: a `read` token may not list them), so a
   * `read` session is not offered the link; the URL typed in shows the API's 403.
   */
  readonly adminOnly?: boolean
  /** Reached otherwise than by the navigation (the search box). */
  readonly hidden?: boolean
}

const SECTIONS: readonly Section[] = [
  { route: '', key: 'admin.nav.overview', list: overviewPage },
  { route: 'subscriptions', key: 'admin.nav.subscriptions', list: subscriptionsPage, detail: subscriptionPage },
  { route: 'customers', key: 'admin.nav.customers', list: customersPage, detail: customerPage },
  { route: 'catalog', key: 'admin.nav.catalog', list: catalogPage },
  { route: 'installments', key: 'admin.nav.installments', list: installmentsPage },
  { route: 'webhooks', key: 'admin.nav.webhooks', list: webhooksPage, detail: deliveriesPage },
  { route: 'emails', key: 'admin.nav.emails', list: emailsPage },
  { route: 'tokens', key: 'admin.nav.tokens', list: tokensPage, adminOnly: true },
  { route: 'search', key: 'admin.search.title', list: searchPage, hidden: true },
]

export function startApp(page: PageContext): void {
  let drawing = 0
  let flash: { text: string; failed: boolean } | undefined
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
    const [route = '', ...params] = where.parts
    const found = SECTIONS.find((s) => s.route === route)
    drawNav(page.nav, route, () => {
      session.signOut()
      location.hash = ''
      void draw()
    })
    const ctx: PageCtx = {
      params,
      query: where.query,
      canWrite: session.canWrite(),
      refresh: (message, failed = false) => {
        flash = message === undefined ? undefined : { text: message, failed }
        void draw()
      },
    }
    const announce = flash
    flash = undefined
    let view
    try {
      const render = found && (params.length > 0 ? found.detail : found.list)
      if (!render) throw new ApiError(404, t('admin.notFound'))
      view = await render(ctx)
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return // signed out: drawn by the handler below
      const title = err instanceof ApiError && err.status === 404 ? t('admin.notFound') : found ? t(found.key) : t('admin.title')
      view = { title, content: h('div', { class: 'problem', role: 'alert' }, problemLines(err).join(' ')) }
    }
    if (mine !== drawing) return // a newer navigation won
    const heading = h('h1', { tabindex: '-1' }, view.title)
    const notice = announce === undefined ? null
      : announce.failed ? h('div', { class: 'problem', role: 'alert', tabindex: '-1' }, announce.text)
        : h('div', { class: 'notice', role: 'status', tabindex: '-1' }, announce.text)
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

/**
 * The bar: the sections, a search box, the session. On a phone (main.css) all of it folds into
 * a menu that a button opens; it is drawn closed on every page.
 */
function drawNav(nav: HTMLElement, active: string, signOut: () => void): void {
  const who = session.who()
  const name = who === null ? '' : who.id === null ? t('admin.session.configured') : `${who.label ?? who.prefix ?? ''} (${who.scope})`
  const menuId = 'admin-menu'
  const toggle = h('button', { type: 'button', class: 'button secondary menu-toggle', 'aria-expanded': 'false', 'aria-controls': menuId }, t('admin.menu'))
  const links = SECTIONS.filter((s) => !s.hidden && (!s.adminOnly || session.canWrite()))
  const menu = h('div', { id: menuId, class: 'admin-menu' },
    h('ul', { class: 'admin-nav' }, links.map((s) =>
      h('li', null, h('a', { href: router.href(...(s.route ? [s.route] : [])), 'aria-current': s.route === active ? 'page' : null }, t(s.key))))),
    searchForm(),
    h('span', { class: 'muted session' }, t('admin.session', { token: name })),
    h('button', { type: 'button', class: 'button secondary', onclick: signOut }, t('common.sign_out')))
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true'
    toggle.setAttribute('aria-expanded', String(open))
    menu.classList.toggle('open', open)
  })
  replace(nav, toggle, menu)
}
