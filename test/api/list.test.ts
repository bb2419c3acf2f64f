/**
 * C3 customer lists: GET /api/v1/subscriptions answers only the caller's own subscriptions as
 * `{subscriptions, count, current_page, pages, per_page, total_count}`; `page`/`per_page`
 * (default 25, capped at 100, nonsense gives the default) and the `state` filter.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer, type SeededUser, type TestServer } from '../helpers/server.ts'

let server: TestServer
let alice: SeededUser
/** Alice's 130 subscriptions, in id order; every 10th is canceled. */
let mine: any[]

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
  alice = await seedUser(server.store)
  const bob = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  await createSubscription(server, bob.key)
  // The first alone: concurrent creates take ids in any order on PostgreSQL.
  const first = await createSubscription(server, alice.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 2 }] })
  const made = [first, ...await Promise.all(Array.from({ length: 129 }, (_, i) => createSubscription(server, alice.key, { interval_length: ((i + 1) % 12) + 1 })))]
  await createSubscription(server, bob.key)
  for (const sub of made.filter((_, i) => i % 10 === 9)) {
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
    assert.equal(res.status, 200)
  }
  const shown = await Promise.all(made.map((s) => server.request('GET', `/api/v1/subscriptions/${s.id}`, { key: alice.key })))
  mine = shown.map((r) => r.body).sort((a, b) => a.id - b.id)
})
after(() => server.close())

const list = (query = '', key = alice.key) => server.request('GET', `/api/v1/subscriptions${query}`, { key })

describe('GET /api/v1/subscriptions', () => {
  test('the first page by default: 25 of the caller\'s own, whole objects in id order', async () => {
    const res = await list()
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { subscriptions: mine.slice(0, 25), count: 25, current_page: 1, pages: 6, per_page: 25, total_count: 130 })
    assert.equal(res.body.subscriptions[0].line_items.length, 1)
  })

  test('page and per_page', async () => {
    assert.deepEqual((await list('?page=2&per_page=50')).body, { subscriptions: mine.slice(50, 100), count: 50, current_page: 2, pages: 3, per_page: 50, total_count: 130 })
    assert.deepEqual((await list('?page=3&per_page=50')).body, { subscriptions: mine.slice(100), count: 30, current_page: 3, pages: 3, per_page: 50, total_count: 130 })
    assert.deepEqual((await list('?page=14&per_page=10')).body, { subscriptions: [], count: 0, current_page: 14, pages: 13, per_page: 10, total_count: 130 })
    assert.deepEqual((await list('?per_page=1')).body, { subscriptions: mine.slice(0, 1), count: 1, current_page: 1, pages: 130, per_page: 1, total_count: 130 })
  })

  test('per_page over 100 is capped to 100', async () => {
    for (const perPage of ['101', '1000', '99999999999999999999']) {
      const res = await list(`?per_page=${perPage}`)
      assert.deepEqual(res.body, { subscriptions: mine.slice(0, 100), count: 100, current_page: 1, pages: 2, per_page: 100, total_count: 130 }, perPage)
    }
  })

  test('values below 1 or not numbers give the defaults', async () => {
    const first = { subscriptions: mine.slice(0, 25), count: 25, current_page: 1, pages: 6, per_page: 25, total_count: 130 }
    for (const bad of ['0', '-1', '-100', 'abc', '', '1.5', '2e1', '0x10', '%00', '[]', '1,2']) {
      assert.deepEqual((await list(`?per_page=${bad}`)).body, first, `per_page=${bad}`)
      assert.deepEqual((await list(`?page=${bad}`)).body, first, `page=${bad}`)
    }
    assert.deepEqual((await list('?page=abc&per_page=10')).body, { subscriptions: mine.slice(0, 10), count: 10, current_page: 1, pages: 13, per_page: 10, total_count: 130 })
  })

  test('?state= filters; an unknown state lists nothing', async () => {
    const canceled = mine.filter((s) => s.state === 'canceled')
    assert.equal(canceled.length, 13)
    assert.deepEqual((await list('?state=canceled')).body, { subscriptions: canceled, count: 13, current_page: 1, pages: 1, per_page: 25, total_count: 13 })
    const active = mine.filter((s) => s.state === 'active')
    assert.deepEqual((await list('?state=active&per_page=100&page=2')).body, { subscriptions: active.slice(100), count: 17, current_page: 2, pages: 2, per_page: 100, total_count: 117 })
    assert.deepEqual((await list('?state=inactive')).body, { subscriptions: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
    assert.deepEqual((await list('?state=paused')).body, { subscriptions: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
    assert.deepEqual((await list("?state=active'%20OR%201=1--")).body, { subscriptions: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
    assert.deepEqual((await list('?state=')).body, { subscriptions: mine.slice(0, 25), count: 25, current_page: 1, pages: 6, per_page: 25, total_count: 130 })
  })

  test('a user with no subscriptions gets an empty list', async () => {
    const carol = await seedUser(server.store)
    assert.deepEqual((await list('', carol.key)).body, { subscriptions: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
  })
})

describe('C3 representation', () => {
  test('the subscription object has exactly the documented keys, in order', async () => {
    const res = await list('?per_page=1')
    const sub = res.body.subscriptions[0]
    assert.deepEqual(Object.keys(sub), [
      'id', 'user_id', 'state', 'paused', 'interval_length', 'interval_units', 'actionable_date', 'end_date',
      'skip_count', 'successive_skip_count', 'payment_method_id', 'payment_source_id', 'currency', 'subtotal', 'discount_total', 'total', 'processing_state',
      'shipping_address', 'billing_address', 'line_items', 'created_at', 'updated_at',
    ])
    assert.deepEqual(Object.keys(sub.line_items[0]), ['id', 'subscription_id', 'subscribable_id', 'quantity', 'one_time', 'price', 'discount_percent', 'total', 'created_at', 'updated_at'])
    assert.deepEqual(Object.keys(res.body), ['subscriptions', 'count', 'current_page', 'pages', 'per_page', 'total_count'])
  })

  test('a canceled subscription has a null actionable_date', async () => {
    const canceled = (await list('?state=canceled')).body.subscriptions
    assert.ok(canceled.length > 0)
    for (const s of canceled) assert.equal(s.actionable_date, null)
  })

  test('an address has exactly the documented keys', async () => {
    const res = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, json: { subscription: { interval_length: 1, shipping_address_attributes: { firstname: 'A', address1: 'B', city: 'C', zipcode: 'D', country_iso: 'US' } } },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body.shipping_address, {
      firstname: 'A', lastname: null, company: null, address1: 'B', address2: null, city: 'C', zipcode: 'D', state_name: null, country_iso: 'US', phone: null,
    })
    assert.deepEqual(Object.keys(res.body.shipping_address), ['firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone'])
  })
})
