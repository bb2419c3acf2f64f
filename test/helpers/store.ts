import type { TestContext } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Store } from '../../src/store/api.ts'
import { openSqliteStore, type SqliteStore, type StoreOptions } from '../../src/store/sqlite/store.ts'

/**
 * Which backend the suite runs against: `REPLENISH_TEST_DB` (unset or `sqlite`: a SQLite file in
 * a temporary directory per test). Tests get "a store" (api.ts) from here and never open one by
 * name, so the same suite runs on another backend by switching this one setting.
 */
export const TEST_BACKEND = process.env['REPLENISH_TEST_DB'] ?? 'sqlite'

export interface TestStore {
  readonly store: Store
  /** Where the store lives (a file for SQLite), for a second process or connection. */
  readonly location: string
  close(): Promise<void>
}

export type TestStoreOptions = Partial<Pick<StoreOptions, 'beforeCommit' | 'syncWal' | 'backgroundCheckpoints' | 'checkpointThreadSource' | 'onBackgroundError' | 'maxBatch' | 'readCacheBytes' | 'lockTimeoutMs' | 'synchronous'>>

/** Where a fresh test store will live, and how to remove it (what a server's config names). */
export function newTestLocation(): { readonly location: string; remove(): void } {
  if (TEST_BACKEND !== 'sqlite') throw new Error(`REPLENISH_TEST_DB=${TEST_BACKEND}: no such test backend (sqlite)`)
  const dir = mkdtempSync(join(tmpdir(), 'replenish-test-'))
  return { location: join(dir, 'test.db'), remove: () => rmSync(dir, { recursive: true, force: true }) }
}

/** A fresh, migrated store for one test, closed and removed after it (unless `t` is undefined). */
export function openTestStore(t: TestContext | undefined, options: TestStoreOptions = {}, at = newTestLocation()): TestStore {
  const { location } = at
  const store = openSqliteStore(location, { synchronous: 'FULL', createDirectory: false, ...options })
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await store.stopBackground()
    await store.close()
    at.remove()
  }
  t?.after(close)
  return { store, location, close }
}

/**
 * The SQLite store behind `store`, for a test of a SQLite mechanism (the body cache, WAL sync,
 * checkpoints) or one that inspects rows with SQL: such a test is SQLite's own.
 */
export function sqliteOf(store: Store): SqliteStore {
  if (store.kind !== 'sqlite') throw new Error(`this test needs the SQLite store, not ${store.kind}`)
  return store as SqliteStore
}
