import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { webhooksStore } from '../../src/store/sqlite/webhooks-store.ts'

// Migration 5 (issue 17) adds webhook_endpoints to a database made by the previous release:
// what was there stays, the new table takes endpoints, and its columns keep their types (STRICT).

const NOW = '2026-05-01T00:00:00.000Z'

function version4WithAUser(): DatabaseSync {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.filter((m) => m.version <= 4))
  db.exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'kept@example.com', '${NOW}', '${NOW}')`)
  return db
}

const userVersion = (db: DatabaseSync): number => (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version

// Issue 18 added migration 6 (admin token scopes): this test stops at 5, the release it describes.
const UP_TO_5 = MIGRATIONS.filter((m) => m.version <= 5)

test('migration 5 is one step after 4, and adds webhook_endpoints to a version 4 database', () => {
  assert.ok(SCHEMA_VERSION >= 5)
  const db = version4WithAUser()
  assert.equal(userVersion(db), 4)
  assert.deepEqual(migrate(db, UP_TO_5), { from: 4, to: 5 })
  assert.equal(userVersion(db), 5)
  assert.equal(db.prepare('SELECT email FROM users WHERE id = 1').get()?.['email'], 'kept@example.com')

  // STRICT: a value of the wrong type is refused, not stored as something else.
  assert.throws(() => db.exec(`INSERT INTO webhook_endpoints (url, events, secret, created_at, updated_at) VALUES (X'00', '[]', 's', '${NOW}', '${NOW}')`), /cannot store BLOB value in TEXT column/)
  // Forward only and idempotent: a second run changes nothing.
  assert.deepEqual(migrate(db, UP_TO_5), { from: 5, to: 5 })

  // Today's store on the table migration 5 made, once the later migrations ran (12 added `disabled`).
  migrate(db)
  const store = webhooksStore(db)
  const made = store.createEndpoint({ url: 'http://127.0.0.1/hook', events: ['*'], description: null, secret: 'whsec_x' })
  assert.deepEqual(store.findEndpoint(made.id), made)
  assert.deepEqual(store.secretsOf(made.id), { secret: 'whsec_x', previous_secret: null, previous_secret_expires_at: null })
  db.close()
})
