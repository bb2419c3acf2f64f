import { ApiError } from '../lib/api.ts'
import { h, replace } from '../lib/dom.ts'
import { frequency, itemsSummary, nextDelivery, stateBadge, totalText } from './describe.ts'
import type { Portal, Subscription } from './portal.ts'
import { emailSettings } from './settings-view.ts'

interface Page {
  readonly subscriptions: Subscription[]
  readonly pages: number
}

/** `#/`: every subscription of the customer, each with its items, next date and state. */
export async function showList(portal: Portal): Promise<void> {
  const { t, page } = portal
  const heading = h('h1', { tabindex: '-1' }, t('portal.heading'))
  replace(page.main, heading, h('p', { class: 'loading', role: 'status' }, t('common.loading')))
  let subscriptions: Subscription[]
  try {
    subscriptions = await allSubscriptions(portal)
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return portal.sessionEnded()
    replace(page.main, heading, h('p', { class: 'problem', role: 'alert' }, err instanceof Error ? err.message : t('common.error')))
    return
  }
  const cards = subscriptions.map((sub) => {
    const total = totalText(portal, sub)
    return h('article', { class: 'card', 'aria-labelledby': `sub-${sub.id}` },
      h('h2', { id: `sub-${sub.id}` }, itemsSummary(portal, sub)),
      h('p', null, stateBadge(portal, sub), ' ', h('span', { class: 'muted' }, t('portal.subscription', { id: sub.id }))),
      h('dl', { class: 'facts' },
        h('dt', null, t('field.actionable_date')), h('dd', null, nextDelivery(portal, sub)),
        h('dt', null, t('portal.frequency')), h('dd', null, frequency(portal, sub)),
        total === undefined ? null : [h('dt', null, t('portal.next_total')), h('dd', null, total)]),
      h('a', { class: 'button secondary', href: `#/subscriptions/${sub.id}` }, t('portal.manage', { id: sub.id })))
  })
  replace(page.main, heading, cards.length === 0 ? h('p', null, t('portal.empty')) : h('div', { class: 'grid' }, cards),
    // A customer the shop knows no address of gets no mail (C17): nothing to set.
    portal.session.user.email === null ? null : emailSettings(portal))
}

/** The customer API pages by 100 at most (C3); a customer with more gets them all. */
async function allSubscriptions(portal: Portal): Promise<Subscription[]> {
  const out: Subscription[] = []
  for (let p = 1; ; p++) {
    const page = await portal.api.get<Page>(`/api/v1/subscriptions?per_page=100&page=${p}`)
    out.push(...page.subscriptions)
    if (p >= page.pages) return out
  }
}
