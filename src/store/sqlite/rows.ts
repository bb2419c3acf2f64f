import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { Address, LineItem, PricedLineItem, Subscription } from '../../domain/types.ts'

/** node:sqlite rows are null-prototype objects of SQL values; these turn them into domain types. */
export type Row = Record<string, string | number | bigint | null | Uint8Array>

/** A row read with `setReturnArrays(true)`: its values in the order of the statement's columns. */
export type Values = readonly (string | number | bigint | null | Uint8Array)[]

/**
 * The columns every subscription read selects, in this order. Rows come back as arrays: node:sqlite
 * builds an object with twenty properties per row otherwise, the largest cost of a read (issue 6).
 */
export { SUBSCRIPTION_COLUMNS, LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_FROM } from '../columns.ts'

/**
 * A statement whose rows come back as arrays (`Values`). Every statement a request runs on a hot
 * path reads this way: an object row costs node:sqlite more, and it is allocated where V8 keeps
 * long-lived objects, so under load those rows cost a full collection (a pause of several ms)
 * every few seconds; arrays are collected young (issue 6, measured: one `SELECT 1` per POST
 * create made four in eight seconds, none as an array).
 */
export function prepareValues(db: DatabaseSync, sql: string): StatementSync {
  const stmt = db.prepare(sql)
  stmt.setReturnArrays(true)
  return stmt
}

/** `alias.a, alias.b, …` for a SELECT list. */
export const columns = (list: readonly string[], alias = ''): string => list.map((c) => (alias ? `${alias}.${c}` : c)).join(', ')

export function subscriptionOf(a: Values): Subscription {
  return {
    id: a[0] as number,
    user_id: a[1] as number,
    state: a[2] as Subscription['state'],
    paused: a[3] === 1,
    interval_length: a[4] as number,
    interval_units: a[5] as Subscription['interval_units'],
    actionable_date: a[6] as string | null,
    anchor_day: a[7] as number | null,
    end_date: a[8] as string | null,
    skip_count: a[9] as number,
    successive_skip_count: a[10] as number,
    payment_method_id: a[11] as number | null,
    payment_source_id: a[12] as number | null,
    currency: a[13] as string,
    processing_state: a[14] as Subscription['processing_state'],
    shipping_address: a[15] === null ? null : (JSON.parse(a[15] as string) as Address),
    billing_address: a[16] === null ? null : (JSON.parse(a[16] as string) as Address),
    created_on: a[17] as string,
    created_at: a[18] as string,
    updated_at: a[19] as string,
  }
}

export function lineItemOf(a: Values): LineItem {
  return {
    id: a[0] as number,
    subscription_id: a[1] as number,
    subscribable_id: a[2] as number,
    quantity: a[3] as number,
    created_at: a[4] as string,
    updated_at: a[5] as string,
    one_time: a[6] === 1,
  }
}

/** A row of PRICED_LINE_ITEM_COLUMNS (columns.ts): the line item, then its currency, unit price and discount. */
export function pricedLineItemOf(a: Values): PricedLineItem {
  return { ...lineItemOf(a), currency: a[7] as string, unit_price: a[8] as number | null, discount_bp: a[9] as number }
}

/** A plain object copy (rows have no prototype, which surprises deepEqual and spread users). */
export function plain<T>(r: Row): T {
  return { ...r } as T
}

export { nowIso } from '../now.ts'
