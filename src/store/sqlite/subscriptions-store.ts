import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { COLUMN_OF } from '../columns.ts'
import type { PricedLineItem, State, Subscription, SubscriptionPatch } from '../../domain/types.ts'
import type { NewSubscription } from '../../domain/subscription-input.ts'
import {
  LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_FROM, SUBSCRIPTION_COLUMNS, columns, nowIso, prepareValues, lineItemOf, pricedLineItemOf, subscriptionOf, type Values,
} from './rows.ts'
import type { BodyCache, LineItemsPart, SubscriptionJson } from './body-cache.ts'
import { discountOf, priceJoin, sqliteMoneyText, totalText, unitOf } from '../money-sql.ts'
import type { AdminSubscriptionFilter, ExportItemValues, SubscriptionExportRow, SubscriptionPage } from '../api.ts'
export type { AdminSubscriptionFilter }

function sqlValue(key: keyof SubscriptionPatch, value: unknown): string | number | null {
  if (value === null || value === undefined) return null
  if (key === 'paused') return value ? 1 : 0
  if (key === 'shipping_address' || key === 'billing_address') return JSON.stringify(value)
  return value as string | number
}

/**
 * A subscription's line items priced as the catalog says now (C16), in C3's order (by id): each
 * row a line item, its unit price in minor units (`unit`, null without one) and as shown
 * (`price`), the item's discount as shown (`percent`), the line's amount (quantity × unit) and
 * discount (half-up), and the currency's minor unit (`u`, null without a price). `currency` is
 * the subscription's currency as an SQL expression.
 */
const PRICED_LINES = (subscriptionId: string, currency: string): string => `SELECT li.id, li.subscription_id, li.subscribable_id, li.quantity, li.one_time,
    li.created_at, li.updated_at, p.amount AS unit, p.amount_text AS price, c.discount_percent AS percent, li.quantity * p.amount AS amount,
    ${discountOf('li.quantity * p.amount', 'c.discount_bp')} AS discount, p.minor_unit AS u
  FROM line_items li ${priceJoin(currency)} WHERE li.subscription_id = ${subscriptionId} ORDER BY li.id`
/** A line item of PRICED_LINES (alias `l`) as C3 and C16 render it (renderLineItem). */
const LINE_ITEM_JSON = `json_object('id', l.id, 'subscription_id', l.subscription_id, 'subscribable_id', l.subscribable_id, 'quantity', l.quantity,
  'one_time', json(CASE l.one_time WHEN 1 THEN 'true' ELSE 'false' END), 'price', l.price, 'discount_percent', l.percent, 'total', ${sqliteMoneyText('l.amount - l.discount', 'l.u')},
  'created_at', l.created_at, 'updated_at', l.updated_at)`
/**
 * The line items' part of subscription ?1's body: the items as JSONB, and C16's subtotal,
 * discount_total and total (null when a line has no price; zero without lines).
 */
const CURRENCY_OF = '(SELECT currency FROM subscriptions WHERE id = ?1)'
/**
 * A sum of the priced lines `l` of subscription `s` as C16's string. The lines' own minor unit
 * when they are priced (all are in the subscription's currency); the currency's unit from its
 * code (a CASE of IN lists, an ephemeral table each, built per execution) only without lines.
 */
const sumOf = (currency: string) => (expr: string): string => totalText(expr, `coalesce(max(l.u), ${unitOf(currency)})`, sqliteMoneyText)
const sum = sumOf(CURRENCY_OF)
const ITEMS_PART = `SELECT jsonb(json_group_array(${LINE_ITEM_JSON})) AS items, ${sum('l.amount')} AS subtotal, ${sum('l.discount')} AS discount_total,
  ${sum('l.amount - l.discount')} AS total FROM (${PRICED_LINES('?1', CURRENCY_OF)}) l`
/** The C3 body of subscription `s`, around its line items' part: the items (JSONB) and the three totals, as SQL values. */
const bodyOf = (items: string, subtotal: string, discountTotal: string, total: string): string => `json_object(
  'id', s.id, 'user_id', s.user_id, 'state', s.state,
  'paused', json(CASE s.paused WHEN 1 THEN 'true' ELSE 'false' END),
  'interval_length', s.interval_length, 'interval_units', s.interval_units,
  'actionable_date', s.actionable_date, 'end_date', s.end_date,
  'skip_count', s.skip_count, 'successive_skip_count', s.successive_skip_count,
  'payment_method_id', s.payment_method_id, 'payment_source_id', s.payment_source_id,
  'currency', s.currency, 'subtotal', ${subtotal}, 'discount_total', ${discountTotal}, 'total', ${total},
  'processing_state', s.processing_state,
  'shipping_address', json(s.shipping_address), 'billing_address', json(s.billing_address),
  'line_items', ${items},
  'created_at', s.created_at, 'updated_at', s.updated_at)`

/**
 * The C3 body of the subscription row `s` as it stands now, line items and C16's totals
 * included: one correlated aggregate over its priced lines, so the items stay JSON text with
 * their subtype (a FROM subquery would need a JSONB round trip) and the row is read once
 * (measured: 8.1 µs a body of three lines, against 10.2 µs joined to ITEMS_PART). Used by the
 * hot read and by the processor's bulk events (events-store.ts).
 */
const totalOf = sumOf('s.currency')
export const SUBSCRIPTION_BODY = `(SELECT ${bodyOf(`json_group_array(${LINE_ITEM_JSON})`, totalOf('l.amount'), totalOf('l.discount'), totalOf('l.amount - l.discount'))}
  FROM (${PRICED_LINES('s.id', 's.currency')}) l)`

/** The WHERE of an admin list of subscriptions `s` (C11, C13, C18), with its arguments: `after` first, `limit` last. */
function adminFilter(f: AdminSubscriptionFilter): { where: string; args: (string | number)[] } {
  const where = ['s.id > ?']
  const args: (string | number)[] = [f.after]
  if (f.state !== undefined) { where.push('s.state = ?'); args.push(f.state) }
  if (f.userId !== undefined) { where.push('s.user_id = ?'); args.push(f.userId) }
  if (f.actionableBefore !== undefined) { where.push('s.actionable_date < ?'); args.push(f.actionableBefore) }
  if (f.paused !== undefined) { where.push('s.paused = ?'); args.push(f.paused ? 1 : 0) }
  args.push(f.limit)
  return { where: where.join(' AND '), args }
}

/**
 * Subscription `s`'s line items as `[[quantity, sku, name, unit_price, discount_bp], …]` in C3's
 * order: the export's item names and, priced in `s`'s currency as the catalog says now, its C16 money.
 */
const EXPORT_ITEMS = `SELECT json_group_array(json_array(x.quantity, x.sku, x.name, x.unit_price, x.discount_bp)) FROM (SELECT li.quantity,
  c.sku, c.name, p.amount AS unit_price, c.discount_bp FROM line_items li ${priceJoin('s.currency')} WHERE li.subscription_id = s.id ORDER BY li.id) x`

/** Subscriptions and their line items. Reads come back as arrays (rows.ts); writes return no rows. */
export function subscriptionsStore(db: DatabaseSync, bodies: BodyCache) {
  const S = columns(SUBSCRIPTION_COLUMNS)
  const prepare = (sql: string): StatementSync => prepareValues(db, sql)
  // The processor's floor starts at the date (migration 4; a trigger would set it otherwise).
  const insert = prepare(`INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date,
      anchor_day, end_date, payment_method_id, payment_source_id, currency, shipping_address, billing_address,
      created_on, created_at, updated_at, due_floor, skip_count, successive_skip_count)
    VALUES (?1, 'active', 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?4, ?15, ?16)`)
  const byId = prepare(`SELECT ${S} FROM subscriptions WHERE id = ?`)
  // The hot read (GET a subscription): SQLite builds C3's whole body, line items and C16's
  // totals included, in one statement, so the request neither maps rows to objects nor
  // stringifies them again.
  const jsonById = prepare(`SELECT s.user_id AS user_id, ${SUBSCRIPTION_BODY} AS body FROM subscriptions s WHERE s.id = ?1`)
  // A page's bodies that the cache lacks, in one statement (ids as a JSON array): one call into
  // SQLite for them all, not one each.
  const jsonIn = prepare(`SELECT s.id, ${SUBSCRIPTION_BODY} FROM subscriptions s WHERE s.id IN (SELECT value FROM json_each(?1))`)
  // The same body around a line items' part kept by the cache (body-cache.ts): SQLite embeds a
  // JSONB value as the JSON it encodes, byte for byte what the subquery above makes (a BLOB
  // that is not JSONB is an error, never text in the body).
  const jsonWithLineItems = prepare(`SELECT s.user_id AS user_id, ${bodyOf('?2', '?3', '?4', '?5')} AS body FROM subscriptions s WHERE s.id = ?1`)
  const lineItemsPart = prepare(ITEMS_PART)
  const idsOfUser = prepare('SELECT id FROM subscriptions WHERE user_id = ? ORDER BY id LIMIT ? OFFSET ?')
  const allOfUser = prepare(`SELECT ${S} FROM subscriptions WHERE user_id = ? ORDER BY id`)
  const idsOfUserInState = prepare('SELECT id FROM subscriptions WHERE user_id = ? AND state = ? ORDER BY id LIMIT ? OFFSET ?')
  const countOfUser = prepare('SELECT count(*) FROM subscriptions WHERE user_id = ?')
  const countOfUserInState = prepare('SELECT count(*) FROM subscriptions WHERE user_id = ? AND state = ?')
  const withSource = prepare('SELECT id FROM subscriptions WHERE payment_source_id = ?')
  const clearPayment = db.prepare('UPDATE subscriptions SET payment_method_id = NULL, payment_source_id = NULL, updated_at = ? WHERE payment_source_id = ?')
  const lineItemsOf = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.subscription_id = ? ORDER BY li.id`)
  // One statement for any page of a list: the ids come as a JSON array, so no SQL is compiled per request.
  const lineItemsIn = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM}
    WHERE li.subscription_id IN (SELECT value FROM json_each(?)) ORDER BY li.id`)
  const lineItemById = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.id = ?`)
  const lineItemOwner = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS}, s.user_id FROM ${PRICED_LINE_ITEM_FROM} WHERE li.id = ?`)
  const insertLineItem = db.prepare('INSERT INTO line_items (subscription_id, subscribable_id, quantity, one_time, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)')
  const updateLineItem = db.prepare('UPDATE line_items SET subscribable_id = ?, quantity = ?, updated_at = ? WHERE id = ?')
  // A quantity-only change assigns only the quantity: assigning subscribable_id, even to the value
  // it has, makes SQLite check its foreign key (and would rewrite any index on it).
  const updateQuantity = db.prepare('UPDATE line_items SET quantity = ?, updated_at = ? WHERE id = ?')
  const deleteLineItem = db.prepare('DELETE FROM line_items WHERE id = ?')
  const oneTimeIn = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM}
    WHERE li.one_time = 1 AND li.subscription_id IN (SELECT value FROM json_each(?)) ORDER BY li.id`)
  const deleteIn = db.prepare('DELETE FROM line_items WHERE id IN (SELECT value FROM json_each(?))')
  // Whether any one-time line exists at all: one look into its (usually empty) partial index spares
  // the processor's batches probing it for each of their 2,000 subscriptions (0.3 s a million).
  const anyOneTime = db.prepare('SELECT 1 FROM line_items INDEXED BY line_items_one_time WHERE one_time = 1 LIMIT 1')
  // A scan: no index by catalog item (migration 3); only the admin's rare DELETE of one reads it.
  const lineItemsOfSubscribable = prepare(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.subscribable_id = ? ORDER BY li.id`)
  const touch = db.prepare('UPDATE subscriptions SET updated_at = ? WHERE id = ?')
  const lastDue = prepare('SELECT max(due_date) FROM installments WHERE subscription_id = ?')
  const updates = new Map<string, StatementSync>()
  // Admin lists and export batches: one statement per combination of filters, kept once made.
  const listStatements = new Map<string, StatementSync>()
  const cached = (sql: string): StatementSync => {
    let stmt = listStatements.get(sql)
    if (!stmt) listStatements.set(sql, (stmt = prepare(sql)))
    return stmt
  }
  const SA = columns(SUBSCRIPTION_COLUMNS, 's')
  const count = (stmt: StatementSync, ...args: (string | number)[]): number => (stmt.get(...args) as unknown as [number])[0]
  const subscriptions = (rows: unknown): Subscription[] => (rows as Values[]).map(subscriptionOf)
  const lineItems = (rows: unknown): PricedLineItem[] => (rows as Values[]).map(pricedLineItemOf)
  const lineItem = (id: number): PricedLineItem => pricedLineItemOf(lineItemById.get(id) as unknown as Values)
  /**
   * The C3 body as it stands now, around the kept line items when there are some. With `keep`,
   * a subscription whose line items are not kept has them read and kept for the next write.
   */
  const render = (id: number, keep: boolean): SubscriptionJson | undefined => {
    let part = bodies.lineItems(id)
    const read = part === undefined && keep
    if (read) {
      const [items, subtotal, discount_total, total] = lineItemsPart.get(id) as unknown as [Uint8Array, string | null, string | null, string | null]
      part = { items, subtotal, discount_total, total }
    }
    const row = (part === undefined ? jsonById.get(id) : jsonWithLineItems.get(id, part.items, part.subtotal, part.discount_total, part.total)) as unknown as [number, string] | undefined
    if (!row) return undefined
    // Kept only for a subscription that exists (the aggregate answers [] for any id).
    if (read) bodies.keepLineItems(id, part as LineItemsPart)
    return { user_id: row[0], body: row[1] }
  }
  /**
   * The C3 bodies of a page of subscriptions, in the order of `ids`: from the cache where they
   * are, rendered where not. A list does not fill the cache: its pages would push out the
   * subscriptions customers actually open, for bodies that are rarely read again one by one.
   */
  const jsonMany = (ids: readonly number[]): string[] => {
    const cached = bodies.getMany(ids)
    const missing = ids.filter((_, i) => cached[i] === undefined)
    const rendered = new Map<number, string>()
    if (missing.length > 0) for (const [id, body] of jsonIn.all(JSON.stringify(missing)) as unknown as [number, string][]) rendered.set(id, body)
    return cached.map((hit, i) => {
      if (hit) return hit.body
      const id = ids[i] as number
      const body = rendered.get(id)
      if (body === undefined) throw new Error(`subscription ${id} vanished between two statements of one request`)
      return body
    })
  }

  return {
    /** Inserts a subscription and answers its id (no row is read back: the answer is rendered after its line items). */
    /** A new subscription with its line items, in the order given; answers its id. */
    create(userId: number, s: NewSubscription, today: string): number {
      const now = nowIso()
      const id = Number(insert.run(
        userId, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day, s.end_date,
        s.payment_method_id, s.payment_source_id, s.currency,
        s.shipping_address ? JSON.stringify(s.shipping_address) : null,
        s.billing_address ? JSON.stringify(s.billing_address) : null,
        today, now, now, s.skip_count ?? 0, s.successive_skip_count ?? 0,
      ).lastInsertRowid)
      for (const li of s.line_items) insertLineItem.run(id, li.subscribable_id, li.quantity, li.one_time === true ? 1 : 0, now, now)
      return id
    },
    /** The owner and the C3 body as JSON text, rendered by SQLite (see jsonById), cached until it changes. */
    findJson(id: number): SubscriptionJson | undefined {
      const cached = bodies.get(id)
      if (cached) return cached
      const found = render(id, false)
      if (found) bodies.set(id, found)
      return found
    },
    /**
     * A page of a customer's subscriptions, its count and bodies, read in one synchronous call: no
     * write of this process comes between them (another process's commit still can, as between any
     * two reads here). `withGeneration` is PostgreSQL's (one process here clears its own key cache).
     */
    pageOfUser(userId: number, state: State | undefined, offset: number, limit: number, _withGeneration?: boolean): SubscriptionPage {
      const rows = (state ? idsOfUserInState.all(userId, state, limit, offset) : idsOfUser.all(userId, limit, offset)) as unknown as [number][]
      const total = state ? count(countOfUserInState, userId, state) : count(countOfUser, userId)
      return { bodies: jsonMany(rows.map((r) => r[0])), total }
    },
    /**
     * The same, rendered now and never cached: a write answers with what its own unit wrote,
     * which a trigger has just dropped from the cache anyway and which no one may have read yet.
     * `keepLineItems` is for writes that come back to the same subscription (its lifecycle, its
     * updates): its line items are kept for the next one. A creation or the processor's sweep
     * keeps none, or it would fill the memory with subscriptions no one writes again soon.
     */
    renderJson(id: number, keepLineItems = false): SubscriptionJson | undefined {
      return render(id, keepLineItems)
    },
    /** The row a change is decided from: SQLite's one writer holds it until the unit ends. */
    lock(id: number): Subscription | undefined {
      const row = byId.get(id) as unknown as Values | undefined
      return row ? subscriptionOf(row) : undefined
    },
    /** Every subscription of a user, in id order, held as by `lock` (an erasure changes them all). */
    lockAllOfUser(userId: number): Subscription[] {
      return subscriptions(allOfUser.all(userId))
    },
    find(id: number): Subscription | undefined {
      const row = byId.get(id) as unknown as Values | undefined
      return row ? subscriptionOf(row) : undefined
    },
    /** Writes `patch` and answers the subscription as it now stands (no row is read back). */
    update(sub: Subscription, patch: SubscriptionPatch): Subscription {
      // One statement per set of columns, in the patch's own key order: each transition builds
      // its patch the same way every time, so a handful of statements serve every request.
      const now = nowIso()
      const updated: Record<string, unknown> = { ...sub }
      const values: (string | number | null)[] = []
      let signature = ''
      for (const key in patch) {
        const k = key as keyof SubscriptionPatch
        const value = patch[k]
        if (value === undefined) continue
        signature += signature === '' ? k : `,${k}`
        values.push(sqlValue(k, value))
        updated[k] = value
      }
      let stmt = updates.get(signature)
      if (!stmt) {
        const sets = signature === '' ? [] : signature.split(',').map((k) => `${COLUMN_OF[k as keyof SubscriptionPatch]} = ?`)
        sets.push('updated_at = ?')
        stmt = db.prepare(`UPDATE subscriptions SET ${sets.join(', ')} WHERE id = ?`)
        updates.set(signature, stmt)
      }
      values.push(now, sub.id)
      stmt.run(...values)
      updated['updated_at'] = now
      return updated as unknown as Subscription
    },
    /** Due date of the newest installment: with the creation date, the base of C7's interval change. */
    lastDueDate(id: number): string | null {
      return (lastDue.get(id) as unknown as [string | null])[0]
    },
    touch(id: number): void {
      touch.run(nowIso(), id)
    },
    adminList(f: AdminSubscriptionFilter): Subscription[] {
      const { where, args } = adminFilter(f)
      return subscriptions(cached(`SELECT ${SA} FROM subscriptions s WHERE ${where} ORDER BY s.id LIMIT ?`).all(...args))
    },
    /** An export's batch (C18): the list's rows with their owner and item names, one statement. */
    exportBatch(f: AdminSubscriptionFilter): SubscriptionExportRow[] {
      const { where, args } = adminFilter(f)
      const rows = cached(`SELECT ${SA}, u.email, u.external_id, (${EXPORT_ITEMS}) FROM subscriptions s JOIN users u ON u.id = s.user_id
        WHERE ${where} ORDER BY s.id LIMIT ?`).all(...args) as unknown as Values[]
      return rows.map((row) => ({
        subscription: subscriptionOf(row),
        user_email: row[SUBSCRIPTION_COLUMNS.length] as string | null,
        user_external_id: row[SUBSCRIPTION_COLUMNS.length + 1] as string | null,
        items: (JSON.parse(row[SUBSCRIPTION_COLUMNS.length + 2] as string) as ExportItemValues[])
          .map(([quantity, sku, name, unit_price, discount_bp]) => ({ quantity, sku, name, unit_price, discount_bp })),
      }))
    },
    idsWithPaymentSource(sourceId: number): number[] {
      return (withSource.all(sourceId) as unknown as [number][]).map((r) => r[0])
    },
    clearPaymentSource(sourceId: number): void {
      clearPayment.run(nowIso(), sourceId)
    },
    lineItems(subscriptionId: number): PricedLineItem[] {
      return lineItems(lineItemsOf.all(subscriptionId))
    },
    /** The line items of many subscriptions (a page of a list), grouped by subscription. */
    lineItemsOfMany(ids: readonly number[]): Map<number, PricedLineItem[]> {
      const out = new Map<number, PricedLineItem[]>()
      if (ids.length === 0) return out
      for (const li of lineItems(lineItemsIn.all(JSON.stringify(ids)))) {
        const list = out.get(li.subscription_id)
        if (list) list.push(li)
        else out.set(li.subscription_id, [li])
      }
      return out
    },
    findLineItem(id: number): (PricedLineItem & { owner_id: number }) | undefined {
      const row = lineItemOwner.get(id) as unknown as Values | undefined
      return row ? { ...pricedLineItemOf(row), owner_id: row[LINE_ITEM_COLUMNS.length + 3] as number } : undefined
    },
    /** A line item with its owner; SQLite's one writer holds it until the unit ends. */
    lockLineItem(id: number): (PricedLineItem & { owner_id: number }) | undefined {
      const row = lineItemOwner.get(id) as unknown as Values | undefined
      return row ? { ...pricedLineItemOf(row), owner_id: row[LINE_ITEM_COLUMNS.length + 3] as number } : undefined
    },
    lineItemById(id: number): PricedLineItem | undefined {
      const row = lineItemById.get(id) as unknown as Values | undefined
      return row ? pricedLineItemOf(row) : undefined
    },
    /** Inserts a line item and answers it as it now stands, priced (C16: the price is read back). */
    addLineItem(subscriptionId: number, subscribableId: number, quantity: number, oneTime: boolean): PricedLineItem {
      const now = nowIso()
      return lineItem(Number(insertLineItem.run(subscriptionId, subscribableId, quantity, oneTime ? 1 : 0, now, now).lastInsertRowid))
    },
    /**
     * Writes the new product and quantity and answers the item as it now stands, priced: a new
     * quantity keeps the price and discount the item was read with (the unit holds the catalog:
     * SQLite's one writer), a new product's are read back.
     */
    updateLineItem(item: PricedLineItem, subscribableId: number, quantity: number): PricedLineItem {
      const now = nowIso()
      if (subscribableId === item.subscribable_id) {
        updateQuantity.run(quantity, now, item.id)
        return { ...item, quantity, updated_at: now }
      }
      updateLineItem.run(subscribableId, quantity, now, item.id)
      return lineItem(item.id)
    },
    deleteLineItem(id: number): void {
      deleteLineItem.run(id)
    },
    /** Through the partial index of one-time lines (migration 15): a batch without any reads an empty range per id. */
    takeOneTimeLines(subscriptionIds: readonly number[]): PricedLineItem[] {
      if (subscriptionIds.length === 0 || anyOneTime.get() === undefined) return []
      const taken = lineItems(oneTimeIn.all(JSON.stringify(subscriptionIds)))
      if (taken.length > 0) deleteIn.run(JSON.stringify(taken.map((li) => li.id)))
      return taken
    },
    lineItemsOfSubscribable(subscribableId: number): PricedLineItem[] {
      return lineItems(lineItemsOfSubscribable.all(subscribableId))
    },
  }
}
export type SubscriptionsStore = ReturnType<typeof subscriptionsStore>
