import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { LineItem, State, Subscription, SubscriptionPatch } from '../domain/types.ts'
import type { NewSubscription } from '../domain/subscription-input.ts'
import { nowIso, toLineItem, toSubscription, type Row } from './rows.ts'
import type { BodyCache, SubscriptionJson } from './body-cache.ts'

export interface AdminSubscriptionFilter {
  readonly after: number
  readonly limit: number
  readonly state?: string | undefined
  readonly userId?: number | undefined
  readonly actionableBefore?: string | undefined
}

const COLUMN_OF: Record<keyof SubscriptionPatch, string> = {
  state: 'state', paused: 'paused', interval_length: 'interval_length', interval_units: 'interval_units',
  actionable_date: 'actionable_date', anchor_day: 'anchor_day', end_date: 'end_date', skip_count: 'skip_count',
  successive_skip_count: 'successive_skip_count', payment_method_id: 'payment_method_id',
  payment_source_id: 'payment_source_id', currency: 'currency', processing_state: 'processing_state',
  shipping_address: 'shipping_address', billing_address: 'billing_address',
}

function sqlValue(key: keyof SubscriptionPatch, value: unknown): string | number | null {
  if (value === null || value === undefined) return null
  if (key === 'paused') return value ? 1 : 0
  if (key === 'shipping_address' || key === 'billing_address') return JSON.stringify(value)
  return value as string | number
}

/** Subscriptions and their line items. */
export function subscriptionsStore(db: DatabaseSync, bodies: BodyCache) {
  const insert = db.prepare(`INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date,
      anchor_day, end_date, payment_method_id, payment_source_id, currency, shipping_address, billing_address,
      created_on, created_at, updated_at)
    VALUES (?, 'active', 0, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`)
  const byId = db.prepare('SELECT * FROM subscriptions WHERE id = ?')
  // The hot read (GET a subscription): SQLite builds C3's whole body, line items included, in
  // one statement, so the request neither maps rows to objects nor stringifies them again.
  const jsonById = db.prepare(`SELECT s.user_id AS user_id, json_object(
      'id', s.id, 'user_id', s.user_id, 'state', s.state,
      'paused', json(CASE s.paused WHEN 1 THEN 'true' ELSE 'false' END),
      'interval_length', s.interval_length, 'interval_units', s.interval_units,
      'actionable_date', s.actionable_date, 'end_date', s.end_date,
      'skip_count', s.skip_count, 'successive_skip_count', s.successive_skip_count,
      'payment_method_id', s.payment_method_id, 'payment_source_id', s.payment_source_id,
      'currency', s.currency, 'processing_state', s.processing_state,
      'shipping_address', json(s.shipping_address), 'billing_address', json(s.billing_address),
      'line_items', (SELECT json_group_array(json_object('id', li.id, 'subscription_id', li.subscription_id,
          'subscribable_id', li.subscribable_id, 'quantity', li.quantity, 'created_at', li.created_at, 'updated_at', li.updated_at))
        FROM (SELECT * FROM line_items WHERE subscription_id = s.id ORDER BY id) li),
      'created_at', s.created_at, 'updated_at', s.updated_at) AS body
    FROM subscriptions s WHERE s.id = ?`)
  jsonById.setReturnArrays(true)
  const ofUser = db.prepare('SELECT * FROM subscriptions WHERE user_id = ? ORDER BY id LIMIT ? OFFSET ?')
  const ofUserInState = db.prepare('SELECT * FROM subscriptions WHERE user_id = ? AND state = ? ORDER BY id LIMIT ? OFFSET ?')
  const countOfUser = db.prepare('SELECT count(*) AS n FROM subscriptions WHERE user_id = ?')
  const countOfUserInState = db.prepare('SELECT count(*) AS n FROM subscriptions WHERE user_id = ? AND state = ?')
  const withSource = db.prepare('SELECT id FROM subscriptions WHERE payment_source_id = ?')
  const clearPayment = db.prepare('UPDATE subscriptions SET payment_method_id = NULL, payment_source_id = NULL, updated_at = ? WHERE payment_source_id = ?')
  const lineItemsOf = db.prepare('SELECT * FROM line_items WHERE subscription_id = ? ORDER BY id')
  const lineItemById = db.prepare('SELECT * FROM line_items WHERE id = ?')
  const lineItemOwner = db.prepare('SELECT li.*, s.user_id AS owner_id FROM line_items li JOIN subscriptions s ON s.id = li.subscription_id WHERE li.id = ?')
  const insertLineItem = db.prepare('INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *')
  const updateLineItem = db.prepare('UPDATE line_items SET subscribable_id = ?, quantity = ?, updated_at = ? WHERE id = ? RETURNING *')
  const deleteLineItem = db.prepare('DELETE FROM line_items WHERE id = ?')
  const lineItemsOfSubscribable = db.prepare('SELECT * FROM line_items WHERE subscribable_id = ? ORDER BY id')
  const touch = db.prepare('UPDATE subscriptions SET updated_at = ? WHERE id = ?')
  const lastDue = db.prepare('SELECT max(due_date) AS d FROM installments WHERE subscription_id = ?')
  const updates = new Map<string, StatementSync>()

  const lineItemsInStatements = new Map<number, StatementSync>()
  const lineItemsIn = (ids: readonly number[]): Map<number, LineItem[]> => {
    const out = new Map<number, LineItem[]>()
    if (ids.length === 0) return out
    // One statement per page size, prepared once: a list request must not compile SQL.
    let stmt = lineItemsInStatements.get(ids.length)
    if (!stmt) {
      stmt = db.prepare(`SELECT * FROM line_items WHERE subscription_id IN (${ids.map(() => '?').join(',')}) ORDER BY id`)
      lineItemsInStatements.set(ids.length, stmt)
    }
    const rows = stmt.all(...ids) as Row[]
    for (const r of rows) {
      const li = toLineItem(r)
      const list = out.get(li.subscription_id)
      if (list) list.push(li)
      else out.set(li.subscription_id, [li])
    }
    return out
  }

  return {
    create(userId: number, s: NewSubscription, today: string): Subscription {
      const now = nowIso()
      const row = insert.get(
        userId, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day, s.end_date,
        s.payment_method_id, s.payment_source_id, s.currency,
        s.shipping_address ? JSON.stringify(s.shipping_address) : null,
        s.billing_address ? JSON.stringify(s.billing_address) : null,
        today, now, now,
      ) as Row
      return toSubscription(row)
    },
    /** The owner and the C3 body as JSON text, rendered by SQLite (see jsonById), cached until it changes. */
    findJson(id: number): SubscriptionJson | undefined {
      const cached = bodies.get(id)
      if (cached) return cached
      const row = jsonById.get(id) as unknown as [number, string] | undefined
      if (!row) return undefined
      const found = { user_id: row[0], body: row[1] }
      bodies.set(id, found)
      return found
    },
    find(id: number): Subscription | undefined {
      const r = byId.get(id) as Row | undefined
      return r ? toSubscription(r) : undefined
    },
    update(id: number, patch: SubscriptionPatch): Subscription {
      const keys = (Object.keys(patch) as (keyof SubscriptionPatch)[]).filter((k) => patch[k] !== undefined).sort()
      const signature = keys.join(',')
      let stmt = updates.get(signature)
      if (!stmt) {
        const sets = keys.map((k) => `${COLUMN_OF[k]} = ?`)
        sets.push('updated_at = ?')
        stmt = db.prepare(`UPDATE subscriptions SET ${sets.join(', ')} WHERE id = ? RETURNING *`)
        updates.set(signature, stmt)
      }
      const values = keys.map((k) => sqlValue(k, patch[k]))
      return toSubscription(stmt.get(...values, nowIso(), id) as Row)
    },
    /** Due date of the newest installment: with the creation date, the base of C7's interval change. */
    lastDueDate(id: number): string | null {
      return (lastDue.get(id) as { d: string | null }).d
    },
    touch(id: number): void {
      touch.run(nowIso(), id)
    },
    listOfUser(userId: number, state: State | undefined, offset: number, limit: number): Subscription[] {
      const rows = (state ? ofUserInState.all(userId, state, limit, offset) : ofUser.all(userId, limit, offset)) as Row[]
      return rows.map(toSubscription)
    },
    countOfUser(userId: number, state: State | undefined): number {
      return ((state ? countOfUserInState.get(userId, state) : countOfUser.get(userId)) as { n: number }).n
    },
    adminList(f: AdminSubscriptionFilter): Subscription[] {
      const where = ['id > ?']
      const args: (string | number)[] = [f.after]
      if (f.state !== undefined) { where.push('state = ?'); args.push(f.state) }
      if (f.userId !== undefined) { where.push('user_id = ?'); args.push(f.userId) }
      if (f.actionableBefore !== undefined) { where.push('actionable_date < ?'); args.push(f.actionableBefore) }
      args.push(f.limit)
      return (db.prepare(`SELECT * FROM subscriptions WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`).all(...args) as Row[]).map(toSubscription)
    },
    idsWithPaymentSource(sourceId: number): number[] {
      return (withSource.all(sourceId) as { id: number }[]).map((r) => r.id)
    },
    clearPaymentSource(sourceId: number): void {
      clearPayment.run(nowIso(), sourceId)
    },
    lineItems(subscriptionId: number): LineItem[] {
      return (lineItemsOf.all(subscriptionId) as Row[]).map(toLineItem)
    },
    lineItemsOfMany: lineItemsIn,
    findLineItem(id: number): (LineItem & { owner_id: number }) | undefined {
      const r = lineItemOwner.get(id) as Row | undefined
      return r ? { ...toLineItem(r), owner_id: r['owner_id'] as number } : undefined
    },
    lineItemById(id: number): LineItem | undefined {
      const r = lineItemById.get(id) as Row | undefined
      return r ? toLineItem(r) : undefined
    },
    addLineItem(subscriptionId: number, subscribableId: number, quantity: number): LineItem {
      const now = nowIso()
      return toLineItem(insertLineItem.get(subscriptionId, subscribableId, quantity, now, now) as Row)
    },
    updateLineItem(id: number, subscribableId: number, quantity: number): LineItem {
      return toLineItem(updateLineItem.get(subscribableId, quantity, nowIso(), id) as Row)
    },
    deleteLineItem(id: number): void {
      deleteLineItem.run(id)
    },
    lineItemsOfSubscribable(subscribableId: number): LineItem[] {
      return (lineItemsOfSubscribable.all(subscribableId) as Row[]).map(toLineItem)
    },
  }
}
export type SubscriptionsStore = ReturnType<typeof subscriptionsStore>
