import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { accountsStore } from '../../src/store/sqlite/accounts-store.ts'

// Migration 6 (issue 18, C13) gives admin tokens a scope, a label, last use and revocation. A
// token made before it was a full admin token and must stay one: scope 'admin', still valid.

const NOW = '2026-05-01T00:00:00.000Z'
const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version

test('migration 6 follows 5; a token made before it is an admin token that still works', () => {
  const upTo6 = MIGRATIONS.filter((m) => m.version <= 6)
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.filter((m) => m.version <= 5))
  db.exec(`INSERT INTO admin_tokens (id, token_hash, prefix, created_at) VALUES (1, 'h1', 'rpladm_abc', '${NOW}')`)
  assert.deepEqual(migrate(db, upTo6), { from: 5, to: 6 })
  assert.equal(userVersion(db), 6)
  assert.deepEqual(migrate(db, upTo6), { from: 6, to: 6 })
  // This binary's store prepares its statements for the latest schema (migration 8 adds to api_keys).
  assert.deepEqual(migrate(db), { from: 6, to: SCHEMA_VERSION })

  const store = accountsStore(db)
  assert.deepEqual(store.adminTokenByHash('h1'), { id: 1, label: null, scope: 'admin', prefix: 'rpladm_abc', created_at: NOW, updated_at: NOW, last_used_at: null })
  // Only the three scopes can be stored, whatever the code above the store does.
  assert.throws(() => db.exec(`INSERT INTO admin_tokens (token_hash, prefix, scope, created_at) VALUES ('h2', 'p', 'root', '${NOW}')`), /CHECK constraint failed/)
  store.revokeAdminToken(1)
  assert.equal(store.adminTokenByHash('h1'), undefined)
  assert.equal(store.adminTokenExists('h1'), false)
  db.close()
})
