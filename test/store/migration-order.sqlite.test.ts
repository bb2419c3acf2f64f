/**
 * Migrations written side by side land in any order (issue 28): the SQLite runner applies every
 * version a database lacks, not only those above its highest. And migration 14 (C18) gives the
 * events of before it no actor: they answer `actor: null`, `request_id: null`.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate, type Migration } from '../../src/store/sqlite/migrations.ts'
import { eventsStore } from '../../src/store/sqlite/events-store.ts'
import { SYSTEM_UNIT } from '../../src/store/api.ts'

const versions = (db: DatabaseSync): number[] => (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((r) => r.version)
const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
const tableExists = (db: DatabaseSync, name: string): boolean => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined

test('a version that arrives after a higher one is applied all the same, once', () => {
  const db = new DatabaseSync(':memory:')
  assert.deepEqual(migrate(db), { from: 0, to: SCHEMA_VERSION })
  // A release whose list gained a migration numbered below the highest this database has.
  const late: Migration = { version: SCHEMA_VERSION - 2, name: 'written beside the highest', sql: 'CREATE TABLE late_arrival (id INTEGER PRIMARY KEY) STRICT;' }
  assert.ok(!MIGRATIONS.some((m) => m.version === late.version), 'a version the list does not have yet')
  const later = [...MIGRATIONS, late]
  assert.deepEqual(migrate(db, later), { from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  assert.ok(tableExists(db, 'late_arrival'))
  assert.deepEqual(versions(db), [...MIGRATIONS.map((m) => m.version), late.version].sort((a, b) => a - b))
  assert.equal(userVersion(db), SCHEMA_VERSION)
  // Applied once: running the same list again changes nothing (its CREATE TABLE would fail).
  assert.deepEqual(migrate(db, later), { from: SCHEMA_VERSION, to: SCHEMA_VERSION })
  db.close()
})

test('a database migrated before schema_migrations existed keeps what it has and gets only the rest; its events answer actor null', () => {
  const db = new DatabaseSync(':memory:')
  // As the runner before this one left it: migrations 1–9 applied in order, user_version 9, no table of versions.
  for (const m of MIGRATIONS.filter((m) => m.version <= 9)) db.exec(m.sql)
  db.exec('PRAGMA user_version = 9')
  db.exec(`INSERT INTO events (type, subscription_id, data, created_at, prev_id) VALUES ('subscription.updated', NULL, '{"object":{}}', '2026-01-01T00:00:00.000Z', NULL)`)
  assert.deepEqual(migrate(db), { from: 9, to: SCHEMA_VERSION })
  assert.deepEqual(versions(db), MIGRATIONS.map((m) => m.version))
  assert.deepEqual((db.prepare("SELECT version FROM schema_migrations WHERE applied_at = 'before schema_migrations' ORDER BY version").all() as { version: number }[]).map((r) => r.version),
    [1, 2, 3, 4, 5, 6, 7, 8, 9])
  const [old] = eventsStore(db, () => SYSTEM_UNIT).feed(0, 10, undefined)
  assert.deepEqual([old?.actor, old?.request_id], [null, null])
  db.close()
})
