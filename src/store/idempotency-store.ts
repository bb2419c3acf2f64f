import type { DatabaseSync } from 'node:sqlite'

export interface StoredResponse {
  readonly fingerprint: string
  readonly status: number
  readonly body: string
}

/** Responses kept for `Idempotency-Key` replays (C5), per caller scope, 24 hours. */
export function idempotencyStore(db: DatabaseSync) {
  const find = db.prepare('SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = ? AND key = ? AND created_at > ?')
  const save = db.prepare('INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) VALUES (?, ?, ?, ?, ?, ?)')
  const prune = db.prepare('DELETE FROM idempotency_keys WHERE created_at <= ?')
  return {
    find(scope: string, key: string, notBefore: string): StoredResponse | undefined {
      return find.get(scope, key, notBefore) as StoredResponse | undefined
    },
    save(scope: string, key: string, fingerprint: string, status: number, body: string, at: string): void {
      save.run(scope, key, fingerprint, status, body, at)
    },
    prune(olderThan: string): number {
      return Number(prune.run(olderThan).changes)
    },
  }
}
export type IdempotencyStore = ReturnType<typeof idempotencyStore>
