/**
 * Migration versions are taken by issues worked on side by side (issue 28 took 13 while others
 * took 10–12), so their entries may land in migrations.ts in any order: the runner applies them
 * by version whatever the list's order, and refuses two of one version. Migration 13 adds the
 * two indexes of the user search and keeps every user.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, inVersionOrder, migrate } from '../../src/store/sqlite/migrations.ts'

const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
const indexes = (db: DatabaseSync): string[] =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'users' ORDER BY name").all() as { name: string }[]).map((r) => r.name)

test('a list in any order is applied by version, to the highest version', () => {
  const reversed = [...MIGRATIONS].reverse()
  const db = new DatabaseSync(':memory:')
  assert.deepEqual(migrate(db, reversed), { from: 0, to: SCHEMA_VERSION })
  assert.equal(userVersion(db), SCHEMA_VERSION)
  assert.equal(SCHEMA_VERSION, Math.max(...MIGRATIONS.map((m) => m.version)))
  const fresh = new DatabaseSync(':memory:')
  migrate(fresh)
  const schema = (d: DatabaseSync): unknown => d.prepare("SELECT type, name, sql FROM sqlite_master ORDER BY name").all().map((r) => ({ ...r }))
  assert.deepEqual(schema(db), schema(fresh))
  db.close()
  fresh.close()
})

test('two migrations of one version are refused before anything runs', () => {
  const db = new DatabaseSync(':memory:')
  const twice = [...MIGRATIONS, { version: 13, name: 'another 13', sql: 'CREATE TABLE t (x)' }]
  assert.throws(() => migrate(db, twice), /two migrations have version 13/)
  assert.equal(userVersion(db), 0)
  assert.deepEqual(inVersionOrder([{ version: 3 }, { version: 1 }, { version: 2 }]).map((m) => m.version), [1, 2, 3])
  db.close()
})

test('migration 13: the search indexes on a database with users, who stay as they were', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.filter((m) => m.version < 13))
  db.exec(`INSERT INTO users (id, email, external_id, created_at, updated_at) VALUES
    (1, 'Ann@Example.com', 'CUS-1', 'x', 'x'), (2, NULL, 'cus-2', 'x', 'x'), (3, 'no-at-sign', NULL, 'x', 'x')`)
  const before = db.prepare('SELECT * FROM users ORDER BY id').all()
  migrate(db)
  assert.deepEqual(db.prepare('SELECT * FROM users ORDER BY id').all(), before)
  assert.ok(indexes(db).includes('users_external_id_lower'))
  assert.ok(indexes(db).includes('users_email_domain'))
  db.close()
})
