import { h } from '../lib/dom.ts'
import { formatDate } from '../lib/format.ts'
import { pluralKey } from '../lib/i18n.ts'
import type { Portal, Subscription } from './portal.ts'

/** An item's name from the catalogue, or its number when the shop removed it since. */
export function itemName(portal: Portal, subscribableId: number): string {
  return portal.session.catalogue.find((c) => c.id === subscribableId)?.name ?? portal.t('portal.item', { id: subscribableId })
}

/** Paused is a flag on an active subscription (C8), shown as a state of its own. */
export function stateBadge(portal: Portal, sub: Subscription): HTMLElement {
  const state = sub.state === 'active' && sub.paused ? 'paused' : sub.state
  return h('span', { class: `badge ${state}` }, portal.t(`state.${state}`))
}

export function nextDelivery(portal: Portal, sub: Subscription): string {
  const { t, page } = portal
  if (sub.paused) return sub.actionable_date === null ? t('portal.paused_indefinitely') : t('portal.paused_until', { date: formatDate(sub.actionable_date, page.language) })
  return sub.actionable_date === null ? t('portal.no_next_delivery') : formatDate(sub.actionable_date, page.language)
}

export function frequency(portal: Portal, sub: Subscription): string {
  return portal.t(pluralKey(`every.${sub.interval_units}`, sub.interval_length, portal.page.language), { count: sub.interval_length })
}

export function itemsSummary(portal: Portal, sub: Subscription): string {
  if (sub.line_items.length === 0) return portal.t('portal.no_items')
  return sub.line_items.map((li) => `${itemName(portal, li.subscribable_id)} × ${li.quantity}`).join(', ')
}
