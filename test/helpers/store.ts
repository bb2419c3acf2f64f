import type { TestContext } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { Store, Unit, UnitContext } from '../../src/store/api.ts'
import { openSqliteStore, type SqliteStore, type StoreOptions } from '../../src/store/sqlite/store.ts'
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/store.ts'

/**
 * Which backend the suite runs against: `REPLENISH_TEST_DB` (unset or `sqlite`: a SQLite file in
 * a temporary directory per test; a `postgres://` URL: a fresh schema of that database per test,
 * dropped after it). Tests get "a store" (api.ts) from here and never open one by name, so the
 * same suite runs on another backend by switching this one setting (test/run.ts sets it).
 */
export const TEST_BACKEND = process.env['REPLENISH_TEST_DB'] ?? 'sqlite'
export const ON_POSTGRES = /^postgres(ql)?:\/\//.test(TEST_BACKEND)

let admin: pg.Pool | undefined
/** One small pool per test process that makes and drops the test schemas. */
function adminPool(): pg.Pool {
  if (!admin) {
    admin = new pg.Pool({ connectionString: TEST_BACKEND, max: 2, idleTimeoutMillis: 1000, allowExitOnIdle: true })
    admin.on('error', () => {})
  }
  return admin
}

/** The test database's URL with `search_path` set to `schema`: every connection of a store made from it works in that schema. */
export function postgresUrlWithSchema(base: string, schema: string): string {
  const u = new URL(base)
  u.searchParams.set('options', `-c search_path=${schema}`)
  return u.toString()
}

export interface TestStore {
  readonly store: Store
  /** Where the store lives (a file for SQLite), for a second process or connection. */
  readonly location: string
  close(): Promise<void>
}

export type TestStoreOptions = Partial<Pick<StoreOptions, 'beforeCommit' | 'syncWal' | 'backgroundCheckpoints' | 'checkpointThreadSource' | 'onBackgroundError' | 'maxBatch' | 'readCacheBytes' | 'lockTimeoutMs' | 'synchronous'>>

/** Where a fresh test store will live, and how to remove it (what a server's config names). */
export async function newTestLocation(): Promise<TestLocation> {
  if (ON_POSTGRES) {
    const schema = `t_${randomBytes(6).toString('hex')}`
    await adminPool().query(`CREATE SCHEMA ${schema}`)
    return {
      location: postgresUrlWithSchema(TEST_BACKEND, schema),
      remove: async () => void (await adminPool().query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)),
    }
  }
  if (TEST_BACKEND !== 'sqlite') throw new Error(`REPLENISH_TEST_DB=${TEST_BACKEND}: no such test backend (sqlite, or a postgres:// URL)`)
  const dir = mkdtempSync(join(tmpdir(), 'replenish-test-'))
  return { location: join(dir, 'test.db'), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

export interface TestLocation {
  readonly location: string
  remove(): void | Promise<void>
}

/** Opens the test backend's store at `location` (a second connection to a test's database, say). */
export async function openStoreAt(location: string, options: TestStoreOptions = {}): Promise<Store> {
  if (ON_POSTGRES) return openPostgresStore(location, { poolSize: 4, statementTimeoutMs: 60_000, synchronous: options.synchronous ?? 'FULL', readCacheBytes: options.readCacheBytes })
  return openSqliteStore(location, { synchronous: 'FULL', createDirectory: false, ...options })
}

/** A fresh, migrated store for one test, closed and removed after it (unless `t` is undefined). */
export async function openTestStore(t: TestContext | undefined, options: TestStoreOptions = {}, given?: TestLocation): Promise<TestStore> {
  const at = given ?? (await newTestLocation())
  const { location } = at
  const store = await openStoreAt(location, options)
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await store.stopBackground()
    await store.close()
    await at.remove()
  }
  t?.after(close)
  return { store, location, close }
}

/**
 * The SQLite store behind `store`, for a test of a SQLite mechanism (the body cache, WAL sync,
 * checkpoints): such a test is SQLite's own. Rows are read and written with SQL on either backend
 * through test/helpers/rows.ts.
 */
export function sqliteOf(store: Store): SqliteStore {
  if (store.kind !== 'sqlite') throw new Error(`this test needs the SQLite store, not ${store.kind}`)
  return store as SqliteStore
}

/** The PostgreSQL store behind `store`, for a test of what only PostgreSQL does (row locks, the pool). */
export function postgresOf(store: Store): PostgresStore {
  if (store.kind !== 'postgres') throw new Error(`this test needs the PostgreSQL store, not ${store.kind}`)
  return store as PostgresStore
}

/**
 * `store` as PostgreSQL may behave at its worst: units asked for together (in one turn of the
 * event loop, without awaiting one another) run one at a time, the last asked first. PostgreSQL
 * promises no order between concurrent units (each takes its own connection and they race for
 * locks); this makes the losing order certain instead of 1 run in 200, on either backend. It does
 * not claim `writesInOrder`, so callers that need an order must await each unit.
 */
export function lastAskedFirst(store: Store): Store {
  let asked: (() => Promise<void>)[] = []
  // The store's own write, taken now: a wrapper set on it later (startTestServer's trackWrites)
  // calls this one, and must not be called back from here.
  const original = store.write.bind(store)
  const runAll = async (): Promise<void> => {
    const now = asked.reverse()
    asked = []
    for (const run of now) await run()
  }
  const write = <T>(unit: Unit<T>, context?: UnitContext): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (asked.length === 0) setImmediate(() => void runAll())
      asked.push(() => original(unit, context).then(resolve, reject))
    })
  return new Proxy(store, {
    get: (target, key) => (key === 'write' ? write : key === 'writesInOrder' ? undefined : Reflect.get(target, key, target)),
  })
}
