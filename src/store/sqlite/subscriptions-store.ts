import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { COLUMN_OF } from '../columns.ts'
import type { LineItem, State, Subscription, SubscriptionPatch } from '../../domain/types.ts'
import type { NewSubscription } from '../../domain/subscription-input.ts'
import { LINE_ITEM_COLUMNS, SUBSCRIPTION_COLUMNS, columns, lineItemOf, nowIso, prepareValues, subscriptionOf, type Values } from './rows.ts'
import type { BodyCache, SubscriptionJson } from './body-cache.ts'
import type { AdminSubscriptionFilter, SubscriptionExportRow } from '../api.ts'
export type { AdminSubscriptionFilter }

function sqlValue(key: keyof SubscriptionPatch, value: unknown): string | number | null {
  if (value === null || value === undefined) return null
  if (key === 'paused') return value ? 1 : 0
  if (key === 'shipping_address' || key === 'billing_address') return JSON.stringify(value)
  return value as string | number
}

/** A line item as C3 renders it (alias `li`). */
const LINE_ITEM_JSON = `json_object('id', li.id, 'subscription_id', li.subscription_id,
  'subscribable_id', li.subscribable_id, 'quantity', li.quantity, 'created_at', li.created_at, 'updated_at', li.updated_at)`
/** A subscription's line items in C3's order (by id). */
const LINE_ITEMS_OF = (subscriptionId: string): string => `SELECT * FROM line_items WHERE subscription_id = ${subscriptionId} ORDER BY id`
/** The C3 body of subscription `s`, with `lineItems` (a JSON value) as its line items. */
const bodyOf = (lineItems: string): string => `json_object(
  'id', s.id, 'user_id', s.user_id, 'state', s.state,
  'paused', json(CASE s.paused WHEN 1 THEN 'true' ELSE 'false' END),
  'interval_length', s.interval_length, 'interval_units', s.interval_units,
  'actionable_date', s.actionable_date, 'end_date', s.end_date,
  'skip_count', s.skip_count, 'successive_skip_count', s.successive_skip_count,
  'payment_method_id', s.payment_method_id, 'payment_source_id', s.payment_source_id,
  'currency', s.currency, 'processing_state', s.processing_state,
  'shipping_address', json(s.shipping_address), 'billing_address', json(s.billing_address),
  'line_items', ${lineItems},
  'created_at', s.created_at, 'updated_at', s.updated_at)`

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

/** Subscription `s`'s line items as `[[quantity, sku, name], …]` in C3's order: the export's item names. */
const EXPORT_ITEMS = `SELECT json_group_array(json_array(x.quantity, x.sku, x.name)) FROM (SELECT li.quantity, sb.sku, sb.name
  FROM line_items li JOIN subscribables sb ON sb.id = li.subscribable_id WHERE li.subscription_id = s.id ORDER BY li.id) x`

/** Subscriptions and their line items. Reads come back as arrays (rows.ts); writes return no rows. */
export function subscriptionsStore(db: DatabaseSync, bodies: BodyCache) {
  const S = columns(SUBSCRIPTION_COLUMNS)
  const L = columns(LINE_ITEM_COLUMNS)
  const prepare = (sql: string): StatementSync => prepareValues(db, sql)
  // The processor's floor starts at the date (migration 4; a trigger would set it otherwise).
  const insert = prepare(`INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date,
      anchor_day, end_date, payment_method_id, payment_source_id, currency, shipping_address, billing_address,
      created_on, created_at, updated_at, due_floor, skip_count, successive_skip_count)
    VALUES (?1, 'active', 0, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?4, ?15, ?16)`)
  const byId = prepare(`SELECT ${S} FROM subscriptions WHERE id = ?`)
  // The hot read (GET a subscription): SQLite builds C3's whole body, line items included, in
  // one statement, so the request neither maps rows to objects nor stringifies them again.
  const jsonById = prepare(`SELECT s.user_id AS user_id, ${bodyOf(`(SELECT json_group_array(${LINE_ITEM_JSON}) FROM (${LINE_ITEMS_OF('s.id')}) li)`)} AS body
    FROM subscriptions s WHERE s.id = ?`)
  // The same body around line items kept as JSONB (body-cache.ts): SQLite embeds a JSONB value
  // as the JSON it encodes, byte for byte what the subquery above makes (a BLOB that is not
  // JSONB is an error, never text in the body).
  const jsonWithLineItems = prepare(`SELECT s.user_id AS user_id, ${bodyOf('?2')} AS body FROM subscriptions s WHERE s.id = ?1`)
  const lineItemsJsonb = prepare(`SELECT jsonb(json_group_array(${LINE_ITEM_JSON})) FROM (${LINE_ITEMS_OF('?')}) li`)
  const idsOfUser = prepare('SELECT id FROM subscriptions WHERE user_id = ? ORDER BY id LIMIT ? OFFSET ?')
  const allOfUser = prepare(`SELECT ${S} FROM subscriptions WHERE user_id = ? ORDER BY id`)
  const idsOfUserInState = prepare('SELECT id FROM subscriptions WHERE user_id = ? AND state = ? ORDER BY id LIMIT ? OFFSET ?')
  const countOfUser = prepare('SELECT count(*) FROM subscriptions WHERE user_id = ?')
  const countOfUserInState = prepare('SELECT count(*) FROM subscriptions WHERE user_id = ? AND state = ?')
  const withSource = prepare('SELECT id FROM subscriptions WHERE payment_source_id = ?')
  const clearPayment = db.prepare('UPDATE subscriptions SET payment_method_id = NULL, payment_source_id = NULL, updated_at = ? WHERE payment_source_id = ?')
  const lineItemsOf = prepare(`SELECT ${L} FROM line_items WHERE subscription_id = ? ORDER BY id`)
  // One statement for any page of a list: the ids come as a JSON array, so no SQL is compiled per request.
  const lineItemsIn = prepare(`SELECT ${L} FROM line_items WHERE subscription_id IN (SELECT value FROM json_each(?)) ORDER BY id`)
  const lineItemById = prepare(`SELECT ${L} FROM line_items WHERE id = ?`)
  const lineItemOwner = prepare(`SELECT ${columns(LINE_ITEM_COLUMNS, 'li')}, s.user_id FROM line_items li JOIN subscriptions s ON s.id = li.subscription_id WHERE li.id = ?`)
  const insertLineItem = db.prepare('INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
  const updateLineItem = db.prepare('UPDATE line_items SET subscribable_id = ?, quantity = ?, updated_at = ? WHERE id = ?')
  // A quantity-only change assigns only the quantity: assigning subscribable_id, even to the value
  // it has, makes SQLite check its foreign key (and would rewrite any index on it).
  const updateQuantity = db.prepare('UPDATE line_items SET quantity = ?, updated_at = ? WHERE id = ?')
  const deleteLineItem = db.prepare('DELETE FROM line_items WHERE id = ?')
  // A scan: no index by catalog item (migration 3); only the admin's rare DELETE of one reads it.
  const lineItemsOfSubscribable = prepare(`SELECT ${L} FROM line_items WHERE subscribable_id = ? ORDER BY id`)
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
  const lineItems = (rows: unknown): LineItem[] => (rows as Values[]).map(lineItemOf)
  /**
   * The C3 body as it stands now, around the kept line items when there are some. With `keep`,
   * a subscription whose line items are not kept has them read and kept for the next write.
   */
  const render = (id: number, keep: boolean): SubscriptionJson | undefined => {
    let items = bodies.lineItems(id)
    const read = items === undefined && keep
    if (read) items = (lineItemsJsonb.get(id) as unknown as [Uint8Array])[0]
    const row = (items === undefined ? jsonById.get(id) : jsonWithLineItems.get(id, items)) as unknown as [number, string] | undefined
    if (!row) return undefined
    // Kept only for a subscription that exists (the aggregate answers [] for any id).
    if (read) bodies.keepLineItems(id, items as Uint8Array)
    return { user_id: row[0], body: row[1] }
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
      for (const li of s.line_items) insertLineItem.run(id, li.subscribable_id, li.quantity, now, now)
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
     * The C3 bodies of a page of subscriptions, in the order of `ids`: from the cache where they
     * are, rendered where not. A list does not fill the cache: its pages would push out the
     * subscriptions customers actually open, for bodies that are rarely read again one by one.
     */
    findJsonMany(ids: readonly number[]): string[] {
      return bodies.getMany(ids).map((cached, i) => {
        if (cached) return cached.body
        const id = ids[i] as number
        const found = render(id, false)
        if (!found) throw new Error(`subscription ${id} vanished between two statements of one request`)
        return found.body
      })
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
    /** The ids of a page of a customer's subscriptions (the list renders them through findJsonMany). */
    idsOfUser(userId: number, state: State | undefined, offset: number, limit: number): number[] {
      const rows = (state ? idsOfUserInState.all(userId, state, limit, offset) : idsOfUser.all(userId, limit, offset)) as unknown as [number][]
      return rows.map((r) => r[0])
    },
    countOfUser(userId: number, state: State | undefined): number {
      return state ? count(countOfUserInState, userId, state) : count(countOfUser, userId)
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
        items: (JSON.parse(row[SUBSCRIPTION_COLUMNS.length + 2] as string) as [number, string, string][]).map(([quantity, sku, name]) => ({ quantity, sku, name })),
      }))
    },
    idsWithPaymentSource(sourceId: number): number[] {
      return (withSource.all(sourceId) as unknown as [number][]).map((r) => r[0])
    },
    clearPaymentSource(sourceId: number): void {
      clearPayment.run(nowIso(), sourceId)
    },
    lineItems(subscriptionId: number): LineItem[] {
      return lineItems(lineItemsOf.all(subscriptionId))
    },
    /** The line items of many subscriptions (a page of a list), grouped by subscription. */
    lineItemsOfMany(ids: readonly number[]): Map<number, LineItem[]> {
      const out = new Map<number, LineItem[]>()
      if (ids.length === 0) return out
      for (const li of lineItems(lineItemsIn.all(JSON.stringify(ids)))) {
        const list = out.get(li.subscription_id)
        if (list) list.push(li)
        else out.set(li.subscription_id, [li])
      }
      return out
    },
    findLineItem(id: number): (LineItem & { owner_id: number }) | undefined {
      const row = lineItemOwner.get(id) as unknown as Values | undefined
      return row ? { ...lineItemOf(row), owner_id: row[6] as number } : undefined
    },
    /** A line item with its owner; SQLite's one writer holds it until the unit ends. */
    lockLineItem(id: number): (LineItem & { owner_id: number }) | undefined {
      const row = lineItemOwner.get(id) as unknown as Values | undefined
      return row ? { ...lineItemOf(row), owner_id: row[6] as number } : undefined
    },
    lineItemById(id: number): LineItem | undefined {
      const row = lineItemById.get(id) as unknown as Values | undefined
      return row ? lineItemOf(row) : undefined
    },
    /** Inserts a line item and answers it: every column is one of its inputs, so none is read back. */
    addLineItem(subscriptionId: number, subscribableId: number, quantity: number): LineItem {
      const now = nowIso()
      const id = Number(insertLineItem.run(subscriptionId, subscribableId, quantity, now, now).lastInsertRowid)
      return { id, subscription_id: subscriptionId, subscribable_id: subscribableId, quantity, created_at: now, updated_at: now }
    },
    /** Writes the new product and quantity and answers the item as it now stands. */
    updateLineItem(item: LineItem, subscribableId: number, quantity: number): LineItem {
      const now = nowIso()
      if (subscribableId === item.subscribable_id) updateQuantity.run(quantity, now, item.id)
      else updateLineItem.run(subscribableId, quantity, now, item.id)
      return { ...item, subscribable_id: subscribableId, quantity, updated_at: now }
    },
    deleteLineItem(id: number): void {
      deleteLineItem.run(id)
    },
    lineItemsOfSubscribable(subscribableId: number): LineItem[] {
      return lineItems(lineItemsOfSubscribable.all(subscribableId))
    },
  }
}
export type SubscriptionsStore = ReturnType<typeof subscriptionsStore>
