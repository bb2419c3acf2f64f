import type { TestContext } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { openSqliteStore, type SqliteStore, type StoreOptions } from '../../src/store/sqlite/store.ts'

export interface ScratchStore {
  readonly store: SqliteStore
  readonly file: string
  /** Inserts row `n` into the scratch table, on the store's connection (inside a unit). */
  insert(n: number): void
  /** The rows a second connection sees: committed ones only. */
  committed(): number[]
}

/**
 * A real SQLite store on a temporary file with a scratch table to write into, and a second,
 * read-only connection that sees only what has been committed; both closed and the file removed
 * after `t`. For tests of SQLite's own mechanisms (the writer, WAL sync): the scratch table is
 * written with raw SQL, which only the SQLite store allows.
 */
export function scratchStore(t: TestContext, options: Partial<StoreOptions> = {}): ScratchStore {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-scratch-'))
  const file = join(dir, 'scratch.db')
  const store = openSqliteStore(file, { synchronous: 'FULL', createDirectory: false, ...options })
  store.db.exec('CREATE TABLE unit_rows (n INTEGER PRIMARY KEY)')
  const insert = store.db.prepare('INSERT INTO unit_rows (n) VALUES (?)')
  const reader = new DatabaseSync(file, { readOnly: true })
  const read = reader.prepare('SELECT n FROM unit_rows ORDER BY n')
  t.after(async () => {
    reader.close()
    await store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    store,
    file,
    insert: (n) => void insert.run(n),
    committed: () => (read.all() as { n: number }[]).map((r) => r.n),
  }
}
