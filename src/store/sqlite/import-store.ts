import type { DatabaseSync } from 'node:sqlite'
import type { PaymentMethod, PaymentSource, User } from '../../domain/types.ts'
import { basisPointsOf, minorOf } from '../../domain/money.ts'
import { priceColumns, subscribableOf, type SubscribableRow } from '../columns.ts'
import { SUBSCRIBABLE_SELECT } from './catalog-store.ts'
import type { ImportedApiKey, ImportRecord, ImportRefusal, StoredImportRow } from '../../domain/import/records.ts'
import { LINE_ITEM_COLUMNS, SUBSCRIPTION_COLUMNS, columns, lineItemOf, plain, prepareValues, subscriptionOf, type Row, type Values } from './rows.ts'

/**
 * Rows brought in by an import (C13), with the ids, dates and counters they had elsewhere. Every
 * row keeps its given id: SQLite then hands out ids above the highest for the next rows made
 * here (INTEGER PRIMARY KEY takes max + 1; an AUTOINCREMENT table's sqlite_sequence moves up to
 * any larger id inserted), so a new row never takes an imported one's. No event is written: an
 * import brings rows that already existed, it changes none (docs/import.md).
 */
export function importStore(db: DatabaseSync) {
  const userById = db.prepare('SELECT * FROM users WHERE id = ?')
  const userIdByEmail = db.prepare('SELECT id FROM users WHERE email = ?')
  const insertUser = db.prepare(`INSERT INTO users (id, email, external_id, locale, email_notifications, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const keyByHash = db.prepare('SELECT id, user_id, key_hash, prefix, created_at, updated_at FROM api_keys WHERE key_hash = ?')
  const keyIdTaken = db.prepare('SELECT 1 FROM api_keys WHERE id = ?')
  const insertKey = db.prepare('INSERT INTO api_keys (id, user_id, key_hash, prefix, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
  const methodById = db.prepare('SELECT * FROM payment_methods WHERE id = ?')
  const insertMethod = db.prepare('INSERT INTO payment_methods (id, name, active, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
  const sourceById = db.prepare('SELECT * FROM payment_sources WHERE id = ?')
  const insertSource = db.prepare(`INSERT INTO payment_sources (id, user_id, payment_method_id, kind, brand, last_digits, month, year,
    gateway_reference, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const subscribableById = db.prepare(`${SUBSCRIBABLE_SELECT} WHERE c.id = ?`)
  const skuTaken = db.prepare('SELECT 1 FROM subscribables WHERE sku = ?')
  const insertSubscribable = db.prepare(`INSERT INTO subscribables (id, sku, name, subscribable, discount_bp, discount_percent, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)`)
  const insertPrice = db.prepare('INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit) VALUES (?, ?, ?, ?, ?)')
  const subscriptionById = prepareValues(db, `SELECT ${columns(SUBSCRIPTION_COLUMNS)} FROM subscriptions WHERE id = ?`)
  const lineItemsOf = prepareValues(db, `SELECT ${columns(LINE_ITEM_COLUMNS)} FROM line_items WHERE subscription_id = ? ORDER BY id`)
  const lineItemTaken = db.prepare('SELECT 1 FROM line_items WHERE id = ?')
  const exists = {
    user: db.prepare('SELECT 1 FROM users WHERE id = ?'),
    method: db.prepare('SELECT 1 FROM payment_methods WHERE id = ?'),
    subscribable: db.prepare('SELECT 1 FROM subscribables WHERE id = ?'),
  }
  // C6's pairing, without "active": an import keeps a plan whose method was retired since.
  const paymentPairs = db.prepare('SELECT 1 FROM payment_sources WHERE id = ? AND user_id = ? AND payment_method_id = ?')
  // The processor's floor starts at the date (migration 4), as for a subscription made here.
  const insertSubscription = db.prepare(`INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units,
      actionable_date, anchor_day, end_date, skip_count, successive_skip_count, payment_method_id, payment_source_id, currency,
      processing_state, shipping_address, billing_address, created_on, created_at, updated_at, due_floor)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
  const insertLineItem = db.prepare('INSERT INTO line_items (id, subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
  const found = (stmt: { get(...a: (number | string)[]): unknown }, ...args: (number | string)[]): boolean => stmt.get(...args) !== undefined
  const refuse = (field: string, problem: ImportRefusal['problem']): ImportRefusal => ({ field, problem })

  return {
    /** The stored row this record names (by id; an API key by its key), in the record's shape. */
    stored(record: ImportRecord): StoredImportRow | undefined {
      switch (record.type) {
        case 'user': {
          const r = userById.get(record.row.id) as Row | undefined
          return r && { ...plain<User>(r), email_notifications: r['email_notifications'] === 1 }
        }
        case 'api_key': {
          const r = keyByHash.get(record.row.key_hash) as Row | undefined
          return r && plain<ImportedApiKey>(r)
        }
        case 'payment_method': {
          const r = methodById.get(record.row.id) as Row | undefined
          return r && { ...plain<PaymentMethod>(r), active: r['active'] === 1 }
        }
        case 'payment_source': {
          const r = sourceById.get(record.row.id) as Row | undefined
          return r && plain<PaymentSource>(r)
        }
        case 'subscribable': {
          const r = subscribableById.get(record.row.id) as Row | undefined
          return r && subscribableOf({ ...(r as unknown as SubscribableRow), subscribable: r['subscribable'] === 1 })
        }
        case 'subscription': {
          const id = record.row.subscription.id
          const r = subscriptionById.get(id) as unknown as Values | undefined
          return r && { subscription: subscriptionOf(r), line_items: (lineItemsOf.all(id) as unknown as Values[]).map(lineItemOf) }
        }
      }
    },

    /** Writes a record that `stored` did not find, or answers why it cannot be written. */
    insert(record: ImportRecord): ImportRefusal | undefined {
      switch (record.type) {
        case 'user': {
          const u = record.row
          if (u.email !== null && found(userIdByEmail, u.email)) return refuse('email', 'taken')
          insertUser.run(u.id, u.email, u.external_id, u.locale, u.email_notifications ? 1 : 0, u.created_at, u.updated_at)
          return undefined
        }
        case 'api_key': {
          const k = record.row
          if (!found(exists.user, k.user_id)) return refuse('user_id', 'does_not_exist')
          if (k.id !== null && found(keyIdTaken, k.id)) return refuse('id', 'taken')
          insertKey.run(k.id, k.user_id, k.key_hash, k.prefix, k.created_at, k.updated_at)
          return undefined
        }
        case 'payment_method': {
          const m = record.row
          insertMethod.run(m.id, m.name, m.active ? 1 : 0, m.created_at, m.updated_at)
          return undefined
        }
        case 'payment_source': {
          const s = record.row
          if (!found(exists.user, s.user_id)) return refuse('user_id', 'does_not_exist')
          if (!found(exists.method, s.payment_method_id)) return refuse('payment_method_id', 'does_not_exist')
          insertSource.run(s.id, s.user_id, s.payment_method_id, s.kind, s.brand, s.last_digits, s.month, s.year, s.gateway_reference, s.created_at, s.updated_at)
          return undefined
        }
        case 'subscribable': {
          const c = record.row
          if (found(skuTaken, c.sku)) return refuse('sku', 'taken')
          insertSubscribable.run(c.id, c.sku, c.name, c.subscribable ? 1 : 0, basisPointsOf(c.discount_percent), c.discount_percent, c.created_at, c.updated_at)
          for (const [currency, amount] of Object.entries(c.prices)) insertPrice.run(c.id, currency, ...priceColumns(currency, minorOf(amount) as bigint))
          return undefined
        }
        case 'subscription': {
          const s = record.row.subscription
          if (!found(exists.user, s.user_id)) return refuse('user_id', 'does_not_exist')
          if (s.payment_source_id !== null && !found(paymentPairs, s.payment_source_id, s.user_id, s.payment_method_id as number)) {
            return refuse('payment_source_type', 'invalid_payment')
          }
          for (const { item } of record.row.line_items) {
            if (!found(exists.subscribable, item.subscribable_id)) return refuse('line_items.subscribable_id', 'does_not_exist')
            if (found(lineItemTaken, item.id)) return refuse('line_items.id', 'other_subscription')
          }
          insertSubscription.run(
            s.id, s.user_id, s.state, s.paused ? 1 : 0, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day,
            s.end_date, s.skip_count, s.successive_skip_count, s.payment_method_id, s.payment_source_id, s.currency,
            s.processing_state, s.shipping_address && JSON.stringify(s.shipping_address), s.billing_address && JSON.stringify(s.billing_address),
            s.created_on, s.created_at, s.updated_at, s.actionable_date,
          )
          for (const { item } of record.row.line_items) {
            insertLineItem.run(item.id, s.id, item.subscribable_id, item.quantity, item.created_at, item.updated_at)
          }
          return undefined
        }
      }
    },
    /** Nothing waits for the end here: SQLite's report trigger updates its row in place, once a row. */
    finish(): void {},
  }
}
export type ImportStore = ReturnType<typeof importStore>
