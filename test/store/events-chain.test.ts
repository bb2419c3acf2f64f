import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, SCHEMA_VERSION, migrate } from '../../src/store/sqlite/migrations.ts'
import { openSqliteStore, type SqliteStore } from '../../src/store/sqlite/store.ts'
import { eventsStore } from '../../src/store/sqlite/events-store.ts'

// A subscription's events are a chain kept by the database (migration 2), not an index: the
// customer's events list (C10) must still be exactly "its events, newest first", whatever wrote them.

const NOW = '2026-05-01T00:00:00.000Z'

function seedSubscriptions(db: DatabaseSync, n: number): void {
  db.exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'chain@example.com', '${NOW}', '${NOW}')`)
  const insert = db.prepare(`INSERT INTO subscriptions (id, user_id, state, interval_length, interval_units, actionable_date, anchor_day,
      currency, created_on, created_at, updated_at) VALUES (?, 1, 'active', 1, 'month', '2026-05-01', 1, 'USD', '2026-04-01', ?, ?)`)
  for (let id = 1; id <= n; id++) insert.run(id, NOW, NOW)
  db.exec(`INSERT INTO subscribables (id, sku, name, created_at, updated_at) VALUES (1, 'CHAIN-1', 'Chain item', '${NOW}', '${NOW}');
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at) SELECT id, 1, 1, '${NOW}', '${NOW}' FROM subscriptions`)
}

/** What the list must answer, by a full scan: no chain, no index. */
function scanned(db: DatabaseSync, subscriptionId: number, offset: number, limit: number): number[] {
  return db.prepare('SELECT id FROM events NOT INDEXED WHERE subscription_id = ? ORDER BY id DESC LIMIT ? OFFSET ?')
    .all(subscriptionId, limit, offset).map((r) => r['id'] as number)
}

async function assertListsMatchScan(store: SqliteStore, subscriptions: number): Promise<void> {
  for (let id = 1; id <= subscriptions + 1; id++) {
    const all = scanned(store.db, id, 0, 1_000)
    assert.equal(await store.events.countOfSubscription(id), all.length, `count of subscription ${id}`)
    for (const [offset, limit] of [[0, 1_000], [0, 2], [1, 2], [2, 3], [all.length - 1, 5], [all.length, 5]] as const) {
      assert.deepEqual((await store.events.ofSubscription(id, Math.max(0, offset), limit)).map((e) => e.id), scanned(store.db, id, Math.max(0, offset), limit),
        `subscription ${id}, offset ${offset}, limit ${limit}`)
    }
  }
}

test('the events list of every subscription is its events newest first, paged, after writes of every kind', async () => {
  const store = openSqliteStore(':memory:', { synchronous: 'FULL', createDirectory: false })
  seedSubscriptions(store.db, 3)
  // Interleaved across subscriptions, one by one and several in a unit, plus events of no subscription.
  for (let i = 0; i < 12; i++) {
    await store.write(async (tx) => {
      await tx.events.record('subscription.updated', (i % 3) + 1, { i })
      if (i % 4 === 0) await tx.events.recordJson('line_item.updated', 2, `{"i":${i}}`)
      if (i % 5 === 0) await tx.events.record('payment_source.deleted', null, { i })
    })
  }
  // The processor's own statement: one installment.created per subscription of the batch.
  await store.write((tx) => tx.installments.processMany([1, 2, 3].map((id) => ({
    subscription_id: id, due_date: '2026-05-01', actionable_date: '2026-06-01', state: 'active' as const,
  })), NOW))
  await assertListsMatchScan(store, 3)
  assert.equal(await store.events.countOfSubscription(2), 8)
  assert.deepEqual((await store.events.ofSubscription(3, 0, 1)).map((e) => e.type), ['installment.created'])
  await store.close()
})

test('a unit rolled back takes its events out of the chain, and the next event links to the one before', async () => {
  const store = openSqliteStore(':memory:', { synchronous: 'FULL', createDirectory: false })
  seedSubscriptions(store.db, 1)
  await store.write((tx) => tx.events.record('subscription.created', 1, {}))
  await assert.rejects(store.write(async (tx) => {
    await tx.events.record('subscription.updated', 1, {})
    throw new Error('refused')
  }), /refused/)
  await store.write((tx) => tx.events.record('subscription.skipped', 1, {}))
  assert.deepEqual((await store.events.ofSubscription(1, 0, 10)).map((e) => e.type), ['subscription.skipped', 'subscription.created'])
  assert.equal(await store.events.countOfSubscription(1), 2)
  await assertListsMatchScan(store, 1)
  await store.close()
})

test('an event whose link is not its subscription\'s latest event is refused, so the chain cannot break unnoticed', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db)
  seedSubscriptions(db, 1)
  const insert = db.prepare("INSERT INTO events (type, subscription_id, data, created_at, prev_id) VALUES ('t', 1, '{}', ?, ?)")
  const first = Number(insert.run(NOW, null).lastInsertRowid)
  assert.throws(() => insert.run(NOW, null), /events\.prev_id must be the id of the subscription's latest event/)
  // Two events of one subscription in one INSERT … SELECT read the same stale link: refused too.
  assert.throws(() => db.exec(`INSERT INTO events (type, subscription_id, data, created_at, prev_id)
    SELECT 't', 1, '{}', '${NOW}', (SELECT last_event_id FROM subscriptions WHERE id = 1) FROM (SELECT 1 UNION ALL SELECT 2)`), /prev_id/)
  insert.run(NOW, first)
  assert.deepEqual({ ...db.prepare('SELECT last_event_id, event_count FROM subscriptions WHERE id = 1').get() }, { last_event_id: first + 1, event_count: 2 })
})

test('migration 2 links the events a version-1 database already holds, and drops the index', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.slice(0, 1))
  seedSubscriptions(db, 3)
  const insert = db.prepare("INSERT INTO events (type, subscription_id, data, created_at) VALUES ('t', ?, '{}', ?)")
  for (const id of [1, 2, 1, null, 3, 1, 2, 2]) insert.run(id, NOW)
  assert.deepEqual(migrate(db), { from: 1, to: SCHEMA_VERSION })
  const links = db.prepare('SELECT id, prev_id FROM events ORDER BY id').all().map((r) => [r['id'], r['prev_id']])
  assert.deepEqual(links, [[1, null], [2, null], [3, 1], [4, null], [5, null], [6, 3], [7, 2], [8, 7]])
  assert.deepEqual(db.prepare('SELECT id, last_event_id, event_count FROM subscriptions ORDER BY id').all().map((r) => [r['id'], r['last_event_id'], r['event_count']]),
    [[1, 6, 3], [2, 8, 3], [3, 5, 1]])
  assert.equal(db.prepare("SELECT count(*) AS n FROM sqlite_schema WHERE name = 'events_subscription'").get()?.['n'], 0)
  // And the chain goes on from there.
  const events = eventsStore(db)
  events.record('subscription.skipped', 1, {})
  assert.deepEqual(events.ofSubscription(1, 0, 10).map((e) => e.id), [9, 6, 3, 1])
  assert.equal(events.countOfSubscription(1), 4)
})

test('an event recorded from JSON text is stored and read back exactly as one recorded from the object', async () => {
  const store = openSqliteStore(':memory:', { synchronous: 'FULL', createDirectory: false })
  seedSubscriptions(store.db, 1)
  const object = { id: 1, note: 'quotes " and \\ and ünïcödé', items: [{ quantity: 2 }], none: null }
  await store.write(async (tx) => {
    await tx.events.record('subscription.updated', 1, object)
    await tx.events.recordJson('subscription.updated', 1, JSON.stringify(object))
  })
  const stored = store.db.prepare('SELECT data FROM events ORDER BY id').all().map((r) => r['data'])
  assert.equal(stored.length, 2)
  assert.equal(stored[1], stored[0])
  assert.equal(stored[0], JSON.stringify({ object }))
  const [newest, oldest] = await store.events.ofSubscription(1, 0, 2)
  assert.deepEqual(newest?.data, { object })
  assert.deepEqual(oldest?.data, { object })
  assert.deepEqual((await store.events.feed(0, 10, 'subscription.updated')).map((e) => e.data), [{ object }, { object }])
  await store.close()
})
