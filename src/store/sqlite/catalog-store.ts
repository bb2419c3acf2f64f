import type { DatabaseSync } from 'node:sqlite'
import type { PaymentMethod, PaymentSource, Subscribable, SubscribableFields } from '../../domain/types.ts'
import { nowIso, plain, prepareValues, type Row } from './rows.ts'
import type { CatalogQuestion, PaymentSourceFields } from '../api.ts'
import { priceColumns, subscribableOf, type SubscribableRow } from '../columns.ts'
import { formatPercent } from '../../domain/money.ts'
export type { PaymentSourceFields }

const toMethod = (r: Row): PaymentMethod => ({ ...plain<PaymentMethod>(r), active: r['active'] === 1 })
const toSubscribable = (r: Row): Subscribable => subscribableOf({ ...(r as unknown as SubscribableRow), subscribable: r['subscribable'] === 1 })

/** A catalog item's columns and its prices (a JSON array of [currency, minor units], by currency), as subscribableOf reads them. */
export const SUBSCRIBABLE_SELECT = `SELECT c.id, c.sku, c.name, c.subscribable, c.discount_bp, c.created_at, c.updated_at,
  (SELECT json_group_array(json_array(p.currency, p.amount)) FROM (SELECT currency, amount FROM subscribable_prices
    WHERE subscribable_id = c.id ORDER BY currency) p) AS prices FROM subscribables c`

/** Payment methods, payment sources and the catalog of subscribable items. */
export function catalogStore(db: DatabaseSync) {
  const insertMethod = db.prepare('INSERT INTO payment_methods (name, active, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING *')
  const methodById = db.prepare('SELECT * FROM payment_methods WHERE id = ?')
  const methodsAfter = db.prepare('SELECT * FROM payment_methods WHERE id > ? ORDER BY id LIMIT ?')
  const updateMethod = db.prepare('UPDATE payment_methods SET name = ?, active = ?, updated_at = ? WHERE id = ? RETURNING *')
  const insertSource = db.prepare(`INSERT INTO payment_sources (user_id, payment_method_id, kind, brand, last_digits, month, year, gateway_reference, created_at, updated_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
  const sourceById = db.prepare('SELECT * FROM payment_sources WHERE id = ?')
  const sourcesAfter = db.prepare('SELECT * FROM payment_sources WHERE id > ? ORDER BY id LIMIT ?')
  const sourcesOfUserAfter = db.prepare('SELECT * FROM payment_sources WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?')
  const deleteSource = db.prepare('DELETE FROM payment_sources WHERE id = ?')
  const paymentCheck = prepareValues(db, `SELECT 1 FROM payment_sources s JOIN payment_methods m ON m.id = s.payment_method_id
    WHERE s.id = ? AND s.user_id = ? AND m.id = ? AND m.active = 1`)
  const insertSubscribable = db.prepare('INSERT INTO subscribables (sku, name, subscribable, discount_bp, discount_percent, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
  const subscribableById = db.prepare(`${SUBSCRIBABLE_SELECT} WHERE c.id = ?`)
  const subscribableBySku = db.prepare('SELECT id FROM subscribables WHERE sku = ?')
  const subscribablesAfter = db.prepare(`${SUBSCRIBABLE_SELECT} WHERE c.id > ? ORDER BY c.id LIMIT ?`)
  const updateSubscribable = db.prepare('UPDATE subscribables SET sku = ?, name = ?, subscribable = ?, discount_bp = ?, discount_percent = ?, updated_at = ? WHERE id = ?')
  const setPrice = db.prepare(`INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit) VALUES (?, ?, ?, ?, ?)
    ON CONFLICT (subscribable_id, currency) DO UPDATE SET amount = excluded.amount, amount_text = excluded.amount_text, minor_unit = excluded.minor_unit`)
  const removePrice = db.prepare('DELETE FROM subscribable_prices WHERE subscribable_id = ? AND currency = ?')
  /** Writes the prices a create or change gives (null removes one), then answers the item as it now stands. */
  const withPrices = (id: number, prices: SubscribableFields['prices']): Subscribable => {
    for (const [currency, amount] of prices) {
      if (amount === null) removePrice.run(id, currency)
      else setPrice.run(id, currency, ...priceColumns(currency, amount))
    }
    return toSubscribable(subscribableById.get(id) as Row)
  }
  const deleteSubscribable = db.prepare('DELETE FROM subscribables WHERE id = ?')
  const isSubscribable = prepareValues(db, 'SELECT 1 FROM subscribables WHERE id = ? AND subscribable = 1')

  return {
    createPaymentMethod(name: string, active: boolean): PaymentMethod {
      const now = nowIso()
      return toMethod(insertMethod.get(name, active ? 1 : 0, now, now) as Row)
    },
    findPaymentMethod(id: number): PaymentMethod | undefined {
      const r = methodById.get(id) as Row | undefined
      return r ? toMethod(r) : undefined
    },
    listPaymentMethods(after: number, limit: number): PaymentMethod[] {
      return (methodsAfter.all(after, limit) as Row[]).map(toMethod)
    },
    updatePaymentMethod(id: number, name: string, active: boolean): PaymentMethod {
      return toMethod(updateMethod.get(name, active ? 1 : 0, nowIso(), id) as Row)
    },
    createPaymentSource(f: PaymentSourceFields): PaymentSource {
      const now = nowIso()
      return plain<PaymentSource>(
        insertSource.get(f.user_id, f.payment_method_id, f.kind, f.brand, f.last_digits, f.month, f.year, f.gateway_reference, now, now) as Row,
      )
    },
    findPaymentSource(id: number): PaymentSource | undefined {
      const r = sourceById.get(id) as Row | undefined
      return r ? plain<PaymentSource>(r) : undefined
    },
    listPaymentSources(userId: number | undefined, after: number, limit: number): PaymentSource[] {
      const rows = (userId === undefined ? sourcesAfter.all(after, limit) : sourcesOfUserAfter.all(userId, after, limit)) as Row[]
      return rows.map((r) => plain<PaymentSource>(r))
    },
    deletePaymentSource(id: number): void {
      deleteSource.run(id)
    },
    answer(questions: readonly CatalogQuestion[]): boolean[] {
      return questions.map((q) => (q.kind === 'payment'
        ? paymentCheck.get(q.source, q.user, q.method) !== undefined
        : isSubscribable.get(q.id) !== undefined))
    },
    paymentIsValid(methodId: number, sourceId: number, userId: number): boolean {
      return paymentCheck.get(sourceId, userId, methodId) !== undefined
    },
    createSubscribable(f: SubscribableFields): Subscribable {
      const now = nowIso()
      const id = Number(insertSubscribable.run(f.sku, f.name, f.subscribable ? 1 : 0, f.discount_bp, formatPercent(f.discount_bp), now, now).lastInsertRowid)
      return withPrices(id, f.prices)
    },
    findSubscribable(id: number): Subscribable | undefined {
      const r = subscribableById.get(id) as Row | undefined
      return r ? toSubscribable(r) : undefined
    },
    subscribableIdForSku(sku: string): number | undefined {
      return (subscribableBySku.get(sku) as { id: number } | undefined)?.id
    },
    listSubscribables(after: number, limit: number): Subscribable[] {
      return (subscribablesAfter.all(after, limit) as Row[]).map(toSubscribable)
    },
    updateSubscribable(id: number, f: SubscribableFields): Subscribable {
      updateSubscribable.run(f.sku, f.name, f.subscribable ? 1 : 0, f.discount_bp, formatPercent(f.discount_bp), nowIso(), id)
      return withPrices(id, f.prices)
    },
    deleteSubscribable(id: number): void {
      deleteSubscribable.run(id)
    },
    isSubscribable(id: number): boolean {
      return isSubscribable.get(id) !== undefined
    },
  }
}
export type CatalogStore = ReturnType<typeof catalogStore>
