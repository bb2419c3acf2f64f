import type { Address } from '../../domain/types.ts'
import { INSTALLMENT_STATES, renderInstallment, type Attempt, type Installment, type InstallmentState, type SnapshotLine } from '../../domain/installment.ts'
import type { AdminInstallmentFilter, BatchPlan, DueRow, InstallmentChange, InstallmentsTx, UnitContext } from '../api.ts'
import { SUBSCRIPTION_COLUMNS, columns, subscriptionOf, type SubscriptionRow } from './rows.ts'
import type { Sql } from './sql.ts'
import { discountOf, moneyText, priceJoin, totalText } from '../money-sql.ts'

/** An installments row (JSON columns still text) with its customer, as every read selects it. */
interface InstallmentRow {
  readonly id: number
  readonly subscription_id: number
  readonly due_date: string
  readonly state: InstallmentState
  readonly retry_at: string | null
  readonly first_failed_at: string | null
  readonly replayable_attempt_id: number | null
  readonly line_items: string
  readonly shipping_address: string | null
  readonly billing_address: string | null
  readonly payment_method_id: number | null
  readonly payment_source_id: number | null
  readonly currency: string
  readonly subtotal: string | null
  readonly discount_total: string | null
  readonly total: string | null
  readonly created_at: string
  readonly updated_at: string
  readonly user_id: number
  readonly user_email: string | null
  readonly user_external_id: string | null
}

const addressOf = (json: string | null): Address | null => (json === null ? null : (JSON.parse(json) as Address))

function toInstallment(r: InstallmentRow): Installment {
  return {
    id: r.id,
    subscription_id: r.subscription_id,
    user: { id: r.user_id, email: r.user_email, external_id: r.user_external_id },
    due_date: r.due_date,
    state: r.state,
    retry_at: r.retry_at,
    first_failed_at: r.first_failed_at,
    replayable_attempt_id: r.replayable_attempt_id,
    line_items: JSON.parse(r.line_items) as SnapshotLine[],
    shipping_address: addressOf(r.shipping_address),
    billing_address: addressOf(r.billing_address),
    payment_method_id: r.payment_method_id,
    payment_source_id: r.payment_source_id,
    currency: r.currency,
    subtotal: r.subtotal,
    discount_total: r.discount_total,
    total: r.total,
    created_at: r.created_at,
    updated_at: r.updated_at,
  }
}

const ATTEMPT_COLUMNS = 'id, installment_id, result, order_reference, message, created_at'

const toAttempt = (r: Attempt): Attempt => ({
  id: r.id,
  installment_id: r.installment_id,
  result: r.result,
  order_reference: r.order_reference,
  message: r.message,
  created_at: r.created_at,
})

const toDueRow = (r: DueRow): DueRow => ({
  id: r.id,
  state: r.state,
  paused: r.paused,
  interval_length: r.interval_length,
  interval_units: r.interval_units,
  actionable_date: r.actionable_date,
  anchor_day: r.anchor_day,
  end_date: r.end_date,
  has_items: r.has_items,
  due_floor: r.due_floor,
  currency: r.currency,
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

// Two walks over due subscriptions, inside the batch's unit. By id, a window at a time:
// neighbouring rows share pages. By (due_floor, id) through the partial index subscriptions_due:
// rows that are not due cost nothing. The index holds each row at its floor, never after its
// actionable_date (the subscriptions_due_floor trigger): every read of it also checks the date
// itself, since a skip moves the date on and leaves the floor behind.
// Both lock what they answer, and skip what is locked (FOR UPDATE SKIP LOCKED): the batch decides
// from rows nobody can change before it commits, a second processor never takes the same rows,
// and a row a customer request is changing now is left for the next run, not waited for.
const DUE_BY_ID = `SELECT ${DUE_COLUMNS} FROM subscriptions s
  WHERE s.id > $1 AND s.id <= $2 AND s.${ACTING} AND s.actionable_date <= $3
  ORDER BY s.id LIMIT $4 FOR UPDATE OF s SKIP LOCKED`
const DUE_BY_DATE = `SELECT ${DUE_COLUMNS} FROM subscriptions s
  WHERE s.${ACTING} AND (s.due_floor, s.id) > ($1::text, $3::bigint) AND s.due_floor <= $2 AND s.actionable_date <= $2
  ORDER BY s.due_floor, s.id LIMIT $4 FOR UPDATE OF s SKIP LOCKED`

// Floors left behind by skips (or by a date cleared) that have come due: lifted to the date, a
// batch at a time, so that the walks above do not step over the same rows run after run. A row a
// request holds is lifted by a later batch or run.
const LIFT_FLOORS = `UPDATE subscriptions SET due_floor = actionable_date WHERE id IN (
  SELECT id FROM subscriptions WHERE ${ACTING} AND due_floor <= $1 AND due_floor IS DISTINCT FROM actionable_date
  LIMIT $2 FOR UPDATE SKIP LOCKED)`

// Held as the due walks are: the batch ends them from rows that stay as read.
const ENDING = `SELECT ${columns(SUBSCRIPTION_COLUMNS)} FROM subscriptions
  WHERE ${ACTING} AND end_date IS NOT NULL AND (end_date, id) > ($1::text, $3::bigint) AND end_date < $2
  ORDER BY end_date, id LIMIT $4 FOR UPDATE SKIP LOCKED`

// The first due row in floor order has a date d; any row due earlier has its floor before its
// own date, so before d: the minimum is over floors up to d only (a short range: floors trail
// dates only for rows skipped since the last run). d is found first and passed as a value, so
// the planner sees how short the range is and reads it through the index.
const FIRST_DUE = `SELECT s.actionable_date AS d FROM subscriptions s
  WHERE s.${ACTING} AND s.due_floor <= $1 AND s.actionable_date <= $1 AND ${hasItems('s')} ORDER BY s.due_floor LIMIT 1`
const OLDEST_DUE = `SELECT min(s.actionable_date) AS d FROM subscriptions s
  WHERE s.${ACTING} AND s.due_floor <= $2 AND s.actionable_date <= $1 AND ${hasItems('s')}`

/** A text value as JSON text (`null` for null), as SQLite's json_object writes it. */
const jsonText = (expr: string): string => `coalesce(to_json(${expr})::text, 'null')`
const snapshotTotal = (expr: string): string => totalText(expr, 'max(l.u)')

/**
 * A batch's installments, and its subscriptions moved on, in one statement. `held`: the plans
 * whose subscription still has the date the plan was made from (a compare-and-set), the rows
 * locked; only those get an installment and move. The snapshot of the line items (with the
 * catalog's sku and name, in line item order) is the JSON text SQLite's json_group_array of
 * json_object makes, compact, keys in that order; a date that already has an installment is
 * skipped, never doubled, and the subscription keeps its processing_state but still moves on.
 * Answers the installments made, with their customer.
 */
const CREATE_AND_MOVE = `WITH p AS (
    SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS p(id, due, next, state)
  ), held AS (
    SELECT s.id, s.user_id, p.due, p.next, p.state, s.shipping_address, s.billing_address, s.payment_method_id, s.payment_source_id, s.currency
    FROM p JOIN subscriptions s ON s.id = p.id WHERE s.actionable_date = p.due FOR UPDATE OF s
  ), made AS (
    INSERT INTO installments (subscription_id, due_date, state, line_items, shipping_address, billing_address,
        payment_method_id, payment_source_id, currency, subtotal, discount_total, total, created_at, updated_at)
      SELECT h.id, h.due, 'pending', g.lines, h.shipping_address, h.billing_address, h.payment_method_id, h.payment_source_id, h.currency,
        g.subtotal, g.discount_total, g.total, $5, $5
      FROM held h JOIN LATERAL (
        SELECT '[' || string_agg('{"subscribable_id":' || l.subscribable_id || ',"sku":' || to_json(l.sku::text) || ',"name":' || to_json(l.name::text)
            || ',"quantity":' || l.quantity || ',"price":' || ${jsonText('l.price')}
            || ',"discount_percent":' || ${jsonText('l.percent')} || ',"total":' || ${jsonText(moneyText('l.amount - l.discount', 'l.u'))} || '}', ',' ORDER BY l.id) || ']' AS lines,
          ${snapshotTotal('l.amount')} AS subtotal, ${snapshotTotal('l.discount')} AS discount_total, ${snapshotTotal('l.amount - l.discount')} AS total
        FROM (SELECT li.id, li.subscribable_id, c.sku, c.name, li.quantity, p.amount AS unit, p.amount_text AS price, c.discount_percent AS percent,
            li.quantity * p.amount AS amount, ${discountOf('li.quantity * p.amount', 'c.discount_bp')} AS discount, p.minor_unit AS u
          FROM line_items li ${priceJoin('h.currency')} WHERE li.subscription_id = h.id) l
      ) g ON g.lines IS NOT NULL
    ON CONFLICT (subscription_id, due_date) DO NOTHING
    RETURNING *
  ), counted AS (
    -- C16's monthly report counts the installments made (migration 10), in this batch's shard.
    INSERT INTO report_months AS r (currency, month, shard, installments_made)
      SELECT m.currency, substr(m.created_at, 1, 7), pg_backend_pid() % 64, count(*) FROM made m GROUP BY 1, 2
    ON CONFLICT (currency, month, shard) DO UPDATE SET installments_made = r.installments_made + EXCLUDED.installments_made
  ), moved AS (
    UPDATE subscriptions s SET actionable_date = h.next, due_floor = h.next, state = h.state, paused = false, successive_skip_count = 0,
        processing_state = CASE WHEN s.id IN (SELECT subscription_id FROM made) THEN 'pending' ELSE s.processing_state END, updated_at = $5
      FROM held h WHERE s.id = h.id
  )
  SELECT m.*, u.id AS user_id, u.email AS user_email, u.external_id AS user_external_id
  FROM made m JOIN held h ON h.id = m.subscription_id JOIN users u ON u.id = h.user_id ORDER BY m.id`

/**
 * The `installment.created` events of a batch, in installment order. A separate statement: the
 * events_chain trigger updates each subscription's row, which the statement above already did
 * (a statement cannot update a row twice). Stamped with the unit's actor (the processor's, C18),
 * as events.ts stamps every other event.
 */
const CREATED_EVENTS = `INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
  SELECT 'installment.created', e.sid, e.data, $3, $4::text, $5::bigint, $6::text FROM unnest($1::bigint[], $2::text[]) WITH ORDINALITY AS e(sid, data, n) ORDER BY e.n`

/** Installments, their attempts, and the processor's reads and batch writes. */
export function installmentsRepo(sql: Sql, context: UnitContext): InstallmentsTx {
  const installments = async (text: string, values: readonly unknown[]): Promise<Installment[]> =>
    (await sql.rows<InstallmentRow>(text, values)).map(toInstallment)
  const byId = `SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')} WHERE i.id = $1`
  const count = async (text: string, values: readonly unknown[]): Promise<number> => (await sql.one<{ n: number }>(text, values))?.n ?? 0

  return {
    async dueById(today, afterId, uptoId, limit) {
      return (await sql.rows<DueRow>(DUE_BY_ID, [afterId, uptoId, today, limit])).map(toDueRow)
    },
    async dueByDate(today, afterFloor, afterId, limit) {
      return (await sql.rows<DueRow>(DUE_BY_DATE, [afterFloor, today, afterId, limit])).map(toDueRow)
    },
    async maxSubscriptionId() {
      return count('SELECT coalesce(max(id), 0) AS n FROM subscriptions', [])
    },
    async countDue(today) {
      return count(`SELECT count(*) AS n FROM subscriptions WHERE ${ACTING} AND due_floor <= $1`, [today])
    },
    liftDueFloors: (today, limit) => sql.run(LIFT_FLOORS, [today, limit]),
    async endingBatch(today, afterDate, afterId, limit) {
      return (await sql.rows<SubscriptionRow>(ENDING, [afterDate, today, afterId, limit])).map(subscriptionOf)
    },
    async oldestDue(today) {
      const first = await sql.one<{ d: string }>(FIRST_DUE, [today])
      if (first === undefined) return null
      return (await sql.one<{ d: string | null }>(OLDEST_DUE, [today, first.d]))?.d ?? null
    },
    processMany: (plans, at) => processMany(sql, context, plans, at),
    async find(id) {
      return (await installments(byId, [id]))[0]
    },
    /** Changes the row and answers it with its customer, in one statement. */
    async change(id: number, c: InstallmentChange, at: string) {
      const [changed] = await installments(`WITH i AS (
          UPDATE installments SET state = $1, retry_at = $2, first_failed_at = $3, replayable_attempt_id = $4, updated_at = $5 WHERE id = $6 RETURNING *)
        SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('i')}`, [c.state, c.retry_at, c.first_failed_at, c.replayable_attempt_id, at, id])
      if (changed === undefined) throw new Error(`installment ${id} does not exist`)
      return changed
    },
    /**
     * Retrying installments whose retry time has come, oldest first. Their subscriptions are
     * held (a request recording an outcome holds the subscription before it changes the
     * installment), so the retry is decided from installments that stay as read; one a request
     * holds now is left for the next run.
     */
    retriesDue: (nowIso, limit) => installments(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')}
      WHERE i.state = 'retrying' AND i.retry_at <= $1 ORDER BY i.retry_at, i.id LIMIT $2 FOR UPDATE OF s SKIP LOCKED`, [nowIso, limit]),
    countRetriesDue: (nowIso) => count("SELECT count(*) AS n FROM installments WHERE state = 'retrying' AND retry_at <= $1", [nowIso]),
    /** Pending and retrying installments of a subscription (a cancel abandons them). */
    openOf: (subscriptionId) => installments(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')}
      WHERE i.subscription_id = $1 AND i.state IN ('pending', 'retrying') ORDER BY i.id`, [subscriptionId]),
    async latestIdOf(subscriptionId) {
      return (await sql.one<{ id: number }>('SELECT id FROM installments WHERE subscription_id = $1 ORDER BY due_date DESC LIMIT 1', [subscriptionId]))?.id
    },
    /** Newest due date first. */
    listOfSubscription: (subscriptionId, offset, limit) => installments(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')}
      WHERE i.subscription_id = $1 ORDER BY i.due_date DESC LIMIT $2 OFFSET $3`, [subscriptionId, limit, offset]),
    countOfSubscription: (subscriptionId) => count('SELECT count(*) AS n FROM installments WHERE subscription_id = $1', [subscriptionId]),
    adminList: (f) => adminList(installments, f),
    async attemptsOf(installmentIds) {
      const out = new Map<number, Attempt[]>()
      if (installmentIds.length === 0) return out
      const rows = await sql.rows<Attempt>(`SELECT ${ATTEMPT_COLUMNS} FROM installment_attempts WHERE installment_id = ANY($1::bigint[]) ORDER BY id`, [installmentIds])
      for (const r of rows) {
        const a = toAttempt(r)
        const list = out.get(a.installment_id)
        if (list) list.push(a)
        else out.set(a.installment_id, [a])
      }
      return out
    },
    async lastAttempt(installmentId) {
      const r = await sql.one<Attempt>(`SELECT ${ATTEMPT_COLUMNS} FROM installment_attempts WHERE installment_id = $1 ORDER BY id DESC LIMIT 1`, [installmentId])
      return r ? toAttempt(r) : undefined
    },
    async addAttempt(installmentId, result, orderReference, message, at) {
      const r = await sql.one<Attempt>(`INSERT INTO installment_attempts (installment_id, result, order_reference, message, created_at)
        VALUES ($1, $2, $3, $4, $5) RETURNING ${ATTEMPT_COLUMNS}`, [installmentId, result, orderReference, message, at])
      return toAttempt(r as Attempt)
    },
    /** Sets `processing_state`; true when it changed. */
    async setProcessingState(subscriptionId, state, at) {
      return (await sql.run('UPDATE subscriptions SET processing_state = $1, updated_at = $2 WHERE id = $3 AND processing_state <> $1', [state, at, subscriptionId])) > 0
    },
    async countByState() {
      const out = Object.fromEntries(INSTALLMENT_STATES.map((s) => [s, 0])) as Record<InstallmentState, number>
      for (const r of await sql.rows<{ state: InstallmentState; n: number }>('SELECT state, count(*) AS n FROM installments GROUP BY state')) out[r.state] = r.n
      return out
    },
  }
}

/**
 * A batch in two statements: the installments (pending) with the subscriptions moved on, then an
 * `installment.created` event for each installment made, its object C3's installment as
 * renderInstallment writes it (the same text SQLite's json_object builds: webhook bodies carry
 * it raw). Answers the ids of the subscriptions that got one.
 */
async function processMany(sql: Sql, context: UnitContext, plans: readonly BatchPlan[], at: string): Promise<ReadonlySet<number>> {
  if (plans.length === 0) return new Set()
  const made = (await sql.rows<InstallmentRow>(CREATE_AND_MOVE, [
    plans.map((p) => p.subscription_id),
    plans.map((p) => p.due_date),
    plans.map((p) => p.actionable_date),
    plans.map((p) => p.state),
    at,
  ])).map(toInstallment)
  if (made.length > 0) {
    await sql.run(CREATED_EVENTS, [
      made.map((i) => i.subscription_id),
      made.map((i) => JSON.stringify({ object: renderInstallment(i, []) })),
      at,
      context.actor.type,
      context.actor.id,
      context.requestId,
    ])
  }
  return new Set(made.map((i) => i.subscription_id))
}

/** GET /installments' filters, all optional, in id order after the cursor. */
function adminList(installments: (text: string, values: readonly unknown[]) => Promise<Installment[]>, f: AdminInstallmentFilter): Promise<Installment[]> {
  const args: (string | number)[] = [f.after]
  const where = ['i.id > $1']
  const add = (condition: (param: string) => string, value: string | number | undefined): void => {
    if (value === undefined) return
    args.push(value)
    where.push(condition(`$${args.length}`))
  }
  add((v) => `i.state = ${v}`, f.state)
  add((v) => `i.subscription_id = ${v}`, f.subscriptionId)
  add((v) => `s.user_id = ${v}`, f.userId)
  add((v) => `i.due_date > ${v}`, f.dueAfter)
  add((v) => `i.due_date < ${v}`, f.dueBefore)
  args.push(f.limit)
  return installments(`SELECT ${INSTALLMENT_COLUMNS} FROM ${withUser('installments i')} WHERE ${where.join(' AND ')} ORDER BY i.id LIMIT $${args.length}`, args)
}
