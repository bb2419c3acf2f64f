import type { EventRecord } from '../../domain/types.ts'
import type { EventsTx, RecordedEvent, UnitContext } from '../api.ts'
import type { Sql } from './sql.ts'
import { columns, nowIso } from './rows.ts'
import { EVENT_COLUMNS, storedActor } from '../columns.ts'

export { EVENT_COLUMNS }
const E = columns(EVENT_COLUMNS)

export interface EventRow {
  readonly id: number
  readonly type: string
  readonly created_at: string
  readonly subscription_id: number | null
  readonly actor_type: string | null
  readonly actor_id: number | null
  readonly request_id: string | null
  readonly data: string
}

/** An events row as the feed, a subscription's history and the dashboard answer it. */
export const toEvent = (r: EventRow): EventRecord => ({
  id: r.id,
  type: r.type,
  created_at: r.created_at,
  subscription_id: r.subscription_id,
  actor: storedActor(r.actor_type, r.actor_id),
  request_id: r.request_id,
  data: JSON.parse(r.data) as { object: unknown },
})

// The object arrives as JSON text and the database wraps it in {"object": …}, as SQLite does.
// prev_id is not supplied: the events_chain trigger links the event to its subscription's latest
// under that subscription's row lock, so concurrent units never fork the chain. Who made it (C18)
// is bound into the same statement: no round trip more.
const APPEND = `INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
  VALUES ($1, $2, '{"object":' || $3 || '}', $4, $5, $6, $7)`
const INSERT = `${APPEND} RETURNING id`

// A subscription's events are a chain, newest first: walk it for offset + limit links and keep
// the last `limit` of them (one statement, so the walk sees one moment of the chain).
const OF_SUBSCRIPTION = `WITH RECURSIVE chain(id, n) AS (
    SELECT last_event_id, 0 FROM subscriptions WHERE id = $1 AND last_event_id IS NOT NULL
    UNION ALL
    SELECT e.prev_id, chain.n + 1 FROM chain JOIN events e ON e.id = chain.id
      WHERE e.prev_id IS NOT NULL AND chain.n + 1 < $2::integer + $3::integer
  )
  SELECT ${columns(EVENT_COLUMNS, 'e')} FROM chain JOIN events e ON e.id = chain.id WHERE chain.n >= $2 ORDER BY chain.n`

// Retention works from the oldest event on: ids follow creation, so the events to prune are a
// prefix of the table, and so are their deliveries (made with them, by the outbox trigger). The
// newest event always stays, and the newest delivery, as on SQLite (whose ids an empty table
// would hand out again; a sequence would not, but both backends keep the same rows).
const OLDEST = 'SELECT id, created_at FROM events WHERE id < (SELECT max(id) FROM events) ORDER BY id LIMIT $1'
// The events go, and each subscription's count drops by exactly the rows deleted: its chain now
// ends at its oldest kept event. The subscriptions are locked in id order, as every unit that
// holds several takes them, so retention does not deadlock with the processor.
const REMOVE_EVENTS = `WITH gone AS (
    DELETE FROM events WHERE id <= $1 RETURNING subscription_id
  ), c AS (
    SELECT subscription_id AS sid, count(*) AS n FROM gone WHERE subscription_id IS NOT NULL GROUP BY subscription_id
  ), held AS (
    SELECT s.id, c.n FROM subscriptions s JOIN c ON c.sid = s.id ORDER BY s.id FOR UPDATE OF s
  )
  UPDATE subscriptions SET event_count = event_count - held.n FROM held WHERE subscriptions.id = held.id`
// The first rows of the deliveries, unfiltered (a filter would scan the whole table for more).
const DELIVERIES_PREFIX = `SELECT max(id) AS last, count(*) AS n
  FROM (SELECT id, event_id FROM webhook_deliveries ORDER BY id LIMIT $2) d WHERE event_id <= $1`
const REMOVE_DELIVERIES = `DELETE FROM webhook_deliveries WHERE id <= $1 AND state <> 'pending'
  AND id < (SELECT max(id) FROM webhook_deliveries)`
const DELIVERIES_STEP = 1000

// The feed lists events in id order, and a page must never pass an id that a running
// transaction holds and commits later: the reader's cursor would skip it for good. So a page ends
// at a horizon read first, in a statement of its own: the last id taken so far, lowered to the
// smallest floor a running writer of events holds (migrations.ts, events_floor). Those writers
// take only ids above their floors; every other id up to the horizon belongs to a transaction
// that has ended, so the page's statement, whose snapshot is taken after, sees all of them. The
// sequence is read before the locks (the correlated subquery runs on the row read first): a
// writer missing from the locks then takes ids above that last id.
const HORIZON = `SELECT (
    SELECT least(l.last_id, min((a.classid::bigint << 32) | a.objid::bigint))
    FROM pg_locks a JOIN pg_locks r ON r.virtualtransaction = a.virtualtransaction
    WHERE a.locktype = 'advisory' AND a.objsubid = 1 AND a.mode = 'ShareLock'
      AND r.locktype = 'relation' AND r.relation = 'events'::regclass AND r.mode = 'RowExclusiveLock'
  ) AS upto
  FROM (SELECT CASE WHEN is_called THEN last_value ELSE last_value - 1 END AS last_id FROM events_id_seq) l`

/**
 * The event log of C10: written in the same transaction as the change it records, stamped with
 * the unit's actor and request id (`context`, C18; installments.ts's bulk INSERT binds the same).
 * Every event goes through `recordJson`, so a new event type is stamped without a word.
 */
export function eventsRepo(sql: Sql, context: UnitContext, renderSubscription: (id: number) => Promise<string | undefined>): EventsTx {
  const events = async (text: string, values: readonly unknown[]): Promise<EventRecord[]> => (await sql.rows<EventRow>(text, values)).map(toEvent)
  const { actor, requestId } = context
  const recordJson = async (type: string, subscriptionId: number | null, objectJson: string): Promise<number> => {
    const row = await sql.one<{ id: number }>(INSERT, [type, subscriptionId, objectJson, nowIso(), actor.type, actor.id, requestId])
    if (!row) throw new Error('INSERT … RETURNING answered no event id')
    return row.id
  }

  /** Deletes the deliveries of the pruned events (never a pending one), a step of the table at a time. */
  const pruneDeliveries = async (upto: number): Promise<void> => {
    for (;;) {
      const prefix = await sql.one<{ last: number | null; n: number }>(DELIVERIES_PREFIX, [upto, DELIVERIES_STEP])
      if (!prefix || prefix.last === null) break
      await sql.run(REMOVE_DELIVERIES, [prefix.last])
      if (prefix.n < DELIVERIES_STEP) break
    }
  }

  return {
    /** Records `{"object": object}`; both kinds of record go through the one INSERT. */
    record: (type: string, subscriptionId: number | null, object: object) => recordJson(type, subscriptionId, JSON.stringify(object)),
    /** `record` for an object that is JSON text already: stored exactly as `record` would store it. */
    recordJson,
    append: (type: string, subscriptionId: number | null, objectJson: string) =>
      sql.later(APPEND, [type, subscriptionId, objectJson, nowIso(), actor.type, actor.id, requestId]),
    /** One subscription at a time: its body is rendered here, not in SQL. */
    async recordSubscriptions(type, subscriptionIds) {
      const recorded: RecordedEvent[] = []
      for (const subscriptionId of [...subscriptionIds].sort((a, b) => a - b)) {
        const body = await renderSubscription(subscriptionId)
        if (body !== undefined) recorded.push({ subscriptionId, eventId: await recordJson(type, subscriptionId, body) })
      }
      return recorded
    },
    ofSubscription: (subscriptionId: number, offset: number, limit: number) => events(OF_SUBSCRIPTION, [subscriptionId, offset, limit]),
    async countOfSubscription(subscriptionId: number): Promise<number> {
      return (await sql.one<{ event_count: number }>('SELECT event_count FROM subscriptions WHERE id = $1', [subscriptionId]))?.event_count ?? 0
    },
    async pruneBefore(beforeIso: string, limit: number): Promise<number> {
      const rows = await sql.rows<{ id: number; created_at: string }>(OLDEST, [limit])
      let upto = 0
      let n = 0
      for (const r of rows) {
        if (r.created_at >= beforeIso) break
        upto = r.id
        n++
      }
      if (n === 0) return 0
      await sql.run(REMOVE_EVENTS, [upto])
      await pruneDeliveries(upto)
      return n
    },
    async feed(after: number, limit: number, type: string | undefined): Promise<EventRecord[]> {
      const upto = (await sql.one<{ upto: number }>(HORIZON))?.upto ?? 0
      return type
        ? events(`SELECT ${E} FROM events WHERE id > $1 AND id <= $2 AND type = $3 ORDER BY id LIMIT $4`, [after, upto, type, limit])
        : events(`SELECT ${E} FROM events WHERE id > $1 AND id <= $2 ORDER BY id LIMIT $3`, [after, upto, limit])
    },
  }
}
