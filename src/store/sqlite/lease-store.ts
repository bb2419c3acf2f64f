import type { DatabaseSync } from 'node:sqlite'
import type { LeaseHolder } from '../api.ts'
export type { LeaseHolder }

/**
 * Named leases in the database (one row per name) and the log of processor runs. A lease is
 * taken, renewed and released inside units of writes, so it is exactly as durable and as
 * serialised as the work it guards: two processes on one file can never both hold it.
 */
export function leaseStore(db: DatabaseSync) {
  const current = db.prepare('SELECT holder, expires_at FROM leases WHERE name = ?')
  const take = db.prepare(`INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`)
  const renew = db.prepare('UPDATE leases SET expires_at = ? WHERE name = ? AND holder = ?')
  const release = db.prepare('DELETE FROM leases WHERE name = ? AND holder = ?')
  const startRun = db.prepare('INSERT INTO process_runs (holder, as_of, started_at) VALUES (?, ?, ?) RETURNING id')
  const finishRun = db.prepare('UPDATE process_runs SET processed = ?, finished_at = ? WHERE id = ?')
  const lastCompleted = db.prepare('SELECT max(started_at) AS t FROM process_runs WHERE finished_at IS NOT NULL')

  return {
    /**
     * Takes the lease when it is free, expired, already ours, or held by a holder `isGone` says
     * is dead (a process killed on this host). Answers the holder that keeps it otherwise.
     */
    acquire(name: string, holder: string, expiresAt: number, nowMs: number, isGone: (holder: string) => boolean): LeaseHolder | undefined {
      const row = current.get(name) as LeaseHolder | undefined
      if (row && row.holder !== holder && row.expires_at > nowMs && !isGone(row.holder)) return { ...row }
      take.run(name, holder, expiresAt)
      return undefined
    },
    /** False when the lease is no longer ours (it expired and another holder took it). */
    renew(name: string, holder: string, expiresAt: number): boolean {
      return Number(renew.run(expiresAt, name, holder).changes) === 1
    },
    release(name: string, holder: string): void {
      release.run(name, holder)
    },
    startRun(holder: string, asOf: string, at: string): number {
      return (startRun.get(holder, asOf, at) as { id: number }).id
    },
    finishRun(id: number, processed: number, at: string): void {
      finishRun.run(processed, at, id)
    },
    /** Start time of the newest run that finished: everything due then has been handled. */
    lastCompletedRunStart(): string | null {
      return (lastCompleted.get() as { t: string | null }).t
    },
  }
}
export type LeaseStore = ReturnType<typeof leaseStore>
