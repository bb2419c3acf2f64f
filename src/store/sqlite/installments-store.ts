import type { DatabaseSync } from 'node:sqlite'
import type { Address, State, Subscription } from '../../domain/types.ts'
import type { DueFields } from '../../domain/processing.ts'
import { INSTALLMENT_STATES, type Attempt, type Installment, type InstallmentState, type SnapshotLine } from '../../domain/installment.ts'
import { SUBSCRIPTION_COLUMNS, columns, prepareValues, subscriptionOf, type Row, type Values } from './rows.ts'
import { latestEventOf } from './events-store.ts'
import { discountOf, priceJoin, sqliteMoneyText } from '../money-sql.ts'
import { reportUpsert } from './migrations.ts'
import type { InstallmentChange, AdminInstallmentFilter, DueRow, BatchPlan, UnitContext } from '../api.ts'
export type { InstallmentChange, AdminInstallmentFilter, DueRow, BatchPlan }

function toInstallment(r: Row): Installment {
  return {
    id: r['id'] as number,
    subscription_id: r['subscription_id'] as number,
    user: { id: r['user_id'] as number, email: r['user_email'] as string | null, external_id: r['user_external_id'] as string | null },
    due_date: r['due_date'] as string,
    state: r['state'] as InstallmentState,
    retry_at: r['retry_at'] as string | null,
    first_failed_at: r['first_failed_at'] as string | null,
    replayable_attempt_id: r['replayable_attempt_id'] as number | null,
    line_items: JSON.parse(r['line_items'] as string) as SnapshotLine[],
    shipping_address: r['shipping_address'] === null ? null : (JSON.parse(r['shipping_address'] as string) as Address),
    billing_address: r['billing_address'] === null ? null : (JSON.parse(r['billing_address'] as string) as Address),
    payment_method_id: r['payment_method_id'] as number | null,
    payment_source_id: r['payment_source_id'] as number | null,
    currency: r['currency'] as string,
    subtotal: r['subtotal'] as string | null,
    discount_total: r['discount_total'] as string | null,
    total: r['total'] as string | null,
    created_at: r['created_at'] as string,
    updated_at: r['updated_at'] as string,
  }
}

const toAttempt = (r: Row): Attempt => ({
  id: r['id'] as number,
  installment_id: r['installment_id'] as number,
  result: r['result'] as string,
  order_reference: r['order_reference'] as string | null,
  message: r['message'] as string | null,
  created_at: r['created_at'] as string,
})

type DueArray = [number, string, number, number, string, string | null, number | null, string | null, number, string | null, string]

// Read as arrays (in DUE_COLUMNS order): a third cheaper than rows as objects, a million times over.
const toDueRow = (r: DueArray): DueRow => ({
  id: r[0],
  state: r[1] as State,
  paused: r[2] === 1,
  interval_length: r[3],
  interval_units: r[4] as DueRow['interval_units'],
  actionable_date: r[5],
  anchor_day: r[6],
  end_date: r[7],
  has_items: r[8] === 1,
  due_floor: r[9],
  currency: r[10],
})

/**
 * An installment row with its customer (C13): the subscription's owner, read through the
 * subscription at each read, so a changed or erased email shows as it stands now. Every read of
 * whole installments selects these columns from this join (`toInstallment` needs both).
 */
const INSTALLMENT_COLUMNS = 'i.*, u.id AS user_id, u.email AS user_email, u.external_id AS user_external_id'
const withUser = (installments: string): string =>
  `${installments} JOIN subscriptions s ON s.id = i.subscription_id JOIN users u ON u.id = s.user_id`

const ACTING = "state IN ('active', 'pending_cancellation')"
/** The subscription `alias` has something to deliver. */
const hasItems = (alias: string): string => `EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = ${alias}.id)`
const DUE_COLUMNS = `s.id, s.state, s.paused, s.interval_length, s.interval_units, s.actionable_date, s.anchor_day, s.end_date,
  ${hasItems('s')} AS has_items, s.due_floor, s.currency`

/**
 * The snapshot of every subscription of a batch (?1: the plans as JSON, [subscription id, …]):
 * per subscription (`sid`), its line items in line item order (the index's order, which the
 * grouping follows) as the installment keeps them (`lines`, JSON text), and C16's subtotal,
 * discount_total and total (null when a line has no price), each line priced in its
 * subscription's currency as the catalog says now. One level, no subquery: a million of them
 * (migration 10 keeps the price and percent as shown, so only the line's total is formatted).
 */
const AMOUNT = 'li.quantity * p.amount'
const DISCOUNT = discountOf(AMOUNT, 'c.discount_bp')
const snapshotTotal = (sums: string): string => `CASE WHEN count(p.amount) = count(*) THEN ${sqliteMoneyText(sums, 'max(p.minor_unit)')} END`
const SNAPSHOTS = `SELECT li.subscription_id AS sid,
    json_group_array(json_object('subscribable_id', li.subscribable_id, 'sku', c.sku, 'name', c.name, 'quantity', li.quantity,
      'price', p.amount_text, 'discount_percent', c.discount_percent, 'total', ${sqliteMoneyText(`${AMOUNT} - ${DISCOUNT}`, 'p.minor_unit')})) AS lines,
    ${snapshotTotal(`sum(${AMOUNT})`)} AS subtotal, ${snapshotTotal(`sum(${DISCOUNT})`)} AS discount_total,
    ${snapshotTotal(`sum(${AMOUNT}) - sum(${DISCOUNT})`)} AS total
  FROM line_items li JOIN subscriptions ls ON ls.id = li.subscription_id ${priceJoin('ls.currency')}
  WHERE li.subscription_id IN (SELECT value ->> 0 FROM json_each(?1))
  GROUP BY li.subscription_id`

/** Installments, their attempts, and the processor's reads and batch writes. */
export function installmentsStore(db: DatabaseSync, context: () => UnitContext) {
  // Two walks over due subscriptions. By id, a window at a time: neighbouring rows share pages,
  // so a batch of a million due ones dirties few pages per commit. By (due_floor, id) through the
  // partial index: rows that are not due cost nothing, for runs with few due. The index holds
  // each row at its floor, never after its actionable_date (migration 4): every read of it also
  // checks the date itself, since a skip moves the date on and leaves the floor behind.
  const dueById = prepareValues(db, `SELECT ${DUE_COLUMNS} FROM subscriptions s NOT INDEXED
    WHERE s.id > ?1 AND s.id <= ?2 AND s.${ACTING} AND s.actionable_date <= ?3 ORDER BY s.id LIMIT ?4`)
  const dueByDate = prepareValues(db, `SELECT ${DUE_COLUMNS} FROM subscriptions s INDEXED BY subscriptions_due
    WHERE s.${ACTING} AND s.due_floor >= ?1 AND s.due_floor <= ?2 AND (s.due_floor > ?1 OR s.id > ?3) AND s.actionable_date <= ?2
    ORDER BY s.due_floor, s.id LIMIT ?4`)
  const maxSubscription = db.prepare('SELECT coalesce(max(id), 0) AS m FROM subscriptions')
  // The index alone (its WHERE is ACTING): no row is read (0.06 s for a million, against 1.2 s).
  const countDue = db.prepare(`SELECT count(*) AS n FROM subscriptions INDEXED BY subscriptions_due
    WHERE ${ACTING} AND due_floor <= ?1`)
  // Floors left behind by skips (or by a date cleared) that have come due: lifted to the date, a
  // batch at a time, so that the walks above do not step over the same rows run after run.
  const liftFloors = db.prepare(`UPDATE subscriptions SET due_floor = actionable_date WHERE id IN (
    SELECT id FROM subscriptions INDEXED BY subscriptions_due WHERE ${ACTING} AND due_floor <= ?1 AND due_floor IS NOT actionable_date LIMIT ?2)`)
  const ending = prepareValues(db, `SELECT ${columns(SUBSCRIPTION_COLUMNS)} FROM subscriptions INDEXED BY subscriptions_ending
    WHERE ${ACTING} AND end_date IS NOT NULL AND end_date >= ?1 AND end_date < ?2 AND (end_date > ?1 OR id > ?3)
    ORDER BY end_date, id LIMIT ?4`)
  // The first due row in floor order has a date d; any row due earlier has its floor before its
  // own date, so before d: the minimum is over floors up to d only (a short range: floors trail
  // dates only for rows skipped since the last run).
  const oldestDue = db.prepare(`SELECT min(s.actionable_date) AS d FROM subscriptions s INDEXED BY subscriptions_due
    WHERE s.${ACTING} AND s.actionable_date <= ?1 AND ${hasItems('s')} AND s.due_floor <= (
      SELECT f.actionable_date FROM subscriptions f INDEXED BY subscriptions_due
      WHERE f.${ACTING} AND f.due_floor <= ?1 AND f.actionable_date <= ?1 AND ${hasItems('f')}
      ORDER BY f.due_floor LIMIT 1)`)
  const maxInstallment = db.prepare('SELECT coalesce(max(id), 0) AS m FROM installments')
  // A batch's installments in one statement. The snapshot (line items with the catalog's sku and
  // name, and C16's price, discount and total as the catalog has them now, in line item order)
  // and the installment's totals are built here; a date that already has one is skipped, never
  // doubled. Amounts are frozen as the strings they show (migration 10).
  const createMany = db.prepare(`INSERT INTO installments (subscription_id, due_date, state, line_items, shipping_address, billing_address,
      payment_method_id, payment_source_id, currency, subtotal, discount_total, total, created_at, updated_at)
    SELECT s.id, p.value ->> 1, 'pending', g.lines, s.shipping_address, s.billing_address,
      s.payment_method_id, s.payment_source_id, s.currency, g.subtotal, g.discount_total, g.total, ?2, ?2
    FROM json_each(?1) p
    JOIN subscriptions s ON s.id = p.value ->> 0
    JOIN (${SNAPSHOTS}) g ON g.sid = s.id
    WHERE true -- an upsert's SELECT needs a WHERE, or SQLite reads ON CONFLICT as a join's ON
    ON CONFLICT (subscription_id, due_date) DO NOTHING`)
  const createdAfter = db.prepare('SELECT subscription_id AS s FROM installments WHERE id > ?')
  // C16's monthly report counts the installments made (migration 10), a batch at a time, all
  // made at ?2's month: by the currencies the plans carry, else read back.
  const countMade = db.prepare(reportUpsert(['installments_made'], 'SELECT currency, ?2, count(*) FROM installments WHERE id > ?1 GROUP BY currency'))
  const addMade = db.prepare(reportUpsert(['installments_made'], 'VALUES (?1, ?2, ?3)'))
  const countInstallments = (plans: readonly BatchPlan[], created: ReadonlySet<number>, after: number, month: string): void => {
    if (plans.some((p) => p.currency === undefined)) {
      countMade.run(after, month)
      return
    }
    const byCurrency = new Map<string, number>()
    for (const p of plans) if (created.has(p.subscription_id)) byCurrency.set(p.currency as string, (byCurrency.get(p.currency as string) ?? 0) + 1)
    for (const [currency, n] of byCurrency) addMade.run(currency, month, n)
  }
  const advanceMany = db.prepare(`UPDATE subscriptions SET actionable_date = p.value ->> 2, due_floor = p.value ->> 2, state = p.value ->> 3, paused = 0,
      successive_skip_count = 0, processing_state = CASE WHEN p.value ->> 4 THEN 'pending' ELSE processing_state END, updated_at = ?2
    FROM json_each(?1) p WHERE subscriptions.id = p.value ->> 0`)
  // The same for the many that keep their state and are not paused: state and paused are not
  // assigned, so the recurring index (keyed by them: migration 10) and its trigger are not touched.
  const advanceKeeping = db.prepare(`UPDATE subscriptions SET actionable_date = p.value ->> 2, due_floor = p.value ->> 2,
      successive_skip_count = 0, processing_state = CASE WHEN p.value ->> 4 THEN 'pending' ELSE processing_state END, updated_at = ?2
    FROM json_each(?1) p WHERE subscriptions.id = p.value ->> 0`)
  // installment.created for every installment after ?1. The object is C3's installment exactly as
  // renderInstallment writes it, keys in the same order (test/processing holds the two together);
  // built here, a million events cost no round trip through JavaScript. The customer comes by two
  // primary-key lookups per row (subscription, user). A batch holds one installment per subscription,
  // so each prev_id read here is still the subscription's latest event when its row goes in (the
  // events_chain trigger refuses a stale one: migration 2). Stamped with the unit's actor (the
  // processor's, C18) as events-store.ts stamps every other event.
  const createdEvents = db.prepare(`INSERT INTO events (type, subscription_id, data, created_at, prev_id, actor_type, actor_id, request_id)
    SELECT 'installment.created', i.subscription_id, json_object('object', json_object(
        'id', i.id, 'subscription_id', i.subscription_id,
        'user', json_object('id', u.id, 'email', u.email, 'external_id', u.external_id), 'due_date', i.due_date, 'state', i.state, 'retry_at', i.retry_at,
        'line_items', json(i.line_items), 'shipping_address', json(i.shipping_address), 'billing_address', json(i.billing_address),
        'payment_method_id', i.payment_method_id, 'payment_source_id', i.payment_source_id, 'currency', i.currency,
        'subtotal', i.subtotal, 'discount_total', i.discount_total, 'total', i.total,
        'attempts', json_array(), 'created_at', i.created_at, 'updated_at', i.updated_at)), ?2,
      ${latestEventOf('i.subscription_id')}, ?3, ?4, ?5
    FROM ${withUser('installments i')} WHERE i.id > ?1 ORDER BY i.id`)

  const byId = db.prepare(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')} WHERE i.id = ?`)
  const change = db.prepare(`UPDATE installments SET state = ?, retry_at = ?, first_failed_at = ?, replayable_attempt_id = ?, updated_at = ?
    WHERE id = ?`)
  const retriesDue = db.prepare(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i INDEXED BY installments_state')}
    WHERE i.state = 'retrying' AND i.retry_at <= ? ORDER BY i.retry_at, i.id LIMIT ?`)
  const countRetriesDue = db.prepare("SELECT count(*) AS n FROM installments WHERE state = 'retrying' AND retry_at <= ?")
  const openOf = db.prepare(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')}
    WHERE i.subscription_id = ? AND i.state IN ('pending', 'retrying') ORDER BY i.id`)
  const latestOf = db.prepare('SELECT id FROM installments WHERE subscription_id = ? ORDER BY due_date DESC LIMIT 1')
  const ofSubscription = db.prepare(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')}
    WHERE i.subscription_id = ? ORDER BY i.due_date DESC LIMIT ? OFFSET ?`)
  const countOfSubscription = db.prepare('SELECT count(*) AS n FROM installments WHERE subscription_id = ?')
  const attemptsIn = db.prepare('SELECT * FROM installment_attempts WHERE installment_id IN (SELECT value FROM json_each(?)) ORDER BY id')
  const lastAttempt = db.prepare('SELECT * FROM installment_attempts WHERE installment_id = ? ORDER BY id DESC LIMIT 1')
  const insertAttempt = db.prepare(`INSERT INTO installment_attempts (installment_id, result, order_reference, message, created_at)
    VALUES (?, ?, ?, ?, ?) RETURNING *`)
  const byState = db.prepare('SELECT state, count(*) AS n FROM installments GROUP BY state')
  const setProcessingState = db.prepare('UPDATE subscriptions SET processing_state = ?, updated_at = ? WHERE id = ? AND processing_state <> ?')

  return {
    /** Due subscriptions with ids in (afterId, uptoId], in id order. */
    dueById(today: string, afterId: number, uptoId: number, limit: number): DueRow[] {
      return (dueById.all(afterId, uptoId, today, limit) as unknown as DueArray[]).map(toDueRow)
    },
    /** Due subscriptions after the cursor (due_floor, id), in that order. */
    dueByDate(today: string, afterDate: string, afterId: number, limit: number): DueRow[] {
      return (dueByDate.all(afterDate, today, afterId, limit) as unknown as DueArray[]).map(toDueRow)
    },
    maxSubscriptionId(): number {
      return (maxSubscription.get() as { m: number }).m
    },
    countDue(today: string): number {
      return (countDue.get(today) as { n: number }).n
    },
    /** Lifts at most `limit` floors that have come due to their rows' dates; answers how many. */
    liftDueFloors(today: string, limit: number): number {
      return Number(liftFloors.run(today, limit).changes)
    },
    /** Subscriptions whose end date passed before today, after the cursor (end_date, id). */
    endingBatch(today: string, afterDate: string, afterId: number, limit: number): Subscription[] {
      return (ending.all(afterDate, today, afterId, limit) as unknown as Values[]).map(subscriptionOf)
    },
    /** The oldest date of a subscription that is due and has something to deliver (/metrics, /readyz). */
    oldestDue(today: string): string | null {
      return (oldestDue.get(today) as { d: string } | undefined)?.d ?? null
    },
    /**
     * A batch in three statements: the installments (pending), the subscriptions moved on, and
     * an `installment.created` event for each installment made. Answers the ids of the
     * subscriptions that got one: a subscription that already has one for that date keeps it
     * (and its `processing_state`), and still moves on.
     */
    processMany(plans: readonly BatchPlan[], at: string): ReadonlySet<number> {
      if (plans.length === 0) return new Set()
      const after = (maxInstallment.get() as { m: number }).m
      const made = Number(createMany.run(JSON.stringify(plans.map((p) => [p.subscription_id, p.due_date])), at).changes)
      const created = made === plans.length
        ? new Set(plans.map((p) => p.subscription_id))
        : new Set((createdAfter.all(after) as { s: number }[]).map((r) => r.s))
      const move = (p: BatchPlan) => [p.subscription_id, p.due_date, p.actionable_date, p.state, created.has(p.subscription_id) ? 1 : 0]
      const keeping = plans.filter((p) => p.keeps_state === true)
      if (keeping.length > 0) advanceKeeping.run(JSON.stringify(keeping.map(move)), at)
      if (keeping.length < plans.length) advanceMany.run(JSON.stringify(plans.filter((p) => p.keeps_state !== true).map(move)), at)
      if (made > 0) countInstallments(plans, created, after, at.slice(0, 7))
      const { actor, requestId } = context()
      createdEvents.run(after, at, actor.type, actor.id, requestId)
      return created
    },
    find(id: number): Installment | undefined {
      const r = byId.get(id) as Row | undefined
      return r ? toInstallment(r) : undefined
    },
    /** Changes the row and answers it as read back (RETURNING cannot join its customer). */
    change(id: number, c: InstallmentChange, at: string): Installment {
      change.run(c.state, c.retry_at, c.first_failed_at, c.replayable_attempt_id, at, id)
      return toInstallment(byId.get(id) as Row)
    },
    /** Retrying installments whose retry time has come, oldest first. */
    retriesDue(nowIso: string, limit: number): Installment[] {
      return (retriesDue.all(nowIso, limit) as Row[]).map(toInstallment)
    },
    countRetriesDue(nowIso: string): number {
      return (countRetriesDue.get(nowIso) as { n: number }).n
    },
    /** Pending and retrying installments of a subscription (a cancel abandons them). */
    openOf(subscriptionId: number): Installment[] {
      return (openOf.all(subscriptionId) as Row[]).map(toInstallment)
    },
    latestIdOf(subscriptionId: number): number | undefined {
      return (latestOf.get(subscriptionId) as { id: number } | undefined)?.id
    },
    /** Newest due date first. */
    listOfSubscription(subscriptionId: number, offset: number, limit: number): Installment[] {
      return (ofSubscription.all(subscriptionId, limit, offset) as Row[]).map(toInstallment)
    },
    countOfSubscription(subscriptionId: number): number {
      return (countOfSubscription.get(subscriptionId) as { n: number }).n
    },
    adminList(f: AdminInstallmentFilter): Installment[] {
      const where = ['i.id > ?']
      const args: (string | number)[] = [f.after]
      if (f.state !== undefined) { where.push('i.state = ?'); args.push(f.state) }
      if (f.subscriptionId !== undefined) { where.push('i.subscription_id = ?'); args.push(f.subscriptionId) }
      if (f.userId !== undefined) { where.push('s.user_id = ?'); args.push(f.userId) }
      if (f.dueAfter !== undefined) { where.push('i.due_date > ?'); args.push(f.dueAfter) }
      if (f.dueBefore !== undefined) { where.push('i.due_date < ?'); args.push(f.dueBefore) }
      args.push(f.limit)
      return (db.prepare(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')} WHERE ${where.join(' AND ')} ORDER BY i.id LIMIT ?`)
        .all(...args) as Row[]).map(toInstallment)
    },
    /** Attempts of these installments, oldest first. */
    attemptsOf(installmentIds: readonly number[]): Map<number, Attempt[]> {
      const out = new Map<number, Attempt[]>()
      if (installmentIds.length === 0) return out
      for (const r of attemptsIn.all(JSON.stringify(installmentIds)) as Row[]) {
        const a = toAttempt(r)
        const list = out.get(a.installment_id)
        if (list) list.push(a)
        else out.set(a.installment_id, [a])
      }
      return out
    },
    lastAttempt(installmentId: number): Attempt | undefined {
      const r = lastAttempt.get(installmentId) as Row | undefined
      return r ? toAttempt(r) : undefined
    },
    addAttempt(installmentId: number, result: string, orderReference: string | null, message: string | null, at: string): Attempt {
      return toAttempt(insertAttempt.get(installmentId, result, orderReference, message, at) as Row)
    },
    /** Sets `processing_state`; true when it changed. */
    setProcessingState(subscriptionId: number, state: string, at: string): boolean {
      return Number(setProcessingState.run(state, at, subscriptionId, state).changes) > 0
    },
    countByState(): Record<InstallmentState, number> {
      const out = Object.fromEntries(INSTALLMENT_STATES.map((s) => [s, 0])) as Record<InstallmentState, number>
      for (const r of byState.all() as { state: InstallmentState; n: number }[]) out[r.state] = r.n
      return out
    },
  }
}
export type InstallmentsStore = ReturnType<typeof installmentsStore>
