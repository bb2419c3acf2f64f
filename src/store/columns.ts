import type { Subscribable, SubscriptionPatch } from '../domain/types.ts'
import { formatAmount, formatPercent, minorUnitOf } from '../domain/money.ts'
import { priceJoin } from './money-sql.ts'

/**
 * Facts of the schema both backends share (sqlite/migrations.ts, postgres/migrations.ts): the
 * columns a subscription or line item read selects, in the order the row mappers read them, and
 * the column each field of a subscription patch is written to.
 */
export const SUBSCRIPTION_COLUMNS = [
  'id', 'user_id', 'state', 'paused', 'interval_length', 'interval_units', 'actionable_date', 'anchor_day', 'end_date',
  'skip_count', 'successive_skip_count', 'payment_method_id', 'payment_source_id', 'currency', 'processing_state',
  'shipping_address', 'billing_address', 'created_on', 'created_at', 'updated_at',
] as const

export const LINE_ITEM_COLUMNS = ['id', 'subscription_id', 'subscribable_id', 'quantity', 'created_at', 'updated_at'] as const

export const COLUMN_OF: Record<keyof SubscriptionPatch, string> = {
  state: 'state', paused: 'paused', interval_length: 'interval_length', interval_units: 'interval_units',
  actionable_date: 'actionable_date', anchor_day: 'anchor_day', end_date: 'end_date', skip_count: 'skip_count',
  successive_skip_count: 'successive_skip_count', payment_method_id: 'payment_method_id',
  payment_source_id: 'payment_source_id', currency: 'currency', processing_state: 'processing_state',
  shipping_address: 'shipping_address', billing_address: 'billing_address',
}

/** A catalog item as both backends read it: its columns, and its prices as [currency, minor units] pairs (JSON text on SQLite). */
export interface SubscribableRow {
  readonly id: number
  readonly sku: string
  readonly name: string
  readonly subscribable: boolean
  readonly discount_bp: number
  readonly created_at: string
  readonly updated_at: string
  readonly prices: string | readonly (readonly [string, number])[] | null
}

/** The admin API's catalog item (C11, C16), keys in its order, amounts as C16's strings. */
export function subscribableOf(r: SubscribableRow): Subscribable {
  const pairs = (typeof r.prices === 'string' ? JSON.parse(r.prices) : r.prices ?? []) as [string, number][]
  return {
    id: r.id,
    sku: r.sku,
    name: r.name,
    subscribable: r.subscribable,
    prices: Object.fromEntries(pairs.map(([currency, amount]) => [currency, formatAmount(amount, currency)])),
    discount_percent: formatPercent(r.discount_bp),
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

/**
 * A line item priced as the catalog says now (C16), for either dialect: LINE_ITEM_COLUMNS of `li`,
 * then its subscription's currency, the unit price there in minor units (null: none) and the
 * item's discount in basis points; `s` is the subscription, `c` the catalog item, `p` the price.
 */
export const PRICED_LINE_ITEM_COLUMNS = `${LINE_ITEM_COLUMNS.map((c) => `li.${c}`).join(', ')}, s.currency AS currency, p.amount AS unit_price, c.discount_bp AS discount_bp`
export const PRICED_LINE_ITEM_FROM = `line_items li JOIN subscriptions s ON s.id = li.subscription_id ${priceJoin('s.currency')}`

/**
 * A price row's values after its key (migration 10): the amount in minor units, as shown, and the
 * currency's minor unit, which SQL reads instead of formatting them again for every line.
 */
export function priceColumns(currency: string, minor: bigint): [bigint, string, number] {
  return [minor, formatAmount(minor, currency), minorUnitOf(currency)]
}
