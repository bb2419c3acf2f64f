import type { DatabaseSync } from 'node:sqlite'
import type { PaymentMethod, PaymentSource, Subscribable } from '../../domain/types.ts'
import { nowIso, plain, prepareValues, type Row } from './rows.ts'
import type { CatalogQuestion, PaymentSourceFields } from '../api.ts'
export type { PaymentSourceFields }

const toMethod = (r: Row): PaymentMethod => ({ ...plain<PaymentMethod>(r), active: r['active'] === 1 })
const toSubscribable = (r: Row): Subscribable => ({ ...plain<Subscribable>(r), subscribable: r['subscribable'] === 1 })

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
  const insertSubscribable = db.prepare('INSERT INTO subscribables (sku, name, subscribable, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *')
  const subscribableById = db.prepare('SELECT * FROM subscribables WHERE id = ?')
  const subscribableBySku = db.prepare('SELECT id FROM subscribables WHERE sku = ?')
  const subscribablesAfter = db.prepare('SELECT * FROM subscribables WHERE id > ? ORDER BY id LIMIT ?')
  const updateSubscribable = db.prepare('UPDATE subscribables SET sku = ?, name = ?, subscribable = ?, updated_at = ? WHERE id = ? RETURNING *')
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
    createSubscribable(sku: string, name: string, subscribable: boolean): Subscribable {
      const now = nowIso()
      return toSubscribable(insertSubscribable.get(sku, name, subscribable ? 1 : 0, now, now) as Row)
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
    updateSubscribable(id: number, sku: string, name: string, subscribable: boolean): Subscribable {
      return toSubscribable(updateSubscribable.get(sku, name, subscribable ? 1 : 0, nowIso(), id) as Row)
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
