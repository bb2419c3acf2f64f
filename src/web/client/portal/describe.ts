import { h } from '../lib/dom.ts'
import { formatDate, formatMoney, formatPercent } from '../lib/format.ts'
import { pluralKey } from '../lib/i18n.ts'
import type { Portal, Priced, Subscription, Totals } from './portal.ts'

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

/** A C16 amount in the page's language, or undefined when there is none (no price in the catalog, or a server before C16). */
export function money(portal: Portal, amount: string | null | undefined, currency: string): string | undefined {
  return amount === null || amount === undefined ? undefined : formatMoney(amount, currency, portal.page.language)
}

/** "2 × $12.50, 10% off = $22.50": a line's price as the catalog says now, or as an installment froze it; undefined without one. */
export function linePrice(portal: Portal, line: Priced & { readonly quantity: number }, currency: string): string | undefined {
  const price = money(portal, line.price, currency)
  const total = money(portal, line.total, currency)
  if (price === undefined || total === undefined) return undefined
  const discounted = line.discount_percent !== undefined && Number(line.discount_percent) > 0
  return discounted
    ? portal.t('portal.line_price_discounted', { quantity: line.quantity, price, total, percent: formatPercent(line.discount_percent as string, portal.page.language) })
    : portal.t('portal.line_price', { quantity: line.quantity, price, total })
}

/** "$22.50 (You save $2.50)": what a delivery costs, undefined when any line has no price. */
export function totalText(portal: Portal, totals: Totals): string | undefined {
  const total = money(portal, totals.total, totals.currency)
  if (total === undefined) return undefined
  const saved = money(portal, totals.discount_total, totals.currency)
  return saved !== undefined && Number(totals.discount_total) > 0 ? `${total} (${portal.t('portal.you_save', { amount: saved })})` : total
}
