import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'

// Migration 12 (issue 28, C18) on a database of the release before (version 9): the endpoints
// there are enabled, the outbox trigger skips disabled endpoints and webhook.test events, and
// the runner goes from 9 to 12 (10 and 11 are other work of the same round).

const NOW = '2026-05-01T00:00:00.000Z'
const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
const deliveriesOf = (db: DatabaseSync, eventId: number | bigint): unknown[] =>
  db.prepare('SELECT endpoint_id FROM webhook_deliveries WHERE event_id = ? ORDER BY endpoint_id').all(eventId).map((r) => r['endpoint_id'])
const insertEvent = (db: DatabaseSync, type: string): number | bigint =>
  db.prepare(`INSERT INTO events (type, subscription_id, data, created_at) VALUES (?, NULL, '{"object":{}}', ?)`).run(type, NOW).lastInsertRowid

test('migration 12 keeps existing endpoints enabled; afterwards the outbox skips disabled endpoints and webhook.test events', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.filter((m) => m.version <= 9))
  db.exec(`INSERT INTO webhook_endpoints (id, url, events, secret, created_at, updated_at) VALUES
    (1, 'http://127.0.0.1/a', '["*"]', 'whsec_a', '${NOW}', '${NOW}'), (2, 'http://127.0.0.1/b', '["subscription.created"]', 'whsec_b', '${NOW}', '${NOW}')`)
  const before = insertEvent(db, 'subscription.created')
  assert.deepEqual(deliveriesOf(db, before), [1, 2])

  const { from, to } = migrate(db)
  assert.deepEqual([from, to, userVersion(db)], [9, SCHEMA_VERSION, SCHEMA_VERSION])
  assert.ok(SCHEMA_VERSION >= 12)
  assert.deepEqual(db.prepare('SELECT id, disabled FROM webhook_endpoints ORDER BY id').all().map((r) => [r['id'], r['disabled']]), [[1, 0], [2, 0]])
  assert.deepEqual(deliveriesOf(db, insertEvent(db, 'subscription.created')), [1, 2], 'enabled endpoints still get their deliveries')

  db.exec('UPDATE webhook_endpoints SET disabled = 1 WHERE id = 2')
  assert.deepEqual(deliveriesOf(db, insertEvent(db, 'subscription.created')), [1], 'none for the disabled one')
  assert.deepEqual(deliveriesOf(db, insertEvent(db, 'webhook.test')), [], 'a test event is never fanned out, even to *')
  assert.throws(() => db.exec('UPDATE webhook_endpoints SET disabled = 2 WHERE id = 1'), /CHECK constraint failed/)
})
