/**
 * Migrations written side by side land in any order (issue 28): the SQLite runner applies every
 * version a database lacks, not only those above its highest. And migration 14 (C18) gives the
 * events of before it no actor: they answer `actor: null`, `request_id: null`. The runner applies
 * a list in any order by version and refuses two of one version; migration 13 (the user search's
 * indexes) keeps every user.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, inVersionOrder, migrate } from '../../src/store/sqlite/migrations.ts'
import { eventsStore } from '../../src/store/sqlite/events-store.ts'
import { SYSTEM_UNIT } from '../../src/store/api.ts'

const versions = (db: DatabaseSync): number[] => (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version)
const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
const indexNames = (db: DatabaseSync): string[] =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'users' ORDER BY name").all() as { name: string }[]).map((r) => r.name)

test('a version that arrives after a higher one is applied all the same, once', () => {
  const db = new DatabaseSync(':memory:')
  // A database migrated by a release that did not have migration 13 yet (it landed after 14).
  const withheld = MIGRATIONS.find((m) => m.version === 13)
  assert.ok(withheld !== undefined && SCHEMA_VERSION > 13)
  assert.deepEqual(migrate(db, MIGRATIONS.filter((m) => m !== withheld)), { from: 0, to: SCHEMA_VERSION })
  assert.ok(!versions(db).includes(13))
  assert.deepEqual(migrate(db), { from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  assert.ok(indexNames(db).includes('users_email_domain'), 'migration 13 ran')
  assert.deepEqual(versions(db), MIGRATIONS.map((m) => m.version).sort((a, b) => a - b))
  assert.equal(userVersion(db), SCHEMA_VERSION)
  // Applied once: running the same list again changes nothing (its CREATE INDEX would fail).
  assert.deepEqual(migrate(db), { from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  db.close()
})

test('a database migrated before schema_migrations existed keeps what it has and gets only the rest; its events answer actor null', () => {
  const db = new DatabaseSync(':memory:')
  // As the runner before this one left it: migrations 1–9 applied in order, user_version 9, no table of versions.
  for (const m of MIGRATIONS.filter((m) => m.version <= 9)) db.exec(m.sql)
  db.exec('PRAGMA user_version = 9')
  db.exec(`INSERT INTO events (type, subscription_id, data, created_at, prev_id) VALUES ('subscription.updated', NULL, '{"object":{}}', '2026-01-01T00:00:00.000Z', NULL)`)
  assert.deepEqual(migrate(db), { from: 9, to: SCHEMA_VERSION })
  assert.deepEqual(versions(db), MIGRATIONS.map((m) => m.version).sort((a, b) => a - b))
  assert.deepEqual((db.prepare("SELECT version FROM schema_migrations WHERE applied_at = 'before schema_migrations' ORDER BY version").all() as { version: number }[]).map((r) => r.version),
    [1, 2, 3, 4, 5, 6, 7, 8, 9])
  const [old] = eventsStore(db, () => SYSTEM_UNIT).feed(0, 10, undefined)
  assert.deepEqual([old?.actor, old?.request_id], [null, null])
  db.close()
})

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
  assert.ok(indexNames(db).includes('users_external_id_lower'))
  assert.ok(indexNames(db).includes('users_email_domain'))
  db.close()
})
