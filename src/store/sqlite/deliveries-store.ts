import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { prepareValues, type Values } from './rows.ts'
import type { Delivery, DeliveryAttempt, DeliveryFilter, DeliveryOutcome, DeliveryState, DueDelivery, EndpointDeliveryStats } from '../api.ts'

const DELIVERY_COLUMNS = 'd.id, d.endpoint_id, d.event_id, d.event_type, d.state, d.attempt_count, d.due_ms, d.delivered_ms, d.created_ms, d.updated_ms, d.attempts'

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString())

const toDelivery = (r: Values): Delivery => ({
  id: r[0] as number,
  event_id: r[2] as number,
  webhook_endpoint_id: r[1] as number,
  event_type: r[3] as string,
  state: r[4] as DeliveryState,
  attempt_count: r[5] as number,
  next_attempt_at: r[4] === 'pending' ? iso(r[6] as number | null) : null,
  delivered_at: iso(r[7] as number | null),
  attempts: JSON.parse(r[10] as string) as DeliveryAttempt[],
  created_at: iso(r[8] as number) as string,
  updated_at: iso(r[9] as number) as string,
})

/**
 * The event a delivery posts, as the events feed renders it (C10: the body is the event object),
 * built in SQL from the stored `{"object": …}` text so that no body is parsed and serialised again.
 */
const EVENT_BODY = `'{"id":' || e.id || ',"type":' || json_quote(e.type) || ',"created_at":' || json_quote(e.created_at)
  || ',"subscription_id":' || coalesce(e.subscription_id, 'null')
  || ',"actor":' || CASE WHEN e.actor_type IS NULL THEN 'null' ELSE '{"type":' || json_quote(e.actor_type) || ',"id":' || coalesce(e.actor_id, 'null') || '}' END
  || ',"request_id":' || json_quote(e.request_id) || ',"data":' || e.data || '}'`

/** The webhook outbox (migration 7): deliveries, their attempts, and what the dispatcher asks of them. */
export function deliveriesStore(db: DatabaseSync) {
  const list = prepareValues(db, `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d WHERE d.endpoint_id = ?1 AND d.id > ?2
    AND (?3 IS NULL OR d.state = ?3) ORDER BY d.id LIMIT ?4`)
  // Across endpoints (C18), one statement per state, each through the index that holds that
  // state: failed ones by their partial index on id, pending ones by theirs (few, sorted), the
  // rest (nearly every row is delivered) along the primary key.
  const across = (source: string, state: string): StatementSync =>
    prepareValues(db, `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d ${source} JOIN webhook_endpoints w ON w.id = d.endpoint_id
      WHERE d.id > ?1 ${state} AND w.deleted_at IS NULL ORDER BY d.id LIMIT ?2`)
  const acrossEndpoints: Record<string, StatementSync> = {
    any: across('', ''),
    pending: across('INDEXED BY webhook_deliveries_pending', "AND d.state = 'pending'"),
    delivered: across('', "AND d.state = 'delivered'"),
    failed: across('INDEXED BY webhook_deliveries_failed', "AND d.state = 'failed'"),
  }
  const insert = prepareValues(db, `INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, due_ms, created_ms, updated_ms)
    VALUES (?, ?, ?, ?, ?, ?) RETURNING id`)
  const byId = prepareValues(db, `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries d JOIN webhook_endpoints w ON w.id = d.endpoint_id
    WHERE d.id = ? AND w.deleted_at IS NULL`)
  const bodyOf = prepareValues(db, `SELECT ${EVENT_BODY} FROM webhook_deliveries d JOIN events e ON e.id = d.event_id WHERE d.id = ?`)
  const nextDue = prepareValues(db, `SELECT due_ms FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
    WHERE endpoint_id = ? AND state = 'pending' ORDER BY due_ms LIMIT 1`)
  // The pending index holds endpoint, due time and creation time: counting an endpoint's backlog,
  // and finding its oldest, reads that index alone.
  const stats = prepareValues(db, `SELECT w.id, coalesce(p.n, 0), p.oldest, w.delivered_total, w.failed_total FROM webhook_endpoints w
    LEFT JOIN (SELECT endpoint_id, count(*) AS n, min(created_ms) AS oldest FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
      WHERE state = 'pending' GROUP BY endpoint_id) p ON p.endpoint_id = w.id
    WHERE w.deleted_at IS NULL ORDER BY w.id`)
  const oldestPending = prepareValues(db, `SELECT min(created_ms) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending WHERE state = 'pending'`)
  const due = prepareValues(db, `SELECT d.id, d.event_id, d.created_ms, d.retries, ${EVENT_BODY}
    FROM webhook_deliveries d INDEXED BY webhook_deliveries_pending JOIN events e ON e.id = d.event_id
    WHERE d.endpoint_id = ?1 AND d.state = 'pending' AND d.due_ms <= ?2 AND d.id NOT IN (SELECT value FROM json_each(?3))
      AND EXISTS (SELECT 1 FROM webhook_endpoints w WHERE w.id = ?1 AND w.deleted_at IS NULL AND w.disabled = 0)
    ORDER BY d.due_ms LIMIT ?4`) // the index's order: a tie-break on id would sort every due row first
  const settle = db.prepare(`UPDATE webhook_deliveries SET state = ?2, due_ms = ?3, retries = ?4, attempt_count = attempt_count + 1,
    attempts = json_insert(attempts, '$[#]', json(?5)), updated_ms = ?6, delivered_ms = CASE WHEN ?2 = 'delivered' THEN ?6 ELSE delivered_ms END
    WHERE id = ?1 AND state = 'pending'`)
  const logOnly = db.prepare(`UPDATE webhook_deliveries SET attempt_count = attempt_count + 1, attempts = json_insert(attempts, '$[#]', json(?2)),
    updated_ms = ?3 WHERE id = ?1`)
  const count = db.prepare('UPDATE webhook_endpoints SET delivered_total = delivered_total + ?2, failed_total = failed_total + ?3 WHERE id = ?1')
  const stateOf = prepareValues(db, 'SELECT state, endpoint_id FROM webhook_deliveries WHERE id = ?')
  const redelivered = db.prepare(`UPDATE webhook_deliveries SET state = 'delivered', due_ms = NULL, attempt_count = attempt_count + 1,
    attempts = json_insert(attempts, '$[#]', json(?2)), updated_ms = ?3, delivered_ms = ?3 WHERE id = ?1`)
  const cancel = db.prepare(`UPDATE webhook_deliveries SET state = 'canceled', due_ms = NULL, updated_ms = ?2 WHERE id IN (
    SELECT d.id FROM webhook_endpoints w JOIN webhook_deliveries d INDEXED BY webhook_deliveries_pending ON d.endpoint_id = w.id
    WHERE w.deleted_at IS NOT NULL AND d.state = 'pending' LIMIT ?1)`)

  const find = (id: number): Delivery | undefined => {
    const r = byId.get(id) as Values | undefined
    return r ? toDelivery(r) : undefined
  }

  return {
    list(f: DeliveryFilter): Delivery[] {
      const rows = f.endpointId === undefined
        ? acrossEndpoints[f.state ?? 'any']!.all(f.after, f.limit)
        : list.all(f.endpointId, f.after, f.state ?? null, f.limit)
      return (rows as unknown as Values[]).map(toDelivery)
    },
    add(endpointId: number, eventId: number, eventType: string, createdMs: number, dueMs: number): number {
      return (insert.get(endpointId, eventId, eventType, dueMs, createdMs, createdMs) as unknown as Values)[0] as number
    },
    find,
    bodyOf(id: number): string | undefined {
      return (bodyOf.get(id) as Values | undefined)?.[0] as string | undefined
    },
    nextDueMs(endpointId: number): number | null {
      return ((nextDue.get(endpointId) as Values | undefined)?.[0] as number | undefined) ?? null
    },
    stats(): EndpointDeliveryStats[] {
      return (stats.all() as unknown as Values[]).map((r) => ({
        endpoint_id: r[0] as number,
        pending: r[1] as number,
        oldest_pending_ms: r[2] as number | null,
        delivered_total: r[3] as number,
        failed_total: r[4] as number,
      }))
    },
    oldestPendingMs(): number | null {
      return ((oldestPending.get() as unknown as Values)[0] as number | null) ?? null
    },
    due(endpointId: number, nowMs: number, limit: number, skip: readonly number[]): DueDelivery[] {
      return (due.all(endpointId, nowMs, JSON.stringify(skip), limit) as unknown as Values[]).map((r) => ({
        id: r[0] as number,
        event_id: r[1] as number,
        created_ms: r[2] as number,
        retries: r[3] as number,
        body: r[4] as string,
      }))
    },
    recordOutcomes(outcomes: readonly DeliveryOutcome[]): void {
      const reached = new Map<number, [delivered: number, failed: number]>()
      for (const o of outcomes) {
        const attempt = JSON.stringify(o.attempt)
        if (Number(settle.run(o.id, o.state, o.due_ms, o.retries, attempt, o.at_ms).changes) === 0) {
          logOnly.run(o.id, attempt, o.at_ms)
          continue
        }
        if (o.state === 'pending') continue
        const totals = reached.get(o.endpoint_id) ?? [0, 0]
        totals[o.state === 'delivered' ? 0 : 1]++
        reached.set(o.endpoint_id, totals)
      }
      for (const [endpointId, [delivered, failed]] of reached) count.run(endpointId, delivered, failed)
    },
    recordRedelivery(id: number, attempt: DeliveryAttempt, succeeded: boolean, atMs: number): Delivery {
      const [state, endpointId] = stateOf.get(id) as unknown as [DeliveryState, number]
      if (succeeded && state !== 'delivered') {
        redelivered.run(id, JSON.stringify(attempt), atMs)
        count.run(endpointId, 1, 0)
      } else {
        logOnly.run(id, JSON.stringify(attempt), atMs)
      }
      return find(id) as Delivery
    },
    cancelOfDeletedEndpoints(limit: number, atMs: number): number {
      return Number(cancel.run(limit, atMs).changes)
    },
    /** `due` claims nothing here (one serve per file): a delivery it handed out is still due. */
    release(_ids: readonly number[], _atMs: number): void {},
  }
}
export type DeliveriesStore = ReturnType<typeof deliveriesStore>
