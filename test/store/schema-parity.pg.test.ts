/**
 * Issue 20: the PostgreSQL schema is the SQLite one (C15: every rule holds on both). A fresh
 * database of each kind has the same tables with the same columns, and both are at the same
 * schema version, so a migration written for one dialect only fails here.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.ts'
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/migrations.ts'
import { openSqliteStore } from '../../src/store/sqlite/store.ts'
import { ON_POSTGRES, openTestStore, postgresOf } from '../helpers/store.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

/** Tables that belong to one engine's bookkeeping, not to the product. */
const BOOKKEEPING = new Set(['sqlite_sequence', 'schema_migrations'])

test('both dialects are at the same schema version', () => {
  assert.equal(POSTGRES_SCHEMA_VERSION, SCHEMA_VERSION)
})

test('a fresh PostgreSQL database has the tables and columns of a fresh SQLite one', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-parity-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const sqlite = openSqliteStore(join(dir, 'parity.db'), { synchronous: 'NORMAL', createDirectory: false })
  const onSqlite = new Map<string, string[]>()
  for (const { name } of sqlite.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]) {
    if (BOOKKEEPING.has(name)) continue
    onSqlite.set(name, (sqlite.db.prepare(`SELECT name FROM pragma_table_info('${name}')`).all() as { name: string }[]).map((c) => c.name).sort())
  }
  await sqlite.close()

  const { store } = await openTestStore(t)
  const { rows } = await postgresOf(store).pool.query<{ table_name: string; column_name: string }>(
    'SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() ORDER BY table_name, column_name',
  )
  const onPostgres = new Map<string, string[]>()
  for (const r of rows) if (!BOOKKEEPING.has(r.table_name)) onPostgres.set(r.table_name, [...(onPostgres.get(r.table_name) ?? []), r.column_name])
  for (const columns of onPostgres.values()) columns.sort()

  assert.deepEqual([...onPostgres.keys()].sort(), [...onSqlite.keys()].sort())
  for (const [table, columns] of onSqlite) assert.deepEqual(onPostgres.get(table), columns, `the columns of ${table}`)
})
