import type { Address, LineItem, PaymentMethod, PaymentSource, Subscription, User } from '../../domain/types.ts'
import { basisPointsOf, minorOf } from '../../domain/money.ts'
import { priceColumns, subscribableOf, type SubscribableRow } from '../columns.ts'
import { SUBSCRIBABLE_SELECT } from './catalog.ts'
import type { ImportedApiKey, ImportedSubscription, ImportRecord, ImportRefusal, StoredImportRow } from '../../domain/import/records.ts'
import type { ImportsTx } from '../api.ts'
import type { Sql } from './sql.ts'

/**
 * The identity sequence of `table` moved to `id` unless it would already hand out a larger one
 * (an SQL expression). An imported row keeps its id, and the sequence knows nothing of it: without
 * this the next row made here would take it. Only moved forward, and only when needed: a sequence
 * never goes back under ids it handed out. `pg_sequence_last_value` is null before the first
 * `nextval`, when the next id is the first one (1).
 */
const moveSequencePast = (table: string, id: string): string =>
  `CASE WHEN coalesce(pg_sequence_last_value(pg_get_serial_sequence('${table}', 'id')::regclass), 0) < ${id}
    THEN setval(pg_get_serial_sequence('${table}', 'id'), ${id}) END`

/** An INSERT of one row with its given id (`RETURNING id`), then its table's sequence moved past it: one statement. */
const insertKeepingId = (table: string, insert: string): string =>
  `WITH ins AS (${insert} RETURNING id) SELECT ${moveSequencePast(table, 'ins.id')} FROM ins`

const USER = 'SELECT id, email, external_id, locale, email_notifications, created_at, updated_at FROM users WHERE id = $1'
const API_KEY = 'SELECT id, user_id, key_hash, prefix, created_at, updated_at FROM api_keys WHERE key_hash = $1'
const PAYMENT_METHOD = 'SELECT id, name, active, created_at, updated_at FROM payment_methods WHERE id = $1'
const PAYMENT_SOURCE = `SELECT id, user_id, payment_method_id, kind, brand, last_digits, month, year, gateway_reference, created_at, updated_at
  FROM payment_sources WHERE id = $1`
const SUBSCRIBABLE = `${SUBSCRIBABLE_SELECT} WHERE c.id = $1`
const SUBSCRIPTION = `SELECT id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, end_date, skip_count,
    successive_skip_count, payment_method_id, payment_source_id, currency, processing_state, shipping_address, billing_address,
    created_on, created_at, updated_at
  FROM subscriptions WHERE id = $1`
const LINE_ITEMS = 'SELECT id, subscription_id, subscribable_id, quantity, created_at, updated_at, one_time FROM line_items WHERE subscription_id = $1 ORDER BY id'

/** Email is unique under ASCII case-folding, as SQLite's NOCASE (the unique index is on `lower(email)`, collation "C"). */
const INSERT_USER = insertKeepingId('users', `INSERT INTO users (id, email, external_id, locale, email_notifications, created_at, updated_at)
  SELECT $1::bigint, $2::text, $3::text, $6::text, $7::boolean, $4::text, $5::text
  WHERE $2::text IS NULL OR NOT EXISTS (SELECT 1 FROM users WHERE lower(email) = lower($2::text COLLATE "C"))`)

const KEY_CHECKS = `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1) AS user_exists,
  $2::bigint IS NOT NULL AND EXISTS (SELECT 1 FROM api_keys WHERE id = $2) AS id_taken`
const INSERT_KEY = insertKeepingId('api_keys', 'INSERT INTO api_keys (id, user_id, key_hash, prefix, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)')
/** A key the line gives no id: the sequence picks it, and has nothing to catch up with. */
const INSERT_KEY_NEW_ID = 'INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)'

const INSERT_METHOD = insertKeepingId('payment_methods', 'INSERT INTO payment_methods (id, name, active, created_at, updated_at) VALUES ($1, $2, $3, $4, $5)')

const SOURCE_CHECKS = `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1) AS user_exists,
  EXISTS (SELECT 1 FROM payment_methods WHERE id = $2) AS method_exists`
const INSERT_SOURCE = insertKeepingId('payment_sources', `INSERT INTO payment_sources (id, user_id, payment_method_id, kind, brand, last_digits,
  month, year, gateway_reference, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`)

/** The catalog item with its discount and its prices (C16), unless its sku is taken. */
const INSERT_SUBSCRIBABLE = `WITH ins AS (
    INSERT INTO subscribables (id, sku, name, subscribable, discount_bp, discount_percent, created_at, updated_at)
      SELECT $1::bigint, $2::text, $3::text, $4::boolean, $5::integer, $10::text, $6::text, $7::text WHERE NOT EXISTS (SELECT 1 FROM subscribables WHERE sku = $2::text)
      RETURNING id
  ), prices AS (
    INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit)
      SELECT ins.id, u.currency, u.amount, u.amount_text, u.minor_unit FROM ins, unnest($8::text[], $9::bigint[], $11::text[], $12::integer[]) AS u(currency, amount, amount_text, minor_unit)
  )
  SELECT ${moveSequencePast('subscribables', 'ins.id')} FROM ins`

/**
 * What a subscription refers to, in one round trip: its user; its payment pairing (C6's, without
 * "active": an import keeps a plan whose method was retired since); and the first line item
 * (1-based) whose catalog item is missing, and the first whose id is taken.
 */
const SUBSCRIPTION_CHECKS = `SELECT EXISTS (SELECT 1 FROM users WHERE id = $1) AS user_exists,
  $2::bigint IS NULL OR EXISTS (SELECT 1 FROM payment_sources WHERE id = $2 AND user_id = $1 AND payment_method_id = $3) AS payment_pairs,
  (SELECT min(n) FROM unnest($4::bigint[]) WITH ORDINALITY AS c(id, n) WHERE (SELECT true FROM subscribables WHERE id = c.id) IS NULL) AS missing_item,
  (SELECT min(n) FROM unnest($5::bigint[]) WITH ORDINALITY AS l(id, n) WHERE (SELECT true FROM line_items WHERE id = l.id)) AS taken_item`

/**
 * A subscription and its line items, and both sequences moved past them. The processor's floor
 * starts at the date, as for a subscription made here.
 */
const INSERT_SUBSCRIPTION = `WITH s AS (
    INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, end_date,
      skip_count, successive_skip_count, payment_method_id, payment_source_id, currency, processing_state, shipping_address,
      billing_address, created_on, created_at, updated_at, due_floor)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $7)
    RETURNING id),
  li AS (
    INSERT INTO line_items (id, subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT l.id, $1::bigint, l.subscribable_id, l.quantity, l.created_at, l.updated_at
      FROM unnest($21::bigint[], $22::bigint[], $23::integer[], $24::text[], $25::text[]) AS l(id, subscribable_id, quantity, created_at, updated_at)
    RETURNING id)
  SELECT (SELECT ${moveSequencePast('subscriptions', 's.id')} FROM s),
    (SELECT ${moveSequencePast('line_items', 'm.id')} FROM (SELECT max(id) AS id FROM li) m WHERE m.id IS NOT NULL)`

/**
 * The report's counts of an import's subscriptions, added once for all of them rather than by
 * the row trigger (migration 17): this transaction's flag tells the trigger to leave them.
 */
const REPORT_LATER = `SELECT set_config('replenish.report_later', 'on', true)`
const REPORT_NOW = `SELECT report_subscriptions_added($1::bigint[]), set_config('replenish.report_later', 'off', true)`

interface SubscriptionRow extends Omit<Subscription, 'shipping_address' | 'billing_address'> {
  shipping_address: string | null
  billing_address: string | null
}

const addressOf = (text: string | null): Address | null => (text === null ? null : (JSON.parse(text) as Address))
const addressText = (a: Address | null): string | null => (a === null ? null : JSON.stringify(a))

const refuse = (field: string, problem: ImportRefusal['problem']): ImportRefusal => ({ field, problem })

/**
 * Rows brought in by an import (C13), with the ids, dates and counters they had elsewhere. Every
 * row keeps its given id (the identity columns are GENERATED BY DEFAULT), and its table's sequence
 * is moved past it in the inserting statement, so a new row never takes an imported one's id. No
 * event is written: an import brings rows that already existed, it changes none (docs/import.md).
 */
export function importsRepo(sql: Sql): ImportsTx {
  // The subscriptions this unit inserted: their report counts wait for finish() (migration 17).
  const added: number[] = []
  const storedSubscription = async (id: number): Promise<StoredImportRow | undefined> => {
    const r = await sql.one<SubscriptionRow>(SUBSCRIPTION, [id])
    if (r === undefined) return undefined
    const subscription: Subscription = { ...r, shipping_address: addressOf(r.shipping_address), billing_address: addressOf(r.billing_address) }
    return { subscription, line_items: await sql.rows<LineItem>(LINE_ITEMS, [id]) }
  }

  const insertSubscription = async ({ subscription: s, line_items }: ImportedSubscription): Promise<ImportRefusal | undefined> => {
    const items = line_items.map((l) => l.item)
    const checks = await sql.one<{ user_exists: boolean; payment_pairs: boolean; missing_item: number | null; taken_item: number | null }>(
      SUBSCRIPTION_CHECKS, [s.user_id, s.payment_source_id, s.payment_method_id, items.map((i) => i.subscribable_id), items.map((i) => i.id)])
    if (!checks?.user_exists) return refuse('user_id', 'does_not_exist')
    if (!checks.payment_pairs) return refuse('payment_source_type', 'invalid_payment')
    // Item by item, as the SQLite store checks them: its catalog item first, then its id.
    const { missing_item: missing, taken_item: taken } = checks
    if (missing !== null && (taken === null || missing <= taken)) return refuse('line_items.subscribable_id', 'does_not_exist')
    if (taken !== null) return refuse('line_items.id', 'other_subscription')
    if (added.length === 0) await sql.run(REPORT_LATER, [])
    await sql.run(INSERT_SUBSCRIPTION, [
      s.id, s.user_id, s.state, s.paused, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day, s.end_date,
      s.skip_count, s.successive_skip_count, s.payment_method_id, s.payment_source_id, s.currency, s.processing_state,
      addressText(s.shipping_address), addressText(s.billing_address), s.created_on, s.created_at, s.updated_at,
      items.map((i) => i.id), items.map((i) => i.subscribable_id), items.map((i) => i.quantity),
      items.map((i) => i.created_at), items.map((i) => i.updated_at),
    ])
    added.push(s.id)
    return undefined
  }

  const insertApiKey = async (k: ImportedApiKey): Promise<ImportRefusal | undefined> => {
    const checks = await sql.one<{ user_exists: boolean; id_taken: boolean }>(KEY_CHECKS, [k.user_id, k.id])
    if (!checks?.user_exists) return refuse('user_id', 'does_not_exist')
    if (checks.id_taken) return refuse('id', 'taken')
    if (k.id === null) await sql.run(INSERT_KEY_NEW_ID, [k.user_id, k.key_hash, k.prefix, k.created_at, k.updated_at])
    else await sql.run(INSERT_KEY, [k.id, k.user_id, k.key_hash, k.prefix, k.created_at, k.updated_at])
    return undefined
  }

  return {
    async stored(record: ImportRecord): Promise<StoredImportRow | undefined> {
      switch (record.type) {
        case 'user': return sql.one<User>(USER, [record.row.id])
        case 'api_key': return sql.one<ImportedApiKey>(API_KEY, [record.row.key_hash])
        case 'payment_method': return sql.one<PaymentMethod>(PAYMENT_METHOD, [record.row.id])
        case 'payment_source': return sql.one<PaymentSource>(PAYMENT_SOURCE, [record.row.id])
        case 'subscribable': {
          const row = await sql.one<SubscribableRow>(SUBSCRIBABLE, [record.row.id])
          return row && subscribableOf(row)
        }
        case 'subscription': return storedSubscription(record.row.subscription.id)
      }
    },

    async insert(record: ImportRecord): Promise<ImportRefusal | undefined> {
      switch (record.type) {
        case 'user': {
          const u = record.row
          const inserted = await sql.one(INSERT_USER, [u.id, u.email, u.external_id, u.created_at, u.updated_at, u.locale, u.email_notifications])
          return inserted === undefined ? refuse('email', 'taken') : undefined
        }
        case 'api_key': return insertApiKey(record.row)
        case 'payment_method': {
          const m = record.row
          await sql.run(INSERT_METHOD, [m.id, m.name, m.active, m.created_at, m.updated_at])
          return undefined
        }
        case 'payment_source': {
          const s = record.row
          const checks = await sql.one<{ user_exists: boolean; method_exists: boolean }>(SOURCE_CHECKS, [s.user_id, s.payment_method_id])
          if (!checks?.user_exists) return refuse('user_id', 'does_not_exist')
          if (!checks.method_exists) return refuse('payment_method_id', 'does_not_exist')
          await sql.run(INSERT_SOURCE, [
            s.id, s.user_id, s.payment_method_id, s.kind, s.brand, s.last_digits, s.month, s.year, s.gateway_reference, s.created_at, s.updated_at,
          ])
          return undefined
        }
        case 'subscribable': {
          const c = record.row
          const prices = Object.entries(c.prices).map(([currency, amount]) => [currency, ...priceColumns(currency, minorOf(amount) as bigint)] as const)
          const inserted = await sql.one(INSERT_SUBSCRIBABLE, [
            c.id, c.sku, c.name, c.subscribable, basisPointsOf(c.discount_percent), c.created_at, c.updated_at,
            prices.map((p) => p[0]), prices.map((p) => String(p[1])), c.discount_percent, prices.map((p) => p[2]), prices.map((p) => p[3]),
          ])
          return inserted === undefined ? refuse('sku', 'taken') : undefined
        }
        case 'subscription': return insertSubscription(record.row)
      }
    },

    async finish(): Promise<void> {
      if (added.length > 0) await sql.run(REPORT_NOW, [added])
    },
  }
}
