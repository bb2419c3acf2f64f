import type { DatabaseSync } from 'node:sqlite'
import type { EventRecord } from '../../domain/types.ts'
import type { RecordedEvent, UnitContext } from '../api.ts'
import { SUBSCRIPTION_BODY } from './subscriptions-store.ts'
import { EVENT_COLUMNS, storedActor } from '../columns.ts'
import { columns, nowIso, prepareValues, type Values } from './rows.ts'

export { EVENT_COLUMNS }

/** An events row read as an array of EVENT_COLUMNS (rows.ts). */
export const toEvent = (r: Values): EventRecord => ({
  id: r[0] as number,
  type: r[1] as string,
  created_at: r[2] as string,
  subscription_id: r[3] as number | null,
  actor: storedActor(r[4] as string | null, r[5] as number | null),
  request_id: r[6] as string | null,
  data: JSON.parse(r[7] as string) as { object: unknown },
})

/**
 * The `prev_id` of a new event of the subscription `subscriptionId` (an SQL expression): that
 * subscription's latest event. Every INSERT INTO events supplies it; the events_chain trigger
 * refuses any other value (migration 2).
 */
export const latestEventOf = (subscriptionId: string): string => `(SELECT last_event_id FROM subscriptions WHERE id = ${subscriptionId})`

/**
 * The event log of C10: written in the same transaction as the change it records, stamped with
 * who made it (C18): `context` answers the running unit's actor and request id (writer.ts), bound
 * into the one INSERT. Every event goes through `recordJson` (or the processor's bulk INSERT in
 * installments-store.ts, which binds the same), so a new event type is stamped without a word.
 */
export function eventsStore(db: DatabaseSync, context: () => UnitContext) {
  // The object arrives as JSON text and SQLite wraps it in {"object": …}: a ~1 KB body
  // concatenated in JavaScript would be a rope that V8 must copy flat again to bind it.
  const insert = db.prepare(`INSERT INTO events (type, subscription_id, data, created_at, prev_id, actor_type, actor_id, request_id)
    VALUES (?1, ?2, '{"object":' || ?3 || '}', ?4, ${latestEventOf('?2')}, ?5, ?6, ?7)`)
  const recordJson = (type: string, subscriptionId: number | null, objectJson: string): number => {
    const { actor, requestId } = context()
    return Number(insert.run(type, subscriptionId, objectJson, nowIso(), actor.type, actor.id, requestId).lastInsertRowid)
  }
  // Each subscription once, so each row's prev_id (its latest event, read with the row) is still
  // its latest when the row goes in, as the installments' bulk INSERT relies on too.
  const insertForEach = prepareValues(db, `INSERT INTO events (type, subscription_id, data, created_at, prev_id, actor_type, actor_id, request_id)
    SELECT ?1, s.id, '{"object":' || ${SUBSCRIPTION_BODY} || '}', ?3, s.last_event_id, ?4, ?5, ?6
    FROM subscriptions s WHERE s.id IN (SELECT value FROM json_each(?2)) ORDER BY s.id
    RETURNING subscription_id, id`)
  const recordSubscriptions = (type: string, subscriptionIds: readonly number[]): RecordedEvent[] => {
    if (subscriptionIds.length === 0) return []
    const { actor, requestId } = context()
    const rows = insertForEach.all(type, JSON.stringify(subscriptionIds), nowIso(), actor.type, actor.id, requestId) as unknown as [number, number][]
    return rows.map(([subscriptionId, eventId]) => ({ subscriptionId, eventId })).sort((a, b) => a.subscriptionId - b.subscriptionId)
  }
  // A subscription's events are a chain, newest first (migration 2): walk it for offset + limit
  // links and keep the last `limit` of them.
  const ofSubscription = prepareValues(db, `WITH RECURSIVE chain(id, n) AS (
      SELECT last_event_id, 0 FROM subscriptions WHERE id = ?1 AND last_event_id IS NOT NULL
      UNION ALL
      SELECT e.prev_id, chain.n + 1 FROM chain JOIN events e ON e.id = chain.id
        WHERE e.prev_id IS NOT NULL AND chain.n + 1 < ?2 + ?3
    )
    SELECT ${columns(EVENT_COLUMNS, 'e')} FROM chain JOIN events e ON e.id = chain.id WHERE chain.n >= ?2 ORDER BY chain.n`)
  const countOfSubscription = prepareValues(db, 'SELECT event_count FROM subscriptions WHERE id = ?')
  const feed = prepareValues(db, `SELECT ${columns(EVENT_COLUMNS)} FROM events WHERE id > ? ORDER BY id LIMIT ?`)
  const feedOfType = prepareValues(db, `SELECT ${columns(EVENT_COLUMNS)} FROM events WHERE id > ? AND type = ? ORDER BY id LIMIT ?`)

  // Retention works from the oldest event on: ids follow creation, so the events to prune are a
  // prefix of the table, and so are their deliveries (made with them, by the outbox trigger).
  // The newest event always stays: ids are rowids (no AUTOINCREMENT), and an empty table would
  // hand out id 1 again, breaking the feed's cursor and the receivers' dedupe on the event id.
  // The same holds for deliveries.
  const oldest = prepareValues(db, 'SELECT id, created_at FROM events WHERE id < (SELECT max(id) FROM events) ORDER BY id LIMIT ?')
  const uncount = db.prepare(`UPDATE subscriptions SET event_count = event_count - c.n
    FROM (SELECT subscription_id AS sid, count(*) AS n FROM events WHERE id <= ? AND subscription_id IS NOT NULL GROUP BY subscription_id) c
    WHERE subscriptions.id = c.sid`)
  const removeEvents = db.prepare('DELETE FROM events WHERE id <= ?')
  // The first rows of the deliveries, unfiltered (a filter would scan the whole table for more).
  const deliveriesPrefix = prepareValues(db, `SELECT max(id), count(*) FROM (SELECT id, event_id FROM webhook_deliveries ORDER BY id LIMIT ?2)
    WHERE event_id <= ?1`)
  const removeDeliveries = db.prepare(`DELETE FROM webhook_deliveries WHERE id <= ? AND state <> 'pending'
    AND id < (SELECT max(id) FROM webhook_deliveries)`)
  const DELIVERIES_STEP = 1000

  return {
    /** Records `{"object": object}`; both kinds of record go through the one INSERT. */
    record(type: string, subscriptionId: number | null, object: object): number {
      return recordJson(type, subscriptionId, JSON.stringify(object))
    },
    /** `record` for an object that is JSON text already: stored exactly as `record` would store it. */
    recordJson,
    append(type: string, subscriptionId: number | null, objectJson: string): void {
      recordJson(type, subscriptionId, objectJson)
    },
    recordSubscriptions,
    ofSubscription(subscriptionId: number, offset: number, limit: number): EventRecord[] {
      return (ofSubscription.all(subscriptionId, offset, limit) as unknown as Values[]).map(toEvent)
    },
    countOfSubscription(subscriptionId: number): number {
      return (countOfSubscription.get(subscriptionId) as unknown as [number] | undefined)?.[0] ?? 0
    },
    pruneBefore(beforeIso: string, limit: number): number {
      const rows = oldest.all(limit) as unknown as Values[]
      let upto = 0
      let n = 0
      for (const r of rows) {
        if ((r[1] as string) >= beforeIso) break
        upto = r[0] as number
        n++
      }
      if (n === 0) return 0
      // A subscription's chain of events ends where its oldest kept event is; its count follows.
      uncount.run(upto)
      removeEvents.run(upto)
      for (;;) {
        const [last, count] = deliveriesPrefix.get(upto, DELIVERIES_STEP) as unknown as [number | null, number]
        if (last === null) break
        removeDeliveries.run(last)
        if (count < DELIVERIES_STEP) break
      }
      return n
    },
    feed(after: number, limit: number, type: string | undefined): EventRecord[] {
      return ((type ? feedOfType.all(after, type, limit) : feed.all(after, limit)) as unknown as Values[]).map(toEvent)
    },
  }
}
export type EventsStore = ReturnType<typeof eventsStore>
