import type { TestContext } from 'node:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { openStore, type Store, type StoreOptions } from '../../src/store/store.ts'

export interface ScratchStore {
  readonly store: Store
  readonly file: string
  /** Inserts row `n` into the scratch table (inside a unit). */
  insert(n: number): void
  /** The rows a second connection sees: committed ones only. */
  committed(): number[]
}

/**
 * A real store on a temporary file with a scratch table to write into, and a second, read-only
 * connection that sees only what has been committed; both closed and the file removed after `t`.
 */
export function scratchStore(t: TestContext, options: Partial<StoreOptions> = {}): ScratchStore {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-scratch-'))
  const file = join(dir, 'scratch.db')
  const store = openStore(file, { synchronous: 'FULL', createDirectory: false, ...options })
  store.db.exec('CREATE TABLE unit_rows (n INTEGER PRIMARY KEY)')
  const insert = store.db.prepare('INSERT INTO unit_rows (n) VALUES (?)')
  const reader = new DatabaseSync(file, { readOnly: true })
  const read = reader.prepare('SELECT n FROM unit_rows ORDER BY n')
  t.after(() => {
    reader.close()
    store.close()
    rmSync(dir, { recursive: true, force: true })
  })
  return {
    store,
    file,
    insert: (n) => void insert.run(n),
    committed: () => (read.all() as { n: number }[]).map((r) => r.n),
  }
}
