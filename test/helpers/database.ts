import type { TestContext } from 'node:test'
import { spawnSync } from 'node:child_process'
import { DatabaseSync } from 'node:sqlite'
import pg from 'pg'
import type { Store } from '../../src/store/api.ts'
import type { TestServer } from './server.ts'
import { ON_POSTGRES, postgresOf, sqliteOf, type TestStoreOptions } from './store.ts'

// What a test does to the database behind a store from outside the store, on either backend.

/**
 * Holds, from another connection (as another process would), what a unit that changes
 * `subscriptionId` must take, so that requests line up behind it: SQLite's write lock (no unit
 * runs at all), or PostgreSQL's lock on the subscription's row (every unit that locks it waits).
 * Answers the release; the connection is closed after `t` in any case.
 */
export async function holdSubscription(t: TestContext, server: TestServer, subscriptionId: number): Promise<() => Promise<void>> {
  if (server.store.kind === 'postgres') {
    const other = new pg.Client({ connectionString: server.config.db })
    await other.connect()
    t.after(() => other.end())
    await other.query('BEGIN')
    await other.query('SELECT id FROM subscriptions WHERE id = $1 FOR UPDATE', [subscriptionId])
    return async () => void (await other.query('COMMIT'))
  }
  const other = new DatabaseSync(server.config.db, { timeout: 0 })
  t.after(() => other.close())
  await takeWriteLock(other)
  return async () => void other.exec('COMMIT')
}

/**
 * BEGIN IMMEDIATE on another connection to a server's SQLite file, as another process would take
 * the write lock. The server's own writer may hold the lock at that moment (a fire-and-forget
 * write such as a key's last_used_at, or serve's heartbeat: its batch commits on a setImmediate),
 * so BEGIN is tried again off the event loop until the lock is free. Neither failing at once nor
 * a busy timeout will do: a busy handler sleeps on the event loop that writer needs to commit.
 */
export async function takeWriteLock(other: DatabaseSync): Promise<void> {
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      other.exec('BEGIN IMMEDIATE')
      return
    } catch (err) {
      if ((err as { errcode?: number }).errcode !== SQLITE_BUSY || Date.now() > deadline) throw err
    }
    await new Promise((resolve) => setTimeout(resolve, 1))
  }
}

const SQLITE_BUSY = 5

/** How a refused write fails, in the backend's words. */
export interface Refusal {
  /** A word of the database's error, which an answer to a client must not show. */
  readonly word: string
  /** The error's message. */
  readonly message: RegExp
}

/**
 * From now on the database refuses every write of this store, as a read-only database does
 * (SQLite: `query_only`, as a read-only file; PostgreSQL: every pooled session read-only, as a
 * standby answers after a failover). Reads still work.
 */
export async function refuseWrites(store: Store): Promise<Refusal> {
  if (store.kind === 'postgres') {
    await setReadOnly(store, true)
    return { word: 'read-only', message: /read-only transaction/ }
  }
  sqliteOf(store).db.exec('PRAGMA query_only = ON')
  return { word: 'readonly', message: /readonly database/ }
}

/**
 * Every session of the store's pool read-only (or writable again): a write then fails with
 * "cannot execute … in a read-only transaction". Waits for sessions in use to come back.
 */
async function setReadOnly(store: Store, on: boolean): Promise<void> {
  const { pool } = postgresOf(store)
  const sessions = await Promise.all(Array.from({ length: pool.options.max ?? 10 }, () => pool.connect()))
  for (const s of sessions) await s.query(`SET default_transaction_read_only = ${on ? 'on' : 'off'}`)
  for (const s of sessions) s.release()
}

/**
 * Writes that fail while switched on, for a test of what a failed write does: SQLite's batch
 * COMMIT throws "disk on fire" (the writer's `beforeCommit`, so give `storeOptions` to the store);
 * PostgreSQL's sessions turn read-only. `message` is a part of the failure's text.
 */
export interface WriteFailures {
  readonly storeOptions: TestStoreOptions
  readonly message: string
  /** Switches the failure on or off for `store` (made with `storeOptions`). */
  set(store: Store, on: boolean): Promise<void>
}

export function writeFailures(): WriteFailures {
  if (ON_POSTGRES) return { storeOptions: {}, message: 'read-only transaction', set: setReadOnly }
  let failing = false
  return {
    storeOptions: { beforeCommit: () => { if (failing) throw new Error('disk on fire') } },
    message: 'disk on fire',
    set: async (_store, on) => void (failing = on),
  }
}

/**
 * Runs `sql` to its commit before the caller goes on, as another process sharing the database
 * would, for a synchronous callback of the code under test (a processor's `onProgress`): SQLite
 * runs it on the store's own connection, idle between units; PostgreSQL in a child process that
 * this one waits for (its driver has no synchronous call).
 */
export function runSqlNow(store: Store, sql: string): void {
  if (store.kind !== 'postgres') {
    sqliteOf(store).db.exec(sql)
    return
  }
  const script = "const c = new (require('pg').Client)(process.argv[1]); c.connect().then(() => c.query(process.argv[2])).then(() => c.end())"
  const child = spawnSync(process.execPath, ['-e', script, String(postgresOf(store).pool.options.connectionString), sql], { cwd: REPO, encoding: 'utf8' })
  if (child.status !== 0) throw new Error(`runSqlNow: ${child.stderr}`)
}

const REPO = new URL('../..', import.meta.url).pathname
