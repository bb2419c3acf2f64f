import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'

// SQLite's migration 4 (test/processing/due-floor.test.ts has the rules of the floor on every
// backend): a SQLite file made before it gets its floors and its index keyed by them.

test('migration 4 starts every floor at its date and keys the processor index by the floor', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.slice(0, 3))
  const now = '2026-01-01T00:00:00.000Z'
  db.exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'floor@example.com', '${now}', '${now}');
    INSERT INTO subscriptions (id, user_id, state, interval_length, interval_units, actionable_date, currency, created_on, created_at, updated_at)
    VALUES (1, 1, 'active', 1, 'week', '2026-02-01', 'USD', '2026-01-01', '${now}', '${now}'),
           (2, 1, 'canceled', 1, 'week', NULL, 'USD', '2026-01-01', '${now}', '${now}')`)
  assert.deepEqual(migrate(db), { from: 3, to: SCHEMA_VERSION })
  assert.deepEqual(db.prepare('SELECT id, due_floor FROM subscriptions ORDER BY id').all().map((r) => [r['id'], r['due_floor']]), [[1, '2026-02-01'], [2, null]])
  assert.deepEqual(db.prepare("SELECT name FROM pragma_index_info('subscriptions_due')").all().map((r) => r['name']), ['due_floor'])
})
