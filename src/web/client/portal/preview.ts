import type { ConfirmSpec } from '../lib/dialog.ts'
import { h } from '../lib/dom.ts'
import { frequency, itemsSummary, nextDelivery, totalText } from './describe.ts'
import type { Key, Portal, Subscription } from './portal.ts'

/**
 * What a change will do, from its dry run (C18): the subscription as the API would leave it,
 * said in the facts that move: its state, the next delivery (always: "Resume now: next delivery
 * on 26 November"), the frequency, the items and what the next delivery costs.
 */
export function preview(portal: Portal, before: Subscription, after: Subscription): HTMLElement {
  const { t } = portal
  const rows: [Key, string][] = []
  const state = (s: Subscription): string => t(s.state === 'active' && s.paused ? 'state.paused' : `state.${s.state}`)
  if (state(before) !== state(after)) rows.push(['portal.status', state(after)])
  rows.push(['portal.next_delivery', nextDelivery(portal, after)])
  if (frequency(portal, before) !== frequency(portal, after)) rows.push(['portal.frequency', frequency(portal, after)])
  if (itemsSummary(portal, before) !== itemsSummary(portal, after)) rows.push(['portal.items', itemsSummary(portal, after)])
  const total = totalText(portal, after)
  if (total !== undefined) rows.push(['portal.next_total', total])
  return h('div', { class: 'preview' },
    h('h3', null, t('portal.after_change')),
    h('dl', { class: 'facts' }, rows.map(([label, value]) => [h('dt', null, t(label)), h('dd', null, value)])))
}

/** A change's confirmation: its question and answer, "Go back", and what its dry run says it will do. */
export function asking(portal: Portal, title: string, confirm: string, danger = false): (before: Subscription, after: Subscription) => ConfirmSpec {
  return (before, after) => ({ title, confirm, dismiss: portal.t('portal.go_back'), details: preview(portal, before, after), danger })
}
