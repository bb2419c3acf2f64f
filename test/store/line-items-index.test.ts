import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { subscriptionsStore } from '../../src/store/sqlite/subscriptions-store.ts'
import { BodyCache } from '../../src/store/sqlite/body-cache.ts'

// Migration 3 drops the index of line items by catalog item (issue 6: a random page per new
// line item). Nothing may depend on it: the catalog item's line items are still found, every
// one and in id order, and the foreign key still refuses a line item of a missing item.

const NOW = '2026-05-01T00:00:00.000Z'

function version2WithLineItems(): DatabaseSync {
  const db = new DatabaseSync(':memory:')
  db.exec('PRAGMA foreign_keys = ON')
  migrate(db, MIGRATIONS.slice(0, 2))
  db.exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'index@example.com', '${NOW}', '${NOW}');
    INSERT INTO subscribables (id, sku, name, created_at, updated_at) VALUES (1, 'A', 'A', '${NOW}', '${NOW}'), (2, 'B', 'B', '${NOW}', '${NOW}')`)
  const sub = db.prepare(`INSERT INTO subscriptions (id, user_id, state, interval_length, interval_units, actionable_date, anchor_day,
      currency, created_on, created_at, updated_at) VALUES (?, 1, 'active', 1, 'month', '2026-05-01', 1, 'USD', '2026-04-01', ?, ?)`)
  const item = db.prepare('INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (?, ?, 1, ?, ?)')
  for (let id = 1; id <= 4; id++) {
    sub.run(id, NOW, NOW)
    item.run(id, (id % 2) + 1, NOW, NOW)
    item.run(id, 1, NOW, NOW)
  }
  return db
}

const indexExists = (db: DatabaseSync): boolean =>
  db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE type = 'index' AND name = 'line_items_subscribable'").get()?.['n'] === 1

test('migration 3 drops line_items_subscribable; a catalog item still finds all its line items, in id order', () => {
  const db = version2WithLineItems()
  assert.equal(indexExists(db), true)
  assert.deepEqual(migrate(db), { from: 2, to: SCHEMA_VERSION })
  assert.equal(indexExists(db), false)

  const store = subscriptionsStore(db, new BodyCache(db, 0))
  const ids = (subscribable: number): number[] => store.lineItemsOfSubscribable(subscribable).map((li) => li.id)
  const scanned = (subscribable: number): number[] =>
    db.prepare('SELECT id FROM line_items WHERE subscribable_id = ? ORDER BY id').all(subscribable).map((r) => r['id'] as number)
  assert.deepEqual(ids(1), scanned(1))
  assert.deepEqual(ids(1), [2, 3, 4, 6, 7, 8])
  assert.deepEqual(ids(2), [1, 5])

  // The foreign key to the catalog holds without the index.
  assert.throws(() => store.addLineItem(1, 99, 1, false), /FOREIGN KEY constraint failed/)
  assert.throws(() => db.exec('DELETE FROM subscribables WHERE id = 2'), /FOREIGN KEY constraint failed/)
})
