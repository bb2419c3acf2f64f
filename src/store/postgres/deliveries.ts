import { SHOWN_DELIVERY_STATES, type Delivery, type DeliveriesTx, type DeliveryAttempt, type DeliveryFilter, type DeliveryOutcome, type DeliveryState, type DueDelivery, type EndpointDeliveryStats } from '../api.ts'
import type { Sql } from './sql.ts'
import { storedActor } from '../columns.ts'

/**
 * How long a delivery `due` hands out stays claimed: its `due_ms` moves this far ahead in the
 * claiming statement, so another instance's dispatcher does not post it while this one's request
 * is in flight (C15: each delivery is sent by one instance at a time). Well above the 10 s
 * time-out of an attempt; its result (`recordOutcomes`) sets the real next due time. A claim of an
 * instance that died runs out, and the delivery is posted again (at least once, docs/webhooks.md).
 */
export const CLAIM_LEASE_MS = 30_000

const DELIVERY_COLUMNS = 'd.id, d.endpoint_id, d.event_id, d.event_type, d.state, d.attempt_count, d.due_ms, d.delivered_ms, d.created_ms, d.updated_ms, d.attempts'

interface DeliveryRow {
  id: number
  endpoint_id: number
  event_id: number
  event_type: string
  state: DeliveryState
  attempt_count: number
  due_ms: number | null
  delivered_ms: number | null
  created_ms: number
  updated_ms: number
  attempts: string
}

/** The columns of an event that its body is made of. */
interface EventColumns {
  event_id: number
  type: string
  created_at: string
  subscription_id: number | null
  actor_type: string | null
  actor_id: number | null
  request_id: string | null
  data: string
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

const toDelivery = (r: DeliveryRow): Delivery => ({
  id: r.id,
  event_id: r.event_id,
  webhook_endpoint_id: r.endpoint_id,
  event_type: r.event_type,
  state: r.state,
  attempt_count: r.attempt_count,
  next_attempt_at: r.state === 'pending' ? iso(r.due_ms) : null,
  delivered_at: iso(r.delivered_ms),
  attempts: JSON.parse(r.attempts) as DeliveryAttempt[],
  created_at: iso(r.created_ms) as string,
  updated_at: iso(r.updated_ms) as string,
})

/**
 * The event a delivery posts, as the events feed renders it (C10: the body is the event object).
 * The stored `{"object": …}` text goes in as it is, never parsed and serialised again: the same
 * bytes the SQLite store concatenates in SQL.
 */
const eventBody = (e: EventColumns): string =>
  `{"id":${e.event_id},"type":${JSON.stringify(e.type)},"created_at":${JSON.stringify(e.created_at)}` +
  `,"subscription_id":${e.subscription_id ?? 'null'},"actor":${JSON.stringify(storedActor(e.actor_type, e.actor_id))}` +
  `,"request_id":${JSON.stringify(e.request_id)},"data":${e.data}}`

/**
 * An attempt appended to the stored log: the text SQLite's `json_insert(attempts, '$[#]', json(?))`
 * makes of the minified log and JSON.stringify's minified attempt (it keeps both as written).
 */
const APPEND_ATTEMPT = (attempt: string): string =>
  `left(d.attempts, -1) || CASE WHEN d.attempts = '[]' THEN '' ELSE ',' END || ${attempt} || ']'`

/**
 * Pending deliveries of a live endpoint due by $2, but those in flight here ($3), the earliest
 * first, at most $4: locked (a row another instance is claiming is skipped, not waited for), then
 * claimed until $5 in the same statement. Ordered as SQLite's pending index orders them. The claim
 * finds its rows by an array of ids, so that it reads them through the primary key whatever the
 * plan's guess of how many there are.
 */
const CLAIM_DUE = `WITH picked AS (
    SELECT p.id, p.event_id, p.due_ms, p.created_ms, p.retries, e.type, e.created_at, e.subscription_id, e.actor_type, e.actor_id, e.request_id, e.data
    FROM webhook_deliveries p JOIN events e ON e.id = p.event_id
    WHERE p.endpoint_id = $1 AND p.state = 'pending' AND p.due_ms <= $2 AND p.id <> ALL($3::bigint[])
      AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = $1 AND w.deleted_at IS NULL AND NOT w.disabled)
    ORDER BY p.due_ms, p.created_ms, p.id LIMIT $4
    FOR UPDATE OF p SKIP LOCKED),
  claimed AS (UPDATE webhook_deliveries SET due_ms = $5 WHERE id = ANY(ARRAY(SELECT id FROM picked)))
  SELECT id, event_id, created_ms, retries, type, created_at, subscription_id, actor_type, actor_id, request_id, data FROM picked ORDER BY due_ms, created_ms, id`

/**
 * Attempts recorded, one per delivery: `settle` ones take their outcome's state, due time and
 * retries; the others (no longer pending) only log the attempt.
 */
const RECORD = `UPDATE webhook_deliveries d SET
    state = CASE WHEN o.settle THEN o.state ELSE d.state END,
    due_ms = CASE WHEN o.settle THEN o.due_ms ELSE d.due_ms END,
    retries = CASE WHEN o.settle THEN o.retries ELSE d.retries END,
    attempt_count = d.attempt_count + 1,
    attempts = ${APPEND_ATTEMPT('o.attempt')},
    updated_ms = o.at_ms,
    delivered_ms = CASE WHEN o.settle AND o.state = 'delivered' THEN o.at_ms ELSE d.delivered_ms END
  FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::bigint[], $5::integer[], $6::text[], $7::bigint[])
    AS o(id, settle, state, due_ms, retries, attempt, at_ms)
  WHERE d.id = o.id`

const COUNT_REACHED = `UPDATE webhook_endpoints w SET delivered_total = w.delivered_total + c.delivered, failed_total = w.failed_total + c.failed
  FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS c(id, delivered, failed) WHERE w.id = c.id`

const LOG_ONLY = `UPDATE webhook_deliveries d SET attempt_count = d.attempt_count + 1, attempts = ${APPEND_ATTEMPT('$2')}, updated_ms = $3 WHERE d.id = $1`

const REDELIVERED = `UPDATE webhook_deliveries d SET state = 'delivered', due_ms = NULL, attempt_count = d.attempt_count + 1,
  attempts = ${APPEND_ATTEMPT('$2')}, updated_ms = $3, delivered_ms = $3 WHERE d.id = $1`

/**
 * Pending deliveries of deleted endpoints, canceled. The outer `state` test is checked again on a
 * row another unit changed meanwhile (READ COMMITTED re-reads a row it waited for): a delivery
 * recorded delivered in between stays delivered.
 */
const CANCEL = `UPDATE webhook_deliveries SET state = 'canceled', due_ms = NULL, updated_ms = $2
  WHERE state = 'pending' AND id IN (SELECT d.id FROM webhook_endpoints w JOIN webhook_deliveries d ON d.endpoint_id = w.id
    WHERE w.deleted_at IS NOT NULL AND d.state = 'pending' LIMIT $1 FOR UPDATE OF d)`

/**
 * Deliveries of every endpoint not deleted (C18), by id after $1, at most $2. The state is
 * written into the text (a value of SHOWN_DELIVERY_STATES, never the client's string), so that
 * the planner sees it and takes the failed ones' partial index.
 */
const across = (state: string | undefined): string =>
  `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
    WHERE d.id > $1${state === undefined ? '' : ` AND d.state = '${state}'`} AND w.deleted_at IS NULL ORDER BY d.id LIMIT $2`
const ACROSS: Readonly<Record<string, string>> = Object.fromEntries(
  [undefined, ...SHOWN_DELIVERY_STATES].map((state) => [state ?? 'any', across(state)]),
)

/** One outcome as it will be written: recorded as a result (`settle`), or only logged. */
interface Planned {
  readonly outcome: DeliveryOutcome
  readonly settle: boolean
}

/**
 * The outcomes in the order given, each decided from the delivery's state as it stands once the
 * outcomes before it are applied (SQLite applies them one by one): pending ones settle, others
 * only log; an unknown delivery (pruned) is left out. Split into rounds in which a delivery
 * appears once, for a single UPDATE each (a delivery has one outcome per batch in practice).
 */
function plan(outcomes: readonly DeliveryOutcome[], states: Map<number, DeliveryState>): Planned[][] {
  const rounds: Planned[][] = []
  const seen = new Map<number, number>()
  for (const outcome of outcomes) {
    const state = states.get(outcome.id)
    if (state === undefined) continue
    const settle = state === 'pending'
    if (settle) states.set(outcome.id, outcome.state)
    const n = seen.get(outcome.id) ?? 0
    seen.set(outcome.id, n + 1)
    const round = (rounds[n] ??= [])
    round.push({ outcome, settle })
  }
  return rounds
}

/** Final states reached by settled outcomes, per endpoint (the outcome's), for its totals. */
function reachedTotals(rounds: readonly Planned[][]): Map<number, [delivered: number, failed: number]> {
  const reached = new Map<number, [number, number]>()
  for (const { outcome: o, settle } of rounds.flat()) {
    if (!settle || o.state === 'pending') continue
    const totals = reached.get(o.endpoint_id) ?? [0, 0]
    totals[o.state === 'delivered' ? 0 : 1]++
    reached.set(o.endpoint_id, totals)
  }
  return reached
}

/** The webhook outbox: deliveries, their attempts, and what the dispatcher asks of them. */
export function deliveriesRepo(sql: Sql): DeliveriesTx {
  const find = async (id: number): Promise<Delivery | undefined> => {
    const r = await sql.one<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.id = $1 AND w.deleted_at IS NULL`, [id])
    return r && toDelivery(r)
  }

  const record = async (round: readonly Planned[]): Promise<void> => {
    const o = round.map((p) => p.outcome)
    await sql.run(RECORD, [
      o.map((x) => x.id), round.map((p) => p.settle), o.map((x) => x.state), o.map((x) => x.due_ms), o.map((x) => x.retries),
      o.map((x) => JSON.stringify(x.attempt)), o.map((x) => x.at_ms),
    ])
  }

  const count = async (reached: Map<number, [number, number]>): Promise<void> => {
    if (reached.size === 0) return
    const ids = [...reached.keys()]
    await sql.run(COUNT_REACHED, [ids, ids.map((id) => reached.get(id)![0]), ids.map((id) => reached.get(id)![1])])
  }

  return {
    async list(f: DeliveryFilter): Promise<Delivery[]> {
      const rows = f.endpointId === undefined
        ? await sql.rows<DeliveryRow>(ACROSS[f.state ?? 'any']!, [f.after, f.limit])
        : await sql.rows<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.endpoint_id = $1 AND d.id > $2
          AND ($3::text IS NULL OR d.state = $3) ORDER BY d.id LIMIT $4`, [f.endpointId, f.after, f.state ?? null, f.limit])
      return rows.map(toDelivery)
    },
    async add(endpointId: number, eventId: number, eventType: string, createdMs: number, dueMs: number): Promise<number> {
      const r = await sql.one<{ id: number }>(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, due_ms, created_ms, updated_ms)
        VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, [endpointId, eventId, eventType, dueMs, createdMs])
      return (r as { id: number }).id
    },
    find,
    async bodyOf(id: number): Promise<string | undefined> {
      const e = await sql.one<EventColumns>(`SELECT e.id AS event_id, e.type, e.created_at, e.subscription_id, e.actor_type, e.actor_id, e.request_id, e.data
        FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = $1`, [id])
      return e && eventBody(e)
    },
    async nextDueMs(endpointId: number): Promise<number | null> {
      const r = await sql.one<{ due_ms: number | null }>(`SELECT due_ms FROM webhook_deliveries WHERE endpoint_id = $1 AND state = 'pending'
        ORDER BY due_ms LIMIT 1`, [endpointId])
      return r?.due_ms ?? null
    },
    stats(): Promise<EndpointDeliveryStats[]> {
      return sql.rows<EndpointDeliveryStats>(`SELECT w.id AS endpoint_id, coalesce(p.n, 0) AS pending, p.oldest AS oldest_pending_ms,
          w.delivered_total, w.failed_total
        FROM webhook_endpoints w LEFT JOIN (SELECT endpoint_id, count(*) AS n, min(created_ms) AS oldest FROM webhook_deliveries
          WHERE state = 'pending' GROUP BY endpoint_id) p ON p.endpoint_id = w.id
        WHERE w.deleted_at IS NULL ORDER BY w.id`)
    },
    async oldestPendingMs(): Promise<number | null> {
      const r = await sql.one<{ oldest: number | null }>(`SELECT min(created_ms) AS oldest FROM webhook_deliveries WHERE state = 'pending'`)
      return r?.oldest ?? null
    },
    async due(endpointId: number, nowMs: number, limit: number, skip: readonly number[]): Promise<DueDelivery[]> {
      const rows = await sql.rows<EventColumns & { id: number; created_ms: number; retries: number }>(
        CLAIM_DUE, [endpointId, nowMs, skip, limit, nowMs + CLAIM_LEASE_MS])
      return rows.map((r) => ({ id: r.id, event_id: r.event_id, created_ms: r.created_ms, retries: r.retries, body: eventBody(r) }))
    },
    async recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<void> {
      if (outcomes.length === 0) return
      // Locked first (in id order, as every unit that locks several does): the decision to
      // settle or only log is then made from states no other unit can change before the commit.
      const locked = await sql.rows<{ id: number; state: DeliveryState }>(
        'SELECT id, state FROM webhook_deliveries WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE', [outcomes.map((o) => o.id)])
      const rounds = plan(outcomes, new Map(locked.map((r) => [r.id, r.state])))
      for (const round of rounds) await record(round)
      await count(reachedTotals(rounds))
    },
    async recordRedelivery(id: number, attempt: DeliveryAttempt, succeeded: boolean, atMs: number): Promise<Delivery> {
      const r = await sql.one<{ state: DeliveryState; endpoint_id: number }>('SELECT state, endpoint_id FROM webhook_deliveries WHERE id = $1 FOR UPDATE', [id])
      if (r === undefined) throw new Error(`webhook delivery ${id} is gone`)
      if (succeeded && r.state !== 'delivered') {
        await sql.run(REDELIVERED, [id, JSON.stringify(attempt), atMs])
        await count(new Map([[r.endpoint_id, [1, 0]]]))
      } else {
        await sql.run(LOG_ONLY, [id, JSON.stringify(attempt), atMs])
      }
      return (await find(id)) as Delivery
    },
    cancelOfDeletedEndpoints(limit: number, atMs: number): Promise<number> {
      return sql.run(CANCEL, [limit, atMs])
    },
    /** Ends the claims at once: the deliveries were due when they were claimed, so due now. */
    async release(ids: readonly number[], atMs: number): Promise<void> {
      if (ids.length === 0) return
      await sql.run("UPDATE webhook_deliveries SET due_ms = LEAST(due_ms, $2) WHERE id = ANY($1::bigint[]) AND state = 'pending'", [ids, atMs])
    },
  }
}
