/**
 * The customer portal (C14). The page was opened through a one-time link, which left a session
 * cookie; everything here calls the customer API /api/v1 with that cookie, and every write also
 * sends the session's CSRF token (X-CSRF-Token), which only this page can read.
 */
import './main.css'
import { ApiError, createApi } from '../lib/api.ts'
import { h, replace } from '../lib/dom.ts'
import { translator } from '../lib/i18n.ts'
import { pageContext } from '../lib/page.ts'
import { showList } from './list-view.ts'
import { showSubscription } from './detail-view.ts'
import type { Portal, SessionInfo } from './portal.ts'
import { PORTAL_STRINGS } from './strings.ts'

async function start(): Promise<void> {
  const page = pageContext()
  const t = translator(page.language, PORTAL_STRINGS)
  let csrf = ''
  const api = createApi((): Record<string, string> => (csrf === '' ? {} : { 'x-csrf-token': csrf }), t('common.network_error'))
  const ended = (): void => {
    replace(page.nav)
    const heading = h('h1', { tabindex: '-1' }, t('portal.session_ended'))
    replace(page.main, heading, h('p', null, t('portal.session_ended_body')))
    heading.focus()
  }
  let session: SessionInfo
  try {
    session = await api.get<SessionInfo>('/portal/api/session')
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return ended()
    replace(page.main, h('p', { class: 'problem', role: 'alert' }, err instanceof Error ? err.message : t('common.error')))
    return
  }
  csrf = session.csrf_token
  const portal: Portal = {
    page,
    t,
    api,
    session,
    sessionEnded: ended,
    stillSignedIn: () => api.get('/portal/api/session').then(() => true, () => false),
  }
  renderNav(portal)
  const route = (): void => {
    // Each view draws into a container of its own: one still loading when the customer moves on
    // draws into a container no longer on the page, never over the view that replaced it.
    const container = h('div')
    replace(page.main, container)
    const view: Portal = { ...portal, page: { ...page, main: container } }
    const match = /^#\/subscriptions\/([^/]+)$/.exec(location.hash)
    void (match ? showSubscription(view, decodeURIComponent(match[1] as string)) : showList(view))
  }
  window.addEventListener('hashchange', route)
  route()
}

function renderNav(portal: Portal): void {
  const { t, page, session, api } = portal
  const signOut = async (): Promise<void> => {
    try {
      await api.post('/portal/api/sign_out')
    } catch {
      // Signed out or not, the page forgets the customer: the cookie is HttpOnly, the session ends server-side at the latest after 12 h idle.
    }
    replace(page.nav, shopLink())
    const heading = h('h1', { tabindex: '-1' }, t('portal.signed_out'))
    replace(page.main, heading)
    heading.focus()
  }
  const shopLink = (): HTMLElement | null => (session.return_url === null ? null : h('a', { href: session.return_url }, t('portal.back_to_shop')))
  replace(page.nav,
    session.user.email === null ? null : h('span', { class: 'muted' }, t('portal.signed_in_as', { email: session.user.email })),
    shopLink(),
    h('button', { type: 'button', class: 'link', id: 'sign-out', onclick: signOut }, t('common.sign_out')))
}

void start()
