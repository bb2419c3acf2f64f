import type { IdempotencyTx, StoredResponse } from '../api.ts'
import type { Sql } from './sql.ts'

const KEEP_MS = 86_400_000
const PRUNE_EVERY_MS = 60_000

/**
 * When a store last pruned (ms since the epoch). One per store, shared by all its units: a
 * repository is made for each unit (store.ts), so it cannot keep this itself. Set inside a unit
 * that may still roll back; a prune lost that way waits for the next minute, which only lets a
 * few more expired rows stay (they are never replayed).
 */
export interface PruneClock {
  last: number
}

export const newPruneClock = (): PruneClock => ({ last: Number.NEGATIVE_INFINITY })

const STORED = 'SELECT fingerprint, status, body FROM idempotency_keys WHERE scope = $1 AND key = $2'

/**
 * Responses kept for `Idempotency-Key` replays (C5), per caller scope, 24 hours. Older rows are
 * never replayed, and `save` deletes them at most once a minute per store, so the table holds
 * about a day of writes without a separate job.
 */
export function idempotencyRepo(sql: Sql, pruned: PruneClock): IdempotencyTx {
  return {
    find: (scope, key, notBefore) => sql.one<StoredResponse>(`${STORED} AND created_at > $3`, [scope, key, notBefore]),
    claim: (scope, key, fingerprint, at, notBefore) => claim(sql, scope, key, fingerprint, at, notBefore),
    /** `at` is real time (ISO 8601); runs inside the caller's unit of writes. */
    async save(scope, key, fingerprint, status, body, at) {
      const now = Date.parse(at)
      if (now - pruned.last >= PRUNE_EVERY_MS) {
        // Taken before the await: the store's units that save meanwhile leave the prune to this one.
        pruned.last = now
        await prune(sql, new Date(now - KEEP_MS).toISOString())
      }
      await sql.run(
        `INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) VALUES ($1, $2, $3, $4, $5, $6)
          ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = EXCLUDED.status, body = EXCLUDED.body, created_at = EXCLUDED.created_at`,
        [scope, key, fingerprint, status, body, at],
      )
    },
  }
}

/**
 * Deletes the answers made before `olderThan`, except rows another unit holds: a claim taking an
 * expired key over (it gets a new created_at) or another instance's prune. Waiting on those would
 * hold this request up, and two prunes locking rows in different orders could deadlock.
 */
async function prune(sql: Sql, olderThan: string): Promise<void> {
  await sql.run(
    `DELETE FROM idempotency_keys WHERE (scope, key) IN
      (SELECT scope, key FROM idempotency_keys WHERE created_at <= $1 FOR UPDATE SKIP LOCKED)`,
    [olderThan],
  )
}

/**
 * A placeholder row (status 0) takes the key for this unit: new, or over an answer that expired
 * (created before `notBefore`). While another unit holds the key, the INSERT waits on the unique
 * index for it to end; when that unit committed a fresh answer, the upsert's WHERE refuses it, no
 * row comes back, and that answer is read and replayed. The row stays locked by this unit either
 * way, so the answer cannot be pruned or replaced before the replay is read.
 */
async function claim(sql: Sql, scope: string, key: string, fingerprint: string, at: string, notBefore: string): Promise<StoredResponse | undefined> {
  const taken = await sql.one(
    `INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) VALUES ($1, $2, $3, 0, '', $4)
      ON CONFLICT (scope, key) DO UPDATE SET fingerprint = EXCLUDED.fingerprint, status = 0, body = '', created_at = EXCLUDED.created_at
      WHERE idempotency_keys.created_at <= $5
      RETURNING 1`,
    [scope, key, fingerprint, at, notBefore],
  )
  if (taken !== undefined) return undefined
  return sql.one<StoredResponse>(STORED, [scope, key])
}
