import type { PaymentMethod, PaymentSource, Subscribable, SubscribableFields } from '../../domain/types.ts'
import type { CatalogQuestion, CatalogTx } from '../api.ts'
import { priceColumns, subscribableOf, type SubscribableRow } from '../columns.ts'
import { formatPercent } from '../../domain/money.ts'
import { changed, unlessTaken } from './conflict.ts'
import { nowIso } from './rows.ts'
import { lockedInUnit, type Sql } from './sql.ts'

/** Columns in the domain's order: the admin API answers these objects as JSON, keys in this order. */
const METHOD = 'id, name, active, created_at, updated_at'
const SOURCE = 'id, user_id, payment_method_id, kind, brand, last_digits, month, year, gateway_reference, created_at, updated_at'
/** A catalog item with its prices as [currency, minor units] pairs by currency (subscribableOf). */
export const SUBSCRIBABLE_SELECT = `SELECT c.id, c.sku, c.name, c.subscribable, c.discount_bp, c.created_at, c.updated_at,
  (SELECT json_agg(json_build_array(p.currency, p.amount) ORDER BY p.currency) FROM subscribable_prices p WHERE p.subscribable_id = c.id) AS prices
  FROM subscribables c`

/** A create's or a change's prices (null removes one), in one statement. */
const WRITE_PRICES = `WITH removed AS (
    DELETE FROM subscribable_prices WHERE subscribable_id = $1 AND currency = ANY($2::text[])
  )
  INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit)
    SELECT $1, u.currency, u.amount, u.amount_text, u.minor_unit FROM unnest($3::text[], $4::bigint[], $5::text[], $6::integer[]) AS u(currency, amount, amount_text, minor_unit)
  ON CONFLICT (subscribable_id, currency) DO UPDATE SET amount = EXCLUDED.amount, amount_text = EXCLUDED.amount_text, minor_unit = EXCLUDED.minor_unit`

/** C6: the method exists and is active; the source exists, is the user's and the method's. */
const PAYMENT_IS_VALID = (method: string, source: string, user: string): string => `EXISTS (SELECT 1 FROM payment_sources s JOIN payment_methods m ON m.id = s.payment_method_id
  WHERE s.id = ${source} AND s.user_id = ${user} AND m.id = ${method} AND m.active)`
const IS_SUBSCRIBABLE = (id: string): string => `EXISTS (SELECT 1 FROM subscribables WHERE id = ${id} AND subscribable)`

/**
 * Every question of a validation in one statement: one row per question, in the order asked.
 * A payment question fills method, source and user; an item question fills item.
 */
const ANSWER = `SELECT CASE WHEN q.kind = 'payment' THEN ${PAYMENT_IS_VALID('q.method', 'q.source', 'q.usr')} ELSE ${IS_SUBSCRIBABLE('q.item')} END AS yes
  FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::bigint[]) WITH ORDINALITY AS q(kind, method, source, usr, item, n)
  ORDER BY q.n`

/** Payment methods, payment sources and the catalog of subscribable items. */
export function catalogRepo(sql: Sql): CatalogTx {
  const subscribable = async (where: string, values: readonly unknown[]): Promise<Subscribable | undefined> => {
    const row = await sql.one<SubscribableRow>(`${SUBSCRIBABLE_SELECT} ${where}`, values)
    return row ? subscribableOf(row) : undefined
  }
  /** Writes the prices a create or change gives, then answers the item as it now stands. */
  const withPrices = async (id: number, prices: SubscribableFields['prices']): Promise<Subscribable> => {
    const removed = [...prices].flatMap(([currency, amount]) => (amount === null ? [currency] : []))
    const set = [...prices].flatMap(([currency, amount]) => (amount === null ? [] : [[currency, ...priceColumns(currency, amount)] as const]))
    if (prices.size > 0) {
      await sql.run(WRITE_PRICES, [id, removed, set.map((e) => e[0]), set.map((e) => e[1].toString()), set.map((e) => e[2]), set.map((e) => e[3])])
    }
    return changed(await subscribable('WHERE c.id = $1', [id]), `subscribable ${id}`)
  }
  return {
    async createPaymentMethod(name, active) {
      const now = nowIso()
      return (await sql.one<PaymentMethod>(`INSERT INTO payment_methods (name, active, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING ${METHOD}`, [name, active, now])) as PaymentMethod
    },
    findPaymentMethod: (id) => sql.one<PaymentMethod>(`SELECT ${METHOD} FROM payment_methods WHERE id = $1${lockedInUnit(sql)}`, [id]),
    listPaymentMethods: (after, limit) => sql.rows<PaymentMethod>(`SELECT ${METHOD} FROM payment_methods WHERE id > $1 ORDER BY id LIMIT $2`, [after, limit]),
    async updatePaymentMethod(id, name, active) {
      const row = await sql.one<PaymentMethod>(`UPDATE payment_methods SET name = $1, active = $2, updated_at = $3 WHERE id = $4 RETURNING ${METHOD}`, [name, active, nowIso(), id])
      return changed(row, `payment method ${id}`)
    },
    async createPaymentSource(f) {
      const now = nowIso()
      const row = await sql.one<PaymentSource>(
        `INSERT INTO payment_sources (user_id, payment_method_id, kind, brand, last_digits, month, year, gateway_reference, created_at, updated_at)
          VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING ${SOURCE}`,
        [f.user_id, f.payment_method_id, f.kind, f.brand, f.last_digits, f.month, f.year, f.gateway_reference, now],
      )
      return row as PaymentSource
    },
    findPaymentSource: (id) => sql.one<PaymentSource>(`SELECT ${SOURCE} FROM payment_sources WHERE id = $1${lockedInUnit(sql)}`, [id]),
    listPaymentSources: (userId, after, limit) =>
      userId === undefined
        ? sql.rows<PaymentSource>(`SELECT ${SOURCE} FROM payment_sources WHERE id > $1 ORDER BY id LIMIT $2`, [after, limit])
        : sql.rows<PaymentSource>(`SELECT ${SOURCE} FROM payment_sources WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [userId, after, limit]),
    async deletePaymentSource(id) {
      await sql.run('DELETE FROM payment_sources WHERE id = $1', [id])
    },
    answer: (questions) => answer(sql, questions),
    paymentIsValid: async (methodId, sourceId, userId) =>
      (await sql.one<{ yes: boolean }>(`SELECT ${PAYMENT_IS_VALID('$1::bigint', '$2::bigint', '$3::bigint')} AS yes`, [methodId, sourceId, userId]))?.yes === true,
    async createSubscribable(f) {
      const now = nowIso()
      const insert = sql.one<{ id: number }>(`INSERT INTO subscribables (sku, name, subscribable, discount_bp, discount_percent, created_at, updated_at)
        VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, [f.sku, f.name, f.subscribable, f.discount_bp, formatPercent(f.discount_bp), now])
      // The handler checked subscribableIdForSku first (admin/catalog.ts): a 23505 is a concurrent create.
      const row = await unlessTaken(insert, 'subscribables_sku_key')
      return withPrices((row as { id: number }).id, f.prices)
    },
    findSubscribable: (id) => subscribable(`WHERE c.id = $1${lockedInUnit(sql)}`, [id]),
    subscribableIdForSku: async (sku) => (await sql.one<{ id: number }>('SELECT id FROM subscribables WHERE sku = $1', [sku]))?.id,
    listSubscribables: async (after, limit) => (await sql.rows<SubscribableRow>(`${SUBSCRIBABLE_SELECT} WHERE c.id > $1 ORDER BY c.id LIMIT $2`, [after, limit])).map(subscribableOf),
    async updateSubscribable(id, f) {
      const update = sql.one<{ id: number }>(`UPDATE subscribables SET sku = $1, name = $2, subscribable = $3, discount_bp = $4, discount_percent = $5, updated_at = $6
        WHERE id = $7 RETURNING id`, [f.sku, f.name, f.subscribable, f.discount_bp, formatPercent(f.discount_bp), nowIso(), id])
      changed(await unlessTaken(update, 'subscribables_sku_key'), `subscribable ${id}`)
      return withPrices(id, f.prices)
    },
    async deleteSubscribable(id) {
      await sql.run('DELETE FROM subscribables WHERE id = $1', [id])
    },
    isSubscribable: async (id) => (await sql.one(`SELECT 1 FROM subscribables WHERE id = $1 AND subscribable`, [id])) !== undefined,
  }
}

/**
 * The answers in the order asked, in one round trip. Items need no lock: a line item's foreign key
 * keeps its catalog item from being deleted under it. A payment source has no such key, so inside
 * a unit its row is share-locked first (FOR KEY SHARE), before the answer is read: a concurrent
 * DELETE /payment_sources (which locks it FOR UPDATE) either committed already, and the answer
 * sees it gone, or waits for this unit and then clears the subscription this unit wrote.
 */
async function answer(sql: Sql, questions: readonly CatalogQuestion[]): Promise<boolean[]> {
  if (questions.length === 0) return []
  const sources = questions.flatMap((q) => (q.kind === 'payment' ? [q.source] : []))
  if (sql.inUnit && sources.length > 0) await sql.run('SELECT 1 FROM payment_sources WHERE id = ANY($1::bigint[]) FOR KEY SHARE', [sources])
  const kind: string[] = []
  const method: (number | null)[] = []
  const source: (number | null)[] = []
  const user: (number | null)[] = []
  const item: (number | null)[] = []
  for (const q of questions) {
    kind.push(q.kind)
    method.push(q.kind === 'payment' ? q.method : null)
    source.push(q.kind === 'payment' ? q.source : null)
    user.push(q.kind === 'payment' ? q.user : null)
    item.push(q.kind === 'item' ? q.id : null)
  }
  const rows = await sql.rows<{ yes: boolean }>(ANSWER, [kind, method, source, user, item])
  return rows.map((r) => r.yes)
}
