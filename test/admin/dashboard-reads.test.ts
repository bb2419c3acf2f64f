/**
 * The admin reads the staff dashboard adds (issue 19, docs/console.md): the token a request is
 * made with (`GET /admin_tokens/current`), and one subscription's events as a keyset-paged
 * timeline (`GET /subscriptions/:id/events`).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'

const A = '/admin/api/v1'

const get = (server: TestServer, path: string, key = ADMIN_TOKEN) => server.request('GET', `${A}${path}`, { key })

async function makeToken(server: TestServer, scope: string, label: string | null): Promise<{ id: number; token: string; prefix: string }> {
  const res = await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN, json: { admin_token: { scope, label } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

test('GET /admin_tokens/current: the scope, label and prefix of the token used, never the token', async (t) => {
  const server = await startTestServer(t)
  assert.deepEqual((await get(server, '/admin_tokens/current')).body, { id: null, scope: 'admin', label: null, prefix: null })
  const reader = await makeToken(server, 'read', 'Support desk')
  const res = await get(server, '/admin_tokens/current', reader.token)
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { id: reader.id, scope: 'read', label: 'Support desk', prefix: reader.prefix })
  assert.ok(!res.text.includes(reader.token))
  const writer = await makeToken(server, 'admin', null)
  assert.deepEqual((await get(server, '/admin_tokens/current', writer.token)).body, { id: writer.id, scope: 'admin', label: null, prefix: writer.prefix })
})

test('GET /admin_tokens/current: a metrics token is 403, an unknown or revoked one 401', async (t) => {
  const server = await startTestServer(t)
  const metrics = await makeToken(server, 'metrics', 'Prometheus')
  const m = await get(server, '/admin_tokens/current', metrics.token)
  assert.deepEqual([m.status, m.body], [403, { error: "This token's scope does not allow this request." }])
  const reader = await makeToken(server, 'read', null)
  assert.equal((await server.request('DELETE', `${A}/admin_tokens/${reader.id}`, { key: ADMIN_TOKEN })).status, 200)
  for (const key of [reader.token, 'not-a-token']) {
    const r = await get(server, '/admin_tokens/current', key)
    assert.deepEqual([r.status, r.body], [401, { error: 'Invalid admin token.' }])
  }
  const none = await server.request('GET', `${A}/admin_tokens/current`)
  assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an admin token.' }])
})

test("GET /subscriptions/:id/events: newest first, in keyset pages; only that subscription's", async (t) => {
  const server = await startTestServer(t)
  const alice = await seedUser(server.store)
  const sub = await createSubscription(server, alice.key)
  const other = await createSubscription(server, alice.key)
  for (const action of ['skip', 'pause', 'resume', 'skip']) {
    assert.equal((await server.request('POST', `${A}/subscriptions/${sub.id}/${action}`, { key: ADMIN_TOKEN })).status, 200)
    assert.equal((await server.request('POST', `${A}/subscriptions/${other.id}/skip`, { key: ADMIN_TOKEN })).status, 200)
  }
  const all = (await get(server, `/subscriptions/${sub.id}/events`)).body
  assert.deepEqual(all.events.map((e: any) => e.type), [
    'subscription.skipped', 'subscription.resumed', 'subscription.paused', 'subscription.skipped', 'subscription.created',
  ])
  assert.equal(all.next_after, null)
  assert.ok(all.events.every((e: any) => e.subscription_id === sub.id))
  // The same events as the customer's history (C10), whole.
  const customers = (await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: alice.key })).body.events
  assert.deepEqual(all.events, customers)

  const ids = all.events.map((e: any) => e.id)
  const page1 = (await get(server, `/subscriptions/${sub.id}/events?limit=2`)).body
  assert.deepEqual([page1.events.map((e: any) => e.id), page1.next_after], [ids.slice(0, 2), ids[1]])
  const page2 = (await get(server, `/subscriptions/${sub.id}/events?limit=2&after=${page1.next_after}`)).body
  assert.deepEqual([page2.events.map((e: any) => e.id), page2.next_after], [ids.slice(2, 4), ids[3]])
  // An event written meanwhile goes on top and shifts nothing.
  assert.equal((await server.request('POST', `${A}/subscriptions/${sub.id}/cancel`, { key: ADMIN_TOKEN })).status, 200)
  const page3 = (await get(server, `/subscriptions/${sub.id}/events?limit=2&after=${page2.next_after}`)).body
  assert.deepEqual(page3, { events: [all.events[4]], next_after: null })
  // `after` naming another subscription's event finds nothing here.
  const otherFirst = (await get(server, `/subscriptions/${other.id}/events`)).body.events[0].id
  assert.deepEqual((await get(server, `/subscriptions/${sub.id}/events?after=${otherFirst}`)).body, { events: [], next_after: null })
})

test('GET /subscriptions/:id/events: 404 before the query is read, strict query after', async (t) => {
  const server = await startTestServer(t)
  const alice = await seedUser(server.store)
  const sub = await createSubscription(server, alice.key)
  for (const id of ['999', 'abc', '0']) {
    const r = await get(server, `/subscriptions/${id}/events?limit=0`)
    assert.deepEqual([r.status, r.body], [404, { error: 'The resource you were looking for could not be found.' }])
  }
  const bad = await get(server, `/subscriptions/${sub.id}/events?limit=0&after=x`)
  assert.deepEqual([bad.status, bad.body], [422, { after: ['is not a number'], limit: ['must be between 1 and 100'] }])
})
