import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { accountsStore } from '../../src/store/sqlite/accounts-store.ts'

// Migration 8 (issue 18, C13) rebuilds `users` so an erased user's email can be null, and gives
// API keys a last use. The rebuild must keep every row as it was, in the same column order, and
// every reference to users(id) intact and enforced.

const NOW = '2026-05-01T00:00:00.000Z'
const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
const plain = (rows: unknown[]): unknown[] => rows.map((r) => ({ ...(r as object) }))

test('migration 8 keeps users, their ids and every reference to them; email becomes nullable, and unique only when set', () => {
  const db = new DatabaseSync(':memory:')
  db.exec('PRAGMA foreign_keys = ON')
  migrate(db, MIGRATIONS.filter((m) => m.version <= 7))
  db.exec(`
    INSERT INTO users (id, email, external_id, created_at, updated_at) VALUES (3, 'Ada@Example.com', 'shop-3', '${NOW}', '${NOW}'), (9, 'bob@example.com', NULL, '${NOW}', '${NOW}');
    INSERT INTO api_keys (id, user_id, key_hash, prefix, created_at, updated_at) VALUES (1, 3, 'h1', 'rpl_abcd', '${NOW}', '${NOW}');
    INSERT INTO payment_methods (id, name, created_at, updated_at) VALUES (1, 'Card', '${NOW}', '${NOW}');
    INSERT INTO payment_sources (id, user_id, payment_method_id, created_at, updated_at) VALUES (1, 9, 1, '${NOW}', '${NOW}');
    INSERT INTO subscriptions (id, user_id, state, interval_length, interval_units, currency, created_on, created_at, updated_at)
      VALUES (5, 3, 'active', 1, 'month', 'USD', '2026-05-01', '${NOW}', '${NOW}');
  `)
  const usersBefore = plain(db.prepare('SELECT * FROM users ORDER BY id').all())

  assert.deepEqual(migrate(db, MIGRATIONS.filter((m) => m.version <= 8)), { from: 7, to: 8 })
  assert.equal(userVersion(db), 8)
  assert.deepEqual(plain(db.prepare('SELECT * FROM users ORDER BY id').all()), usersBefore)
  assert.deepEqual(plain(db.prepare('PRAGMA foreign_key_check').all()), [])
  assert.equal((db.prepare('PRAGMA defer_foreign_keys').get() as { defer_foreign_keys: number }).defer_foreign_keys, 0)
  assert.equal(db.prepare("SELECT count(*) AS n FROM sqlite_temp_master WHERE name = 'users_before_8'").get()?.['n'], 0)
  // The references still hold: no key, source or subscription of a user that does not exist.
  assert.throws(() => db.exec(`INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES (77, 'h2', 'p', '${NOW}', '${NOW}')`), /FOREIGN KEY constraint failed/)
  assert.throws(() => db.exec('DELETE FROM users WHERE id = 9'), /FOREIGN KEY constraint failed/)

  // Erased users: any number of null emails; a set email is still unique whatever its case.
  db.exec(`UPDATE users SET email = NULL WHERE id IN (3, 9)`)
  db.exec(`INSERT INTO users (email, created_at, updated_at) VALUES (NULL, '${NOW}', '${NOW}'), ('ada@example.com', '${NOW}', '${NOW}')`)
  assert.throws(() => db.exec(`INSERT INTO users (email, created_at, updated_at) VALUES ('ADA@example.com', '${NOW}', '${NOW}')`), /UNIQUE constraint failed: users.email/)

  // Keys made before it have never been used, as far as anyone knows.
  assert.deepEqual(migrate(db), { from: 8, to: SCHEMA_VERSION })
  const store = accountsStore(db)
  assert.deepEqual(store.findApiKey(1), { id: 1, user_id: 3, prefix: 'rpl_abcd', revoked_at: null, created_at: NOW, updated_at: NOW, last_used_at: null })
  assert.deepEqual(store.activeApiKeyByHash('h1'), { id: 1, user_id: 3, last_used_at: null })
  db.close()
})
