import type { DatabaseSync } from 'node:sqlite'
import type { EventRecord } from '../domain/types.ts'
import { nowIso, type Row } from './rows.ts'

const toEvent = (r: Row): EventRecord => ({
  id: r['id'] as number,
  type: r['type'] as string,
  created_at: r['created_at'] as string,
  subscription_id: r['subscription_id'] as number | null,
  data: JSON.parse(r['data'] as string) as { object: unknown },
})

/** The event log of C10: written in the same transaction as the change it records. */
export function eventsStore(db: DatabaseSync) {
  const insert = db.prepare('INSERT INTO events (type, subscription_id, data, created_at) VALUES (?, ?, ?, ?)')
  const ofSubscription = db.prepare('SELECT * FROM events WHERE subscription_id = ? ORDER BY id DESC LIMIT ? OFFSET ?')
  const countOfSubscription = db.prepare('SELECT count(*) AS n FROM events WHERE subscription_id = ?')
  const feed = db.prepare('SELECT * FROM events WHERE id > ? ORDER BY id LIMIT ?')
  const feedOfType = db.prepare('SELECT * FROM events WHERE id > ? AND type = ? ORDER BY id LIMIT ?')

  return {
    record(type: string, subscriptionId: number | null, object: unknown): number {
      return Number(insert.run(type, subscriptionId, JSON.stringify({ object }), nowIso()).lastInsertRowid)
    },
    /** `record` for an object that is JSON text already: stored exactly as `record` would store it. */
    recordJson(type: string, subscriptionId: number | null, objectJson: string): number {
      return Number(insert.run(type, subscriptionId, `{"object":${objectJson}}`, nowIso()).lastInsertRowid)
    },
    ofSubscription(subscriptionId: number, offset: number, limit: number): EventRecord[] {
      return (ofSubscription.all(subscriptionId, limit, offset) as Row[]).map(toEvent)
    },
    countOfSubscription(subscriptionId: number): number {
      return (countOfSubscription.get(subscriptionId) as { n: number }).n
    },
    feed(after: number, limit: number, type: string | undefined): EventRecord[] {
      return ((type ? feedOfType.all(after, type, limit) : feed.all(after, limit)) as Row[]).map(toEvent)
    },
  }
}
export type EventsStore = ReturnType<typeof eventsStore>
