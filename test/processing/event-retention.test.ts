/**
 * Event retention (issue 17, C13): events older than REPLENISH_EVENT_RETENTION_DAYS go, with their
 * deliveries, except any event with a delivery still pending; a subscription's own events list
 * and its count follow; 0 keeps everything.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'
import { eventRetention } from '../../src/processing/event-retention.ts'

const DAY_MS = 24 * 60 * 60 * 1000
const count = (server: TestServer, table: string): number =>
  (sqliteOf(server.store).db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n

/** Ages the events with these ids by `days` (and their deliveries, made with them). */
function age(server: TestServer, ids: readonly number[], days: number): void {
  const { db } = sqliteOf(server.store)
  for (const id of ids) {
    const at = (db.prepare('SELECT created_at FROM events WHERE id = ?').get(id) as { created_at: string }).created_at
    const old = new Date(Date.parse(at) - days * DAY_MS)
    db.prepare('UPDATE events SET created_at = ? WHERE id = ?').run(old.toISOString(), id)
    db.prepare('UPDATE webhook_deliveries SET created_ms = ? WHERE event_id = ?').run(old.getTime(), id)
  }
}

async function eventsOf(server: TestServer, key: string, subscriptionId: number): Promise<any> {
  return (await server.request('GET', `/api/v1/subscriptions/${subscriptionId}/events`, { key })).body
}

test('events older than the retention go with their deliveries; newer ones, and those with a pending delivery, stay', async (t) => {
  const server = await startTestServer(t)
  const endpoint = (await server.request('POST', '/admin/api/v1/webhook_endpoints', {
    key: ADMIN_TOKEN, json: { webhook_endpoint: { url: 'http://127.0.0.1:9/x', events: ['subscription.skipped'] } },
  })).body.id
  const user = await seedUser(server.store)
  const sub = await createSubscription(server, user.key) // event 1
  for (let i = 0; i < 3; i++) await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: user.key, json: { subscription: { interval_length: i + 2 } } })
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key }) // a pending delivery
  await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: user.key, json: { subscription: { interval_length: 9 } } })
  const all = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events as { id: number; type: string }[]
  const skipped = all.find((e) => e.type === 'subscription.skipped')!.id
  age(server, all.map((e) => e.id), 500) // every event is 500 days old

  const retention = eventRetention({ store: server.store, days: 400, log: () => {}, batch: 2 })
  // Everything before the pending delivery's event goes; it and everything after it stay.
  assert.equal(await retention.runOnce(Date.now()), all.filter((e) => e.id < skipped).length)
  const left = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id)
  assert.deepEqual(left, all.filter((e) => e.id >= skipped).map((e) => e.id))
  const own = await eventsOf(server, user.key, sub.id)
  assert.equal(own.total_count, left.length)
  assert.deepEqual(own.events.map((e: any) => e.id), [...left].reverse())

  // Once delivered, that event goes too, and its delivery with it; new events are untouched.
  sqliteOf(server.store).db.prepare("UPDATE webhook_deliveries SET state = 'delivered'").run()
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })
  assert.equal(count(server, 'webhook_deliveries'), 2)
  assert.equal(await retention.runOnce(Date.now()), left.length)
  assert.equal(count(server, 'webhook_deliveries'), 1)
  const fresh = await eventsOf(server, user.key, sub.id)
  assert.deepEqual(fresh.events.map((e: any) => e.type), ['subscription.skipped'])
  assert.equal(fresh.total_count, 1)
  assert.equal(endpoint > 0, true)
})

test('the newest event and the newest delivery stay even when all are old: ids are never handed out again', async (t) => {
  const server = await startTestServer(t)
  await server.request('POST', '/admin/api/v1/webhook_endpoints', { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: 'http://127.0.0.1:9/x', events: ['*'] } } })
  const user = await seedUser(server.store)
  for (let i = 0; i < 3; i++) await createSubscription(server, user.key)
  sqliteOf(server.store).db.prepare("UPDATE webhook_deliveries SET state = 'delivered'").run()
  age(server, [1, 2, 3], 10)
  assert.equal(await eventRetention({ store: server.store, days: 5, log: () => {} }).runOnce(Date.now()), 2)
  assert.deepEqual(sqliteOf(server.store).db.prepare('SELECT id FROM events').all().map((r) => r['id']), [3])
  assert.deepEqual(sqliteOf(server.store).db.prepare('SELECT id FROM webhook_deliveries').all().map((r) => r['id']), [3])
  await createSubscription(server, user.key)
  const feed = (await server.request('GET', '/admin/api/v1/events', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id)
  assert.deepEqual(feed, [3, 4])
  assert.deepEqual(sqliteOf(server.store).db.prepare('SELECT id FROM webhook_deliveries').all().map((r) => r['id']), [3, 4])
})

test('0 keeps every event; a pass with nothing old enough deletes nothing', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  await createSubscription(server, user.key)
  await createSubscription(server, user.key)
  age(server, [1], 10)
  assert.equal(await eventRetention({ store: server.store, days: 0, log: () => {} }).runOnce(Date.now()), 0)
  assert.equal(await eventRetention({ store: server.store, days: 30, log: () => {} }).runOnce(Date.now()), 0)
  assert.equal(count(server, 'events'), 3)
  assert.equal(await eventRetention({ store: server.store, days: 5, log: () => {} }).runOnce(Date.now()), 1)
  assert.equal(count(server, 'events'), 2)
})
