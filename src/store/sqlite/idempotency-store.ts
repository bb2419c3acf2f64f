import type { DatabaseSync } from 'node:sqlite'
import { prepareValues } from './rows.ts'
import type { StoredResponse } from '../api.ts'
export type { StoredResponse }

const KEEP_MS = 86_400_000
const PRUNE_EVERY_MS = 60_000

/**
 * Responses kept for `Idempotency-Key` replays (C5), per caller scope, 24 hours. Older rows are
 * never replayed, and `save` deletes them at most once a minute, so the table holds about a
 * day of writes without a separate job.
 */
export function idempotencyStore(db: DatabaseSync) {
  const find = prepareValues(db, 'SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = ? AND key = ? AND created_at > ?')
  const save = db.prepare('INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  const prune = db.prepare('DELETE FROM idempotency_keys WHERE created_at <= ?')
  let lastPrune = Number.NEGATIVE_INFINITY
  const pruneOlderThan = (olderThan: string): number => Number(prune.run(olderThan).changes)
  return {
    find(scope: string, key: string, notBefore: string): StoredResponse | undefined {
      const row = find.get(scope, key, notBefore) as unknown as [string, number, string] | undefined
      return row && { fingerprint: row[0], status: row[1], body: row[2] }
    },
    /** The one writer runs units one at a time: what a committed request stored is all there is to find. */
    claim(scope: string, key: string, _fingerprint: string, _at: string, notBefore: string): StoredResponse | undefined {
      const row = find.get(scope, key, notBefore) as unknown as [string, number, string] | undefined
      return row && { fingerprint: row[0], status: row[1], body: row[2] }
    },
    /** `at` is real time (ISO 8601); runs inside the caller's unit of writes. */
    save(scope: string, key: string, fingerprint: string, status: number, body: string, at: string): void {
      const now = Date.parse(at)
      if (now - lastPrune >= PRUNE_EVERY_MS) {
        pruneOlderThan(new Date(now - KEEP_MS).toISOString())
        lastPrune = now
      }
      save.run(scope, key, fingerprint, status, body, at)
    },
    prune: pruneOlderThan,
  }
}
export type IdempotencyStore = ReturnType<typeof idempotencyStore>
