import type { DatabaseSync } from 'node:sqlite'
import type { EventRecord } from '../../domain/types.ts'
import { columns, nowIso, prepareValues, type Values } from './rows.ts'

/** The columns every events read selects (as arrays, rows.ts), in toEvent's order. */
const EVENT_COLUMNS = ['id', 'type', 'created_at', 'subscription_id', 'data'] as const

const toEvent = (r: Values): EventRecord => ({
  id: r[0] as number,
  type: r[1] as string,
  created_at: r[2] as string,
  subscription_id: r[3] as number | null,
  data: JSON.parse(r[4] as string) as { object: unknown },
})

/**
 * The `prev_id` of a new event of the subscription `subscriptionId` (an SQL expression): that
 * subscription's latest event. Every INSERT INTO events supplies it; the events_chain trigger
 * refuses any other value (migration 2).
 */
export const latestEventOf = (subscriptionId: string): string => `(SELECT last_event_id FROM subscriptions WHERE id = ${subscriptionId})`

/** The event log of C10: written in the same transaction as the change it records. */
export function eventsStore(db: DatabaseSync) {
  // The object arrives as JSON text and SQLite wraps it in {"object": …}: a ~1 KB body
  // concatenated in JavaScript would be a rope that V8 must copy flat again to bind it.
  const insert = db.prepare(`INSERT INTO events (type, subscription_id, data, created_at, prev_id) VALUES (?1, ?2, '{"object":' || ?3 || '}', ?4, ${latestEventOf('?2')})`)
  const recordJson = (type: string, subscriptionId: number | null, objectJson: string): number =>
    Number(insert.run(type, subscriptionId, objectJson, nowIso()).lastInsertRowid)
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

  return {
    /** Records `{"object": object}`; both kinds of record go through the one INSERT. */
    record(type: string, subscriptionId: number | null, object: object): number {
      return recordJson(type, subscriptionId, JSON.stringify(object))
    },
    /** `record` for an object that is JSON text already: stored exactly as `record` would store it. */
    recordJson,
    ofSubscription(subscriptionId: number, offset: number, limit: number): EventRecord[] {
      return (ofSubscription.all(subscriptionId, offset, limit) as unknown as Values[]).map(toEvent)
    },
    countOfSubscription(subscriptionId: number): number {
      return (countOfSubscription.get(subscriptionId) as unknown as [number] | undefined)?.[0] ?? 0
    },
    feed(after: number, limit: number, type: string | undefined): EventRecord[] {
      return ((type ? feedOfType.all(after, type, limit) : feed.all(after, limit)) as unknown as Values[]).map(toEvent)
    },
  }
}
export type EventsStore = ReturnType<typeof eventsStore>
