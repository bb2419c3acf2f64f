import type { PricedLineItem, State, Subscription, SubscriptionPatch } from '../../domain/types.ts'
import { COLUMN_OF } from '../columns.ts'
import type { NewSubscription } from '../../domain/subscription-input.ts'
import { renderSubscription } from '../../domain/representation.ts'
import type { AdminSubscriptionFilter, ExportItemValues, SubscriptionExportRow, SubscriptionJson, SubscriptionPage, SubscriptionsTx } from '../api.ts'
import { CREDENTIAL_GENERATION, type Sql } from './sql.ts'
import { unlessRemoved } from './conflict.ts'
import { LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_COLUMNS, PRICED_LINE_ITEM_FROM, SUBSCRIPTION_COLUMNS, columns, nowIso, pricedLineItemOf, subscriptionOf, type SubscriptionRow } from './rows.ts'
import { priceJoin } from '../money-sql.ts'
import { versionsOf, type KeptBodies } from './kept-bodies.ts'
import type { ReadBatch } from './read-batch.ts'

const S = columns(SUBSCRIPTION_COLUMNS)

const SA = columns(SUBSCRIPTION_COLUMNS, 's')

/** The WHERE of an admin list of subscriptions `s` (C11, C13, C18), with its arguments: `after` first, `limit` last. */
function adminFilter(f: AdminSubscriptionFilter): { where: string; args: unknown[] } {
  const where = ['s.id > $1']
  const args: unknown[] = [f.after]
  const add = (condition: string, value: unknown): void => {
    args.push(value)
    where.push(`${condition} $${args.length}`)
  }
  if (f.state !== undefined) add('s.state =', f.state)
  if (f.userId !== undefined) add('s.user_id =', f.userId)
  if (f.actionableBefore !== undefined) add('s.actionable_date <', f.actionableBefore)
  if (f.paused !== undefined) add('s.paused =', f.paused)
  args.push(f.limit)
  return { where: where.join(' AND '), args }
}

/**
 * Subscription `s`'s line items as `[[quantity, sku, name, unit_price, discount_bp], …]` in C3's
 * order: the export's item names and, priced in `s`'s currency as the catalog says now, its C16 money.
 */
const EXPORT_ITEMS = `SELECT coalesce(json_agg(json_build_array(li.quantity, c.sku, c.name, p.amount, c.discount_bp) ORDER BY li.id), '[]')
  FROM line_items li ${priceJoin('s.currency')} WHERE li.subscription_id = s.id`
type ExportRow = SubscriptionRow & { readonly user_email: string | null; readonly user_external_id: string | null; readonly items: ExportItemValues[] }

/** A patch value as its column holds it: addresses are JSON text, `paused` a boolean as it is. */
function sqlValue(key: keyof SubscriptionPatch, value: unknown): unknown {
  if (value === null) return null
  if (key === 'shipping_address' || key === 'billing_address') return JSON.stringify(value)
  return value
}

/**
 * A subscription (alias `o`) with its line items (by id, as C3 lists them) priced as the catalog
 * says now (C16), in one row: the items come back as a JSON array that pg parses, so a body
 * costs one round trip.
 */
const bodyColumns = (s: string, lineItems: string): string => `${columns(SUBSCRIPTION_COLUMNS, s)},
  (SELECT coalesce(json_agg(x ORDER BY x.id), '[]') FROM (
    SELECT ${columns(LINE_ITEM_COLUMNS, 'li')},
      ${s}.currency AS currency, p.amount AS unit_price, c.discount_bp AS discount_bp
    FROM ${lineItems} li ${priceJoin(`${s}.currency`)} WHERE li.subscription_id = ${s}.id) x) AS line_items`
const WITH_LINE_ITEMS = bodyColumns('o', 'line_items')
type BodyRow = SubscriptionRow & { readonly line_items: PricedLineItem[] }
const BODY = `SELECT ${WITH_LINE_ITEMS} FROM subscriptions o WHERE o.id = $1`
const BODY_WITH_GENERATION = `SELECT ${WITH_LINE_ITEMS}, (${CREDENTIAL_GENERATION}) AS generation FROM subscriptions o WHERE o.id = $1`
/** A GET's statements with kept bodies: the body with its versions, or the versions alone (KeptBodies). */
const VERSIONED_BODY = `SELECT ${WITH_LINE_ITEMS}, ${versionsOf('o')} AS versions, (${CREDENTIAL_GENERATION}) AS generation FROM subscriptions o WHERE o.id = $1`
const VERSIONS = `SELECT o.user_id, ${versionsOf('o')} AS versions, (${CREDENTIAL_GENERATION}) AS generation FROM subscriptions o WHERE o.id = $1`

/** A body row's subscription and priced line items. */
const partsOf = (row: BodyRow): { sub: Subscription; items: PricedLineItem[] } => ({ sub: subscriptionOf(row), items: row.line_items.map(pricedLineItemOf) })
/** The C3 body, rendered by the domain (representation.ts) as SQLite's json_object renders it. */
const bodyFrom = (sub: Subscription, items: readonly PricedLineItem[]): string => JSON.stringify(renderSubscription(sub, items))
const bodyOf = (row: BodyRow): string => {
  const { sub, items } = partsOf(row)
  return bodyFrom(sub, items)
}

// The processor's floor starts at the date ($4 twice; the due_floor trigger would set it anyway).
// The line items go in with it, in the order given (ORDER BY ordinality: their ids follow it).
// It answers the new subscription as a body read would (WITH_LINE_ITEMS, from what went in), so
// the create's answer needs no read of its own.
const CREATE = `WITH s AS (
    INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date,
      anchor_day, end_date, payment_method_id, payment_source_id, currency, shipping_address, billing_address,
      created_on, created_at, updated_at, due_floor, skip_count, successive_skip_count)
    VALUES ($1, 'active', false, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13, $4, $14, $15)
    RETURNING *
  ), items AS (
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, one_time, created_at, updated_at)
    SELECT s.id, u.subscribable_id, u.quantity, u.one_time, $13, $13
    FROM s, unnest($16::bigint[], $17::integer[], $18::boolean[]) WITH ORDINALITY AS u(subscribable_id, quantity, one_time, n)
    ORDER BY u.n
    RETURNING *
  )
  SELECT ${bodyColumns('s', 'items')} FROM s`

// A line item with its owner. Locking both rows, the subscription's first (the locking clauses'
// order), makes a unit that waited on the subscription see the item as it was committed then: the
// subscription's lock alone would answer the row version read before the wait, even one deleted
// meanwhile. Units that write a line item hold its subscription first, so the order never deadlocks them.
const LINE_ITEM_WITH_OWNER = `SELECT ${PRICED_LINE_ITEM_COLUMNS}, s.user_id AS owner_id FROM ${PRICED_LINE_ITEM_FROM}`
/** A line item a statement just wrote (the CTE `w`), read back priced. */
const PRICED_WRITTEN = `SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM w li JOIN subscriptions s ON s.id = li.subscription_id ${priceJoin('s.currency')}`

type OwnedLineItem = PricedLineItem & { owner_id: number }
const ownedOf = (row: PricedLineItem & { owner_id: number }): OwnedLineItem => ({ ...pricedLineItemOf(row), owner_id: row.owner_id })

/** The UPDATE for one set of patched columns, in the patch's key order: a handful serve every request. */
const updateTexts = new Map<string, string>()
function updateText(keys: readonly (keyof SubscriptionPatch)[]): string {
  const signature = keys.join(',')
  let text = updateTexts.get(signature)
  if (text === undefined) {
    const sets = keys.map((k, i) => `${COLUMN_OF[k]} = $${i + 1}`)
    sets.push(`updated_at = $${keys.length + 1}`)
    text = `UPDATE subscriptions SET ${sets.join(', ')} WHERE id = $${keys.length + 2}`
    updateTexts.set(signature, text)
  }
  return text
}

/** The foreign key from a line item to its catalog item (PostgreSQL's default name). */
const ITEM_KEY = 'line_items_subscribable_id_fkey'

/** What the pool's reads answer a GET with: the bodies they keep, and the reads that travel together. */
export interface GetReads {
  readonly bodies: KeptBodies
  readonly reads: ReadBatch
}

/**
 * Subscriptions and their line items. A GET's body may be kept (`gets`, the pool's reads), and
 * is answered only when the database says its rows are the ones it was rendered from.
 */
export function subscriptionsRepo(sql: Sql, gets?: GetReads): SubscriptionsTx {
  const subscription = async (text: string, values: readonly unknown[]): Promise<Subscription | undefined> => {
    const row = await sql.one<SubscriptionRow>(text, values)
    return row ? subscriptionOf(row) : undefined
  }
  const subscriptions = async (text: string, values: readonly unknown[]): Promise<Subscription[]> =>
    (await sql.rows<SubscriptionRow>(text, values)).map(subscriptionOf)
  const lineItems = async (text: string, values: readonly unknown[]): Promise<PricedLineItem[]> =>
    (await sql.rows<PricedLineItem>(text, values)).map(pricedLineItemOf)
  const written = async (text: string, values: readonly unknown[]): Promise<PricedLineItem> => {
    const [item] = await lineItems(text, values)
    if (item === undefined) throw new Error('a line item write answered no row')
    return item
  }
  const ids = async (text: string, values: readonly unknown[]): Promise<number[]> =>
    (await sql.rows<{ id: number }>(text, values)).map((r) => r.id)
  const ownedLineItem = async (text: string, id: number): Promise<OwnedLineItem | undefined> => {
    const row = await sql.one<PricedLineItem & { owner_id: number }>(text, [id])
    return row ? ownedOf(row) : undefined
  }
  const render = async (id: number, withGeneration = false): Promise<SubscriptionJson | undefined> => {
    if (withGeneration) {
      const row = await sql.one<BodyRow & { generation: number }>(BODY_WITH_GENERATION, [id])
      return row ? { user_id: row.user_id, body: bodyOf(row), generation: row.generation } : undefined
    }
    if (kept !== undefined && kept.sub.id === id && kept.at === sql.sent) return { user_id: kept.sub.user_id, body: bodyFrom(kept.sub, kept.items) }
    const row = await sql.one<BodyRow>(BODY, [id])
    return row ? { user_id: row.user_id, body: bodyOf(row) } : undefined
  }
  /**
   * A GET's body (`gets` given: the pool's reads only, never a unit's, whose rows may change
   * again under the same `xmin` before it commits), its statements sent with other GETs'
   * (read-batch.ts). The versions are read every time, with the generation; a kept body answers
   * when they match, else the body is read again with them. The generation always comes, asked
   * for or not: one statement text each way, not two.
   */
  const renderVersioned = async ({ bodies: held, reads }: GetReads, id: number, withGeneration: boolean): Promise<SubscriptionJson | undefined> => {
    const kept = held.get(id)
    if (kept !== undefined) {
      const row = await reads.one<{ user_id: number; versions: string | null; generation: number }>(VERSIONS, [id])
      if (row === undefined) {
        held.forget(id)
        return undefined
      }
      if (row.versions === kept.versions) {
        held.hits++
        return { user_id: kept.userId, body: kept.body, ...(withGeneration ? { generation: row.generation } : {}) }
      }
      // Changed, or now too old to be trusted: either way not kept as it is.
      held.forget(id)
    }
    const row = await reads.one<BodyRow & { versions: string | null; generation: number }>(VERSIONED_BODY, [id])
    if (row === undefined) return undefined
    const body = bodyOf(row)
    // No versions: a row too old for its transaction id to be trusted (versionsOf). Not kept.
    if (row.versions !== null) held.keep(id, row.user_id, body, row.versions)
    return { user_id: row.user_id, body, ...(withGeneration ? { generation: row.generation } : {}) }
  }
  /**
   * The subscription a unit created or locked `forBody`, with its line items, as it now stands:
   * kept while nothing but this repository's own `update` or `touch` of it went through the unit
   * since (`sql.sent` counts every statement), so its body is the one a read would render. A line
   * item's change goes through `sql` too and ends it; its rows are held (FOR UPDATE), and every
   * other unit that changes its line items locks it first.
   */
  let kept: { readonly sub: Subscription; readonly items: PricedLineItem[]; readonly at: number } | undefined
  const keep = (row: BodyRow): Subscription => {
    kept = { ...partsOf(row), at: sql.sent }
    return kept.sub
  }
  const keepIf = (id: number, sub: Subscription, before: number): void => {
    kept = kept !== undefined && kept.sub.id === id && kept.at === before ? { sub, items: kept.items, at: sql.sent } : undefined
  }

  return {
    async create(userId: number, s: NewSubscription, today: string): Promise<number> {
      const now = nowIso()
      const row = await unlessRemoved(sql.one<BodyRow>(CREATE, [
        userId, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day, s.end_date,
        s.payment_method_id, s.payment_source_id, s.currency,
        s.shipping_address ? JSON.stringify(s.shipping_address) : null,
        s.billing_address ? JSON.stringify(s.billing_address) : null,
        today, now, s.skip_count ?? 0, s.successive_skip_count ?? 0,
        s.line_items.map((li) => li.subscribable_id), s.line_items.map((li) => li.quantity), s.line_items.map((li) => li.one_time === true),
      ]), ITEM_KEY)
      if (!row) throw new Error('INSERT … RETURNING answered no subscription id')
      return keep(row).id
    },
    findJson: (id: number, withGeneration = false) => (gets === undefined ? render(id, withGeneration) : renderVersioned(gets, id, withGeneration)),
    /**
     * One statement for the page, its count and (when asked) the credentials' generation, so all
     * are of one moment and a list costs one round trip: the page joined laterally to one row, so
     * an empty page still answers the count.
     */
    async pageOfUser(userId: number, state: State | undefined, offset: number, limit: number, withGeneration = false): Promise<SubscriptionPage> {
      const inState = state === undefined ? '' : ' AND state = $4'
      const rows = await sql.rows<BodyRow & { page_total: number; page_generation?: number }>(`SELECT
          (SELECT count(*) FROM subscriptions WHERE user_id = $1${inState}) AS page_total,
          ${withGeneration ? `(${CREDENTIAL_GENERATION}) AS page_generation,` : ''} p.*
        FROM (SELECT 1) one LEFT JOIN LATERAL (
          SELECT ${WITH_LINE_ITEMS} FROM subscriptions o WHERE o.user_id = $1${inState.replace('state', 'o.state')} ORDER BY o.id LIMIT $2 OFFSET $3
        ) p ON true ORDER BY p.id`, state === undefined ? [userId, limit, offset] : [userId, limit, offset, state])
      const first = rows[0]
      const bodies = rows.filter((r) => r.id !== null).map(bodyOf)
      return { bodies, total: first?.page_total ?? 0, ...(withGeneration ? { generation: first?.page_generation } : {}) }
    },
    /**
     * `keepLineItems` only steers SQLite's line-item cache. Here a body is rendered without a read
     * after `lock(id, true)` or `create` (`kept`, above); otherwise it is read.
     */
    renderJson: (id: number) => render(id),
    async lock(id: number, forBody = false): Promise<Subscription | undefined> {
      if (!forBody || !sql.inUnit) return subscription(`SELECT ${S} FROM subscriptions WHERE id = $1 FOR UPDATE`, [id])
      const row = await sql.one<BodyRow>(`SELECT ${WITH_LINE_ITEMS} FROM subscriptions o WHERE o.id = $1 FOR UPDATE OF o`, [id])
      return row ? keep(row) : undefined
    },
    /** In id order, as every unit that holds several subscriptions takes them (no deadlock between them). */
    lockAllOfUser: (userId: number) => subscriptions(`SELECT ${S} FROM subscriptions WHERE user_id = $1 ORDER BY id FOR UPDATE`, [userId]),
    find: (id: number) => subscription(`SELECT ${S} FROM subscriptions WHERE id = $1`, [id]),
    /** Writes `patch` and answers the subscription as it now stands (no row is read back). */
    async update(sub: Subscription, patch: SubscriptionPatch): Promise<Subscription> {
      const now = nowIso()
      const updated: Record<string, unknown> = { ...sub }
      const keys: (keyof SubscriptionPatch)[] = []
      const values: unknown[] = []
      for (const key in patch) {
        const k = key as keyof SubscriptionPatch
        const value = patch[k]
        if (value === undefined) continue
        keys.push(k)
        values.push(sqlValue(k, value))
        updated[k] = value
      }
      const before = sql.sent
      await sql.later(updateText(keys), [...values, now, sub.id])
      updated['updated_at'] = now
      keepIf(sub.id, updated as unknown as Subscription, before)
      return updated as unknown as Subscription
    },
    async lastDueDate(id: number): Promise<string | null> {
      return (await sql.one<{ d: string | null }>('SELECT max(due_date) AS d FROM installments WHERE subscription_id = $1', [id]))?.d ?? null
    },
    async touch(id: number): Promise<void> {
      const before = sql.sent
      const now = nowIso()
      await sql.later('UPDATE subscriptions SET updated_at = $1 WHERE id = $2', [now, id])
      if (kept !== undefined) keepIf(id, { ...kept.sub, updated_at: now }, before)
    },
    adminList(f: AdminSubscriptionFilter): Promise<Subscription[]> {
      const { where, args } = adminFilter(f)
      return subscriptions(`SELECT ${SA} FROM subscriptions s WHERE ${where} ORDER BY s.id LIMIT $${args.length}`, args)
    },
    /** An export's batch (C18): the list's rows with their owner and item names, one statement. */
    async exportBatch(f: AdminSubscriptionFilter): Promise<SubscriptionExportRow[]> {
      const { where, args } = adminFilter(f)
      const rows = await sql.rows<ExportRow>(`SELECT ${SA}, u.email AS user_email, u.external_id AS user_external_id, (${EXPORT_ITEMS}) AS items
        FROM subscriptions s JOIN users u ON u.id = s.user_id WHERE ${where} ORDER BY s.id LIMIT $${args.length}`, args)
      return rows.map((r) => ({
        subscription: subscriptionOf(r),
        user_email: r.user_email,
        user_external_id: r.user_external_id,
        items: r.items.map(([quantity, sku, name, unit_price, discount_bp]) => ({ quantity, sku, name, unit_price, discount_bp })),
      }))
    },
    /**
     * Held as by `lockAllOfUser`, in id order: the caller records an event for each and clears them
     * all, and none of them may change in between.
     */
    idsWithPaymentSource: (sourceId: number) =>
      ids('SELECT id FROM subscriptions WHERE payment_source_id = $1 ORDER BY id FOR UPDATE', [sourceId]),
    async clearPaymentSource(sourceId: number): Promise<void> {
      await sql.run('UPDATE subscriptions SET payment_method_id = NULL, payment_source_id = NULL, updated_at = $1 WHERE payment_source_id = $2', [nowIso(), sourceId])
    },
    lineItems: (subscriptionId: number) => lineItems(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.subscription_id = $1 ORDER BY li.id`, [subscriptionId]),
    /** The line items of many subscriptions (a page of a list), grouped by subscription. */
    async lineItemsOfMany(list: readonly number[]): Promise<Map<number, PricedLineItem[]>> {
      const out = new Map<number, PricedLineItem[]>()
      if (list.length === 0) return out
      for (const li of await lineItems(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.subscription_id = ANY($1::bigint[]) ORDER BY li.id`, [list])) {
        const items = out.get(li.subscription_id)
        if (items) items.push(li)
        else out.set(li.subscription_id, [li])
      }
      return out
    },
    findLineItem: (id: number) => ownedLineItem(`${LINE_ITEM_WITH_OWNER} WHERE li.id = $1`, id),
    lockLineItem: (id: number) => ownedLineItem(`${LINE_ITEM_WITH_OWNER} WHERE li.id = $1 FOR UPDATE OF s, li`, id),
    async lineItemById(id: number): Promise<PricedLineItem | undefined> {
      return (await lineItems(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM} WHERE li.id = $1`, [id]))[0]
    },
    /** Inserts a line item and answers it priced (C16), in one statement. */
    addLineItem(subscriptionId: number, subscribableId: number, quantity: number, oneTime: boolean): Promise<PricedLineItem> {
      return unlessRemoved(written(`WITH w AS (INSERT INTO line_items (subscription_id, subscribable_id, quantity, one_time, created_at, updated_at)
        VALUES ($1, $2, $3, $5, $4, $4) RETURNING *) ${PRICED_WRITTEN}`, [subscriptionId, subscribableId, quantity, nowIso(), oneTime]), ITEM_KEY)
    },
    /**
     * Writes the new product and quantity and answers the item as it now stands, priced: a new
     * quantity keeps the price and discount the item was read with in this unit; a new product's
     * are read back in the same statement (PostgreSQL checks the foreign key only then).
     */
    async updateLineItem(item: PricedLineItem, subscribableId: number, quantity: number): Promise<PricedLineItem> {
      const now = nowIso()
      if (subscribableId === item.subscribable_id) {
        await sql.later('UPDATE line_items SET quantity = $1, updated_at = $2 WHERE id = $3', [quantity, now, item.id])
        return { ...item, quantity, updated_at: now }
      }
      return unlessRemoved(written(`WITH w AS (UPDATE line_items SET subscribable_id = $1, quantity = $2, updated_at = $3 WHERE id = $4 RETURNING *)
        ${PRICED_WRITTEN}`, [subscribableId, quantity, now, item.id]), ITEM_KEY)
    },
    async deleteLineItem(id: number): Promise<void> {
      await sql.later('DELETE FROM line_items WHERE id = $1', [id])
    },
    /**
     * One statement through the partial index of one-time lines (migration 15). The batch's
     * subscriptions are held by its unit (the due walk locks them), so no request changes these
     * lines meanwhile; the rows deleted are read back priced as they were.
     */
    takeOneTimeLines(subscriptionIds: readonly number[]): Promise<PricedLineItem[]> {
      if (subscriptionIds.length === 0) return Promise.resolve([])
      return lineItems(`WITH w AS (DELETE FROM line_items WHERE one_time AND subscription_id = ANY($1::bigint[]) RETURNING *)
        ${PRICED_WRITTEN} ORDER BY li.id`, [subscriptionIds])
    },
    /**
     * Held as by `lockLineItem`: the caller deletes each with an event, so an item moved to
     * another product meanwhile must drop out (the lock rechecks the condition on the row as
     * committed). A scan, as on SQLite: only the admin's rare DELETE of a catalog item reads it.
     */
    lineItemsOfSubscribable(subscribableId: number): Promise<PricedLineItem[]> {
      return lineItems(`SELECT ${PRICED_LINE_ITEM_COLUMNS} FROM ${PRICED_LINE_ITEM_FROM}
        WHERE li.subscribable_id = $1 ORDER BY li.id FOR UPDATE OF s, li`, [subscribableId])
    },
  }
}
