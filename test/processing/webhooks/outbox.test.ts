/**
 * The outbox (issue 17, C10): a delivery row is written in the same transaction as its event,
 * for every endpoint the event concerns, whatever statement writes the event.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer } from '../../helpers/server.ts'
import { testSql } from '../../helpers/rows.ts'

const A = '/admin/api/v1'

const deliveryRows = async (server: Awaited<ReturnType<typeof startTestServer>>) =>
  (await testSql(server.store).all('SELECT endpoint_id, event_id, event_type, state FROM webhook_deliveries ORDER BY id')) as {
    endpoint_id: number; event_id: number; event_type: string; state: string
  }[]

test('each event gets one pending delivery per endpoint whose types match (or *), none for a deleted endpoint', async (t) => {
  const server = await startTestServer(t)
  const register = async (events: string[]) =>
    (await server.request('POST', `${A}/webhook_endpoints`, { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: 'http://127.0.0.1:9/x', events } } })).body.id as number
  const all = await register(['*'])
  const canceledOnly = await register(['subscription.canceled'])
  const deleted = await register(['*'])
  assert.equal((await server.request('DELETE', `${A}/webhook_endpoints/${deleted}`, { key: ADMIN_TOKEN })).status, 200)

  const user = await seedUser(server.store)
  const sub = await createSubscription(server, user.key)
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: user.key })).status, 200)

  const events = (await server.request('GET', `${A}/events`, { key: ADMIN_TOKEN })).body.events as { id: number; type: string }[]
  assert.deepEqual(events.map((e) => e.type), ['subscription.created', 'subscription.canceled'])
  assert.deepEqual(await deliveryRows(server), [
    { endpoint_id: all, event_id: events[0]!.id, event_type: 'subscription.created', state: 'pending' },
    { endpoint_id: all, event_id: events[1]!.id, event_type: 'subscription.canceled', state: 'pending' },
    { endpoint_id: canceledOnly, event_id: events[1]!.id, event_type: 'subscription.canceled', state: 'pending' },
  ])
})

test('a unit that rolls back leaves neither its event nor its delivery; the processor\'s SQL-built events get theirs', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-01' })
  await server.request('POST', `${A}/webhook_endpoints`, { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: 'http://127.0.0.1:9/x', events: ['installment.created'] } } })
  await assert.rejects(server.store.write(async (tx) => {
    await tx.events.record('subscription.updated', null, { id: 1 })
    throw new Error('rolled back')
  }), /rolled back/)
  await server.store.write(async (tx) => void (await tx.events.record('installment.created', null, { id: 1 })))
  const rows = await deliveryRows(server)
  assert.equal(rows.length, 1)
  assert.equal(rows[0]!.event_type, 'installment.created')
  const events = (await testSql(server.store).all('SELECT id, type FROM events ORDER BY id')) as { id: number; type: string }[]
  assert.deepEqual(events.map((e) => e.type), ['installment.created'])
  assert.equal(rows[0]!.event_id, events[0]!.id)
})
