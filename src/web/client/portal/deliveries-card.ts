import { h } from '../lib/dom.ts'
import { formatDate, formatDateTime } from '../lib/format.ts'
import { itemsSummary, nextDelivery, totalText } from './describe.ts'
import type { Installment, Portal } from './portal.ts'
import { card, type SubscriptionView } from './view.ts'

/**
 * The "Deliveries" card (C18): upcoming (the next date the subscription will act on, at today's
 * prices, and installments still open) and past ones (sent, or given up), each with its state and
 * the total it froze when it was made (C16). Installments come newest first, a page at a time.
 */
export function deliveriesCard(view: SubscriptionView): HTMLElement {
  const { t } = view.portal
  const open = view.installments.filter((i) => i.state === 'pending' || i.state === 'retrying')
  const past = view.installments.filter((i) => i.state === 'fulfilled' || i.state === 'abandoned')
  const planned = plannedDelivery(view)
  const upcoming = [...(planned === null ? [] : [planned]), ...open.map((i) => delivery(view.portal, i))]
  return card('deliveries', t('portal.deliveries'), [
    h('h3', null, t('portal.upcoming')),
    upcoming.length === 0 ? h('p', null, t('portal.no_upcoming')) : h('ul', { class: 'deliveries' }, upcoming),
    h('h3', null, t('portal.past')),
    past.length === 0 ? h('p', null, t('portal.no_past')) : h('ul', { class: 'deliveries' }, past.map((i) => delivery(view.portal, i))),
    view.moreInstallments ? h('p', null, h('button', { type: 'button', id: 'older-deliveries', class: 'secondary', onclick: () => view.loadOlderInstallments() }, t('portal.show_older'))) : null,
  ])
}

/** The next delivery the subscription will make, as it stands now: no installment exists for it yet. */
function plannedDelivery(view: SubscriptionView): HTMLElement | null {
  const { portal, sub } = view
  const acting = (sub.state === 'active' || sub.state === 'pending_cancellation') && !sub.paused
  if (!acting || sub.actionable_date === null || sub.line_items.length === 0) return null
  const total = totalText(portal, sub)
  return h('li', { class: 'delivery', id: 'delivery-planned' },
    h('p', { class: 'delivery-head' }, h('strong', null, nextDelivery(portal, sub)), ' ', h('span', { class: 'badge planned' }, portal.t('portal.scheduled'))),
    h('p', null, itemsSummary(portal, sub)),
    total === undefined ? null : h('p', { class: 'price' }, portal.t('portal.at_current_prices', { total })))
}

function delivery(portal: Portal, i: Installment): HTMLElement {
  const { t, page } = portal
  const items = i.line_items.map((l) => `${l.name} × ${l.quantity}`).join(', ')
  const total = totalText(portal, i)
  return h('li', { class: 'delivery', id: `delivery-${i.id}`, tabindex: '-1' },
    h('p', { class: 'delivery-head' },
      h('strong', null, formatDate(i.due_date, page.language)), ' ',
      h('span', { class: `badge ${i.state}` }, t(`portal.delivery_state.${i.state}`))),
    h('p', null, items),
    total === undefined ? null : h('p', { class: 'price' }, total),
    i.state === 'retrying' && i.retry_at !== null ? h('p', { class: 'muted' }, t('portal.next_try', { date: formatDateTime(i.retry_at, page.language) })) : null)
}
