/**
 * Event retention (issue 17, C13): events older than REPLENISH_EVENT_RETENTION_DAYS go, with their
 * deliveries, except any event with a delivery still pending; a subscription's own events list
 * and its count follow; 0 keeps everything.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { countRows, testSql } from '../helpers/rows.ts'
import { eventRetention } from '../../src/processing/event-retention.ts'

const DAY_MS = 24 * 60 * 60 * 1000

/** Ages the events with these ids by `days` (and their deliveries, made with them). */
async function age(server: TestServer, ids: readonly number[], days: number): Promise<void> {
  const sql = testSql(server.store)
  for (const id of ids) {
    const at = (await sql.get('SELECT created_at FROM events WHERE id = ?', id))?.['created_at'] as string
    const old = new Date(Date.parse(at) - days * DAY_MS)
    await sql.run('UPDATE events SET created_at = ? WHERE id = ?', old.toISOString(), id)
    await sql.run('UPDATE webhook_deliveries SET created_ms = ? WHERE event_id = ?', old.getTime(), id)
  }
}

/** The ids of a table's rows, in id order. */
const idsOf = async (server: TestServer, table: string): Promise<unknown[]> =>
  (await testSql(server.store).all(`SELECT id FROM ${table} ORDER BY id`)).map((r) => r['id'])

/** Every delivery so far reached its endpoint (none is pending). */
const allDelivered = (server: TestServer): Promise<number> => testSql(server.store).run("UPDATE webhook_deliveries SET state = 'delivered'")

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
  await age(server, all.map((e) => e.id), 500) // every event is 500 days old

  const retention = eventRetention({ store: server.store, days: 400, log: () => {}, batch: 2 })
  // Everything before the pending delivery's event goes; it and everything after it stay.
  assert.equal(await retention.runOnce(Date.now()), all.filter((e) => e.id < skipped).length)
  const left = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id)
  assert.deepEqual(left, all.filter((e) => e.id >= skipped).map((e) => e.id))
  const own = await eventsOf(server, user.key, sub.id)
  assert.equal(own.total_count, left.length)
  assert.deepEqual(own.events.map((e: any) => e.id), [...left].reverse())

  // Once delivered, that event goes too, and its delivery with it; new events are untouched.
  await allDelivered(server)
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })
  assert.equal(await countRows(server.store, 'webhook_deliveries'), 2)
  assert.equal(await retention.runOnce(Date.now()), left.length)
  assert.equal(await countRows(server.store, 'webhook_deliveries'), 1)
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
  await allDelivered(server)
  await age(server, [1, 2, 3], 10)
  assert.equal(await eventRetention({ store: server.store, days: 5, log: () => {} }).runOnce(Date.now()), 2)
  assert.deepEqual(await idsOf(server, 'events'), [3])
  assert.deepEqual(await idsOf(server, 'webhook_deliveries'), [3])
  await createSubscription(server, user.key)
  const feed = (await server.request('GET', '/admin/api/v1/events', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id)
  assert.deepEqual(feed, [3, 4])
  assert.deepEqual(await idsOf(server, 'webhook_deliveries'), [3, 4])
})

test('0 keeps every event; a pass with nothing old enough deletes nothing', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  await createSubscription(server, user.key)
  await createSubscription(server, user.key)
  await age(server, [1], 10)
  assert.equal(await eventRetention({ store: server.store, days: 0, log: () => {} }).runOnce(Date.now()), 0)
  assert.equal(await eventRetention({ store: server.store, days: 30, log: () => {} }).runOnce(Date.now()), 0)
  assert.equal(await countRows(server.store, 'events'), 3)
  assert.equal(await eventRetention({ store: server.store, days: 5, log: () => {} }).runOnce(Date.now()), 1)
  assert.equal(await countRows(server.store, 'events'), 2)
})

test('C17: an event whose mail is pending stays (the mail is rendered from it when sent); settled mails older than the retention go', async (t) => {
  const server = await startTestServer(t, { REPLENISH_SMTP_URL: 'smtp://127.0.0.1:9', REPLENISH_MAIL_FROM: 'shop@example.com', REPLENISH_PUBLIC_URL: 'https://shop.example' })
  const user = await seedUser(server.store)
  const first = await createSubscription(server, user.key)
  const second = await createSubscription(server, user.key)
  for (const sub of [first, second]) await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: user.key })
  await createSubscription(server, user.key) // a later event: the pending mail's is not the newest
  const all = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events as { id: number; type: string }[]
  const mails = (await server.request('GET', '/admin/api/v1/emails', { key: ADMIN_TOKEN })).body.emails as { id: number; event_id: number }[]
  assert.deepEqual(mails.map((m) => m.event_id), all.filter((e) => e.type === 'subscription.canceled').map((e) => e.id))
  // Mails are made at their event's time: aged with them.
  const before = await testSql(server.store).all('SELECT id, created_ms FROM emails ORDER BY id')
  await age(server, all.map((e) => e.id), 500)
  for (const m of before) await testSql(server.store).run('UPDATE emails SET created_ms = ? WHERE id = ?', Number(m['created_ms']) - 500 * DAY_MS, m['id'])
  // The first mail was sent; the second still waits.
  await testSql(server.store).run("UPDATE emails SET state = 'sent', due_ms = NULL WHERE id = ?", mails[0]!.id)

  await eventRetention({ store: server.store, days: 400, log: () => {}, batch: 2 }).runOnce(Date.now())
  const left = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id)
  assert.deepEqual(left, all.filter((e) => e.id >= mails[1]!.event_id).map((e) => e.id), 'from the pending mail\'s event on, events stay')
  assert.deepEqual(await idsOf(server, 'emails'), [mails[1]!.id], 'the sent one went; the pending one stays')
  // Settled, the last one stays still: the newest row always does (its id is never handed out again).
  await testSql(server.store).run("UPDATE emails SET state = 'failed', due_ms = NULL")
  await eventRetention({ store: server.store, days: 400, log: () => {}, batch: 2 }).runOnce(Date.now())
  assert.deepEqual(await idsOf(server, 'emails'), [mails[1]!.id])
  assert.deepEqual((await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events.map((e: any) => e.id), [all.at(-1)!.id])
})
