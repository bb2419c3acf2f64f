import type { LeaseHolder, LeasesTx } from '../api.ts'
import type { Sql } from './sql.ts'
import { sessionName } from './connection.ts'

/**
 * Now on the database's clock, in ms. Several instances share the lease, each with its own clock:
 * expiry is measured on the one clock they all see. Callers give times on their own clock; only
 * the time to live they mean (expiresAt - their now) is kept.
 */
const DB_NOW = '(extract(epoch FROM clock_timestamp()) * 1000)::bigint'

interface LeaseRow extends LeaseHolder {
  readonly now: number
}

/**
 * Named leases in the database (one row per name) and the log of processor runs. A lease is
 * taken, renewed and released inside units of writes, its row locked while a unit decides from
 * it, so two acquirers can never both win, and a batch that renews it commits only while it is
 * still ours.
 */
export function leasesRepo(sql: Sql): LeasesTx {
  /**
   * A holder (`host:pid:random`, lease.ts) is gone when no session of its process is connected to
   * this database (store.ts names every session after its process), whichever host it ran on, or
   * when `isGone` knows it is dead on this host.
   */
  async function gone(holder: string, isGone: (holder: string) => boolean): Promise<boolean> {
    if (isGone(holder)) return true
    const m = /^(.*):(\d+):[^:]*$/.exec(holder)
    // A holder that names no process is trusted until its lease expires.
    if (m === null) return false
    const r = await sql.one<{ alive: boolean }>(
      'SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND application_name = $1) AS alive',
      [sessionName(m[1], Number(m[2]))],
    )
    return r?.alive !== true
  }

  return {
    /**
     * Takes the lease when it is free, expired, already ours, or its holder is gone; answers the
     * holder that keeps it otherwise. A taken lease is locked and decided from that row; one that
     * another unit holds (its holder renewing it in a batch, another acquirer) is kept: the caller
     * asks again rather than waiting that unit out. A free one is inserted; a concurrent insert
     * waits for ours, then finds it taken.
     */
    async acquire(name, holder, expiresAt, nowMs, isGone) {
      const ttl = expiresAt - nowMs
      for (;;) {
        const row = await sql.one<LeaseRow>(`SELECT holder, expires_at, ${DB_NOW} AS now FROM leases WHERE name = $1 FOR UPDATE SKIP LOCKED`, [name])
        if (row === undefined) {
          const busy = await sql.one<LeaseHolder>('SELECT holder, expires_at FROM leases WHERE name = $1', [name])
          if (busy !== undefined) return { holder: busy.holder, expires_at: busy.expires_at }
          const inserted = await sql.one(`INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, ${DB_NOW} + $3)
            ON CONFLICT (name) DO NOTHING RETURNING name`, [name, holder, ttl])
          if (inserted !== undefined) return undefined
          // Another acquirer inserted it meanwhile: decide from its row.
          continue
        }
        if (row.holder !== holder && row.expires_at > row.now && !(await gone(row.holder, isGone))) {
          return { holder: row.holder, expires_at: row.expires_at }
        }
        await sql.run(`UPDATE leases SET holder = $2, expires_at = ${DB_NOW} + $3 WHERE name = $1`, [name, holder, ttl])
        return undefined
      }
    },
    /** False when the lease is no longer ours (it expired and another holder took it). */
    async renew(name, holder, expiresAt) {
      const ttl = expiresAt - Date.now()
      return (await sql.run(`UPDATE leases SET expires_at = ${DB_NOW} + $3 WHERE name = $1 AND holder = $2`, [name, holder, ttl])) === 1
    },
    async release(name, holder) {
      await sql.run('DELETE FROM leases WHERE name = $1 AND holder = $2', [name, holder])
    },
    async startRun(holder, asOf, at) {
      const r = await sql.one<{ id: number }>('INSERT INTO process_runs (holder, as_of, started_at) VALUES ($1, $2, $3) RETURNING id', [holder, asOf, at])
      if (r === undefined) throw new Error('INSERT … RETURNING answered no row')
      return r.id
    },
    async finishRun(id, processed, at) {
      await sql.run('UPDATE process_runs SET processed = $1, finished_at = $2 WHERE id = $3', [processed, at, id])
    },
    /** Start time of the newest run that finished: everything due then has been handled. */
    async lastCompletedRunStart() {
      return (await sql.one<{ t: string | null }>('SELECT max(started_at) AS t FROM process_runs WHERE finished_at IS NOT NULL'))?.t ?? null
    },
  }
}
