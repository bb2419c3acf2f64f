import type { Address, LineItem, PricedLineItem, Subscription } from '../../domain/types.ts'

/**
 * Rows as `pg` answers them (sql.ts: int8 and numeric as numbers, booleans as booleans, text as
 * strings), and the mappers that turn them into domain values. Stored JSON is text (migrations.ts)
 * and is parsed here, as the SQLite store does.
 */

/** The columns every subscription read selects; `subscriptionOf` maps them. */
export { SUBSCRIPTION_COLUMNS, LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_FROM } from '../columns.ts'

/** `alias.a, alias.b, …` for a SELECT list. */
export const columns = (list: readonly string[], alias = ''): string => list.map((c) => (alias ? `${alias}.${c}` : c)).join(', ')

/** A subscriptions row: the domain value with its addresses still JSON text. */
export type SubscriptionRow = Omit<Subscription, 'shipping_address' | 'billing_address'> & {
  readonly shipping_address: string | null
  readonly billing_address: string | null
}

export type LineItemRow = LineItem

const addressOf = (json: string | null): Address | null => (json === null ? null : (JSON.parse(json) as Address))

/** A fresh object with the domain's keys in the domain's order, whatever else the row carried. */
export function subscriptionOf(r: SubscriptionRow): Subscription {
  return {
    id: r.id,
    user_id: r.user_id,
    state: r.state,
    paused: r.paused,
    interval_length: r.interval_length,
    interval_units: r.interval_units,
    actionable_date: r.actionable_date,
    anchor_day: r.anchor_day,
    end_date: r.end_date,
    skip_count: r.skip_count,
    successive_skip_count: r.successive_skip_count,
    payment_method_id: r.payment_method_id,
    payment_source_id: r.payment_source_id,
    currency: r.currency,
    processing_state: r.processing_state,
    shipping_address: addressOf(r.shipping_address),
    billing_address: addressOf(r.billing_address),
    created_on: r.created_on,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

export function lineItemOf(r: LineItemRow): LineItem {
  return {
    id: r.id,
    subscription_id: r.subscription_id,
    subscribable_id: r.subscribable_id,
    quantity: r.quantity,
    created_at: r.created_at,
    updated_at: r.updated_at,
    one_time: r.one_time,
  }
}

/** A priced line item (C16) with the domain's keys in order, whatever else the row carried. */
export function pricedLineItemOf(r: PricedLineItem): PricedLineItem {
  return { ...lineItemOf(r), currency: r.currency, unit_price: r.unit_price === null ? null : Number(r.unit_price), discount_bp: r.discount_bp }
}

export { nowIso } from '../now.ts'
