import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { admin, processAsOf } from '../processing/helpers.ts'

/** The installment reads of C5 (customer, owner only) and C11 (admin, filters and keyset pages). */
async function setup(t: import('node:test').TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  const bob = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const line = [{ subscribable_id: item, quantity: 1 }]
  const a = await createSubscription(server, alice.key, { actionable_date: '2026-01-20', interval_units: 'month', line_items_attributes: line })
  const b = await createSubscription(server, bob.key, { actionable_date: '2026-01-21', interval_units: 'month', line_items_attributes: line })
  for (const date of ['2026-01-21', '2026-02-21', '2026-03-21']) await processAsOf(server, date)
  // Ids in creation order: a Jan, b Jan, a Feb, b Feb, a Mar, b Mar.
  const all = (await admin(server, 'GET', '/installments?limit=100')).body.installments as any[]
  return { server, alice, bob, a, b, all }
}

test('GET /api/v1/subscriptions/:id/installments: the owner gets the page of C3, newest due date first', async (t) => {
  const { server, alice, a, all } = await setup(t)
  const mine = all.filter((i) => i.subscription_id === a.id)
  assert.deepEqual(mine.map((i) => i.due_date), ['2026-01-20', '2026-02-20', '2026-03-20'])
  const res = await server.request('GET', `/api/v1/subscriptions/${a.id}/installments`, { key: alice.key })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { installments: [...mine].reverse(), count: 3, current_page: 1, pages: 1, per_page: 25, total_count: 3 })
  const page = await server.request('GET', `/api/v1/subscriptions/${a.id}/installments?per_page=2&page=2`, { key: alice.key })
  assert.deepEqual(page.body, { installments: [mine[0]], count: 1, current_page: 2, pages: 2, per_page: 2, total_count: 3 })
  // Every field of C3's installment, in order.
  assert.deepEqual(Object.keys(res.body.installments[0]), [
    'id', 'subscription_id', 'user', 'due_date', 'state', 'retry_at', 'line_items', 'shipping_address', 'billing_address',
    'payment_method_id', 'payment_source_id', 'currency', 'subtotal', 'discount_total', 'total', 'attempts', 'created_at', 'updated_at',
  ])
})

test('customer installments: another user 401, unknown 404, no key 401, none yet an empty page', async (t) => {
  const { server, alice, bob, a } = await setup(t)
  const other = await server.request('GET', `/api/v1/subscriptions/${a.id}/installments`, { key: bob.key })
  assert.deepEqual([other.status, other.body], [401, { error: 'You are not authorized to perform that action.' }])
  const unknown = await server.request('GET', '/api/v1/subscriptions/999999/installments', { key: alice.key })
  assert.deepEqual([unknown.status, unknown.body], [404, { error: 'The resource you were looking for could not be found.' }])
  const anonymous = await server.request('GET', `/api/v1/subscriptions/${a.id}/installments`)
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an API key.' }])
  const fresh = await createSubscription(server, alice.key, {})
  const empty = await server.request('GET', `/api/v1/subscriptions/${fresh.id}/installments`, { key: alice.key })
  assert.deepEqual(empty.body, { installments: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
})

test('GET /admin/api/v1/installments: keyset pages in id order, next_after null on the last page', async (t) => {
  const { server, all } = await setup(t)
  assert.equal(all.length, 6)
  assert.deepEqual(all.map((i) => i.id), [...all.map((i) => i.id)].sort((x, y) => x - y))
  const first = await admin(server, 'GET', '/installments?limit=4')
  assert.deepEqual(first.body, { installments: all.slice(0, 4), next_after: all[3].id })
  const rest = await admin(server, 'GET', `/installments?limit=4&after=${all[3].id}`)
  assert.deepEqual(rest.body, { installments: all.slice(4), next_after: null })
})

test('admin installments filter by state and subscription_id; an id that matches nothing gives an empty page', async (t) => {
  const { server, a, b, all } = await setup(t)
  const target = all.find((i) => i.subscription_id === b.id)
  await admin(server, 'POST', `/installments/${target.id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-9' } })
  const fulfilled = await admin(server, 'GET', '/installments?state=fulfilled')
  assert.deepEqual(fulfilled.body.installments.map((i: any) => i.id), [target.id])
  assert.deepEqual(fulfilled.body.installments[0].attempts.map((x: any) => [x.result, x.order_reference]), [['fulfilled', 'R-9']])
  const ofA = await admin(server, 'GET', `/installments?subscription_id=${a.id}&state=pending`)
  assert.deepEqual(ofA.body, { installments: all.filter((i) => i.subscription_id === a.id), next_after: null })
  assert.deepEqual((await admin(server, 'GET', '/installments?subscription_id=999999')).body, { installments: [], next_after: null })
  // A malformed value is a 422 since C13 (every case: test/admin/strict-query.test.ts).
  const malformed = await admin(server, 'GET', '/installments?state=shipped&subscription_id=abc')
  assert.deepEqual([malformed.status, malformed.body], [422, { state: ['is not included in the list'], subscription_id: ['is not a number'] }])
})

test('GET /admin/api/v1/installments/:id: the installment with its attempts; 404 and 401', async (t) => {
  const { server, alice, all } = await setup(t)
  const id = all[0].id
  await admin(server, 'POST', `/installments/${id}/outcome`, { outcome: { result: 'out_of_stock', message: 'back next week' } })
  const res = await admin(server, 'GET', `/installments/${id}`)
  assert.equal(res.status, 200)
  assert.equal(res.body.state, 'retrying')
  assert.deepEqual(res.body.attempts.map((x: any) => [x.result, x.order_reference, x.message]), [['out_of_stock', null, 'back next week']])
  assert.deepEqual((await admin(server, 'GET', '/installments/999999')).body, { error: 'The resource you were looking for could not be found.' })
  assert.equal((await admin(server, 'GET', '/installments/0')).status, 404)
  const anonymous = await server.request('GET', `/admin/api/v1/installments/${id}`)
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an admin token.' }])
  const customer = await server.request('GET', `/admin/api/v1/installments/${id}`, { key: alice.key })
  assert.deepEqual([customer.status, customer.body], [401, { error: 'Invalid admin token.' }])
  assert.notEqual(ADMIN_TOKEN, alice.key)
})

test('installments name their customer (C13): user {id, email, external_id} in the admin API, the customer API, outcome answers and every installment event, in one key order', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const made = await admin(server, 'POST', '/users', { user: { email: 'Shop.Customer@example.com', external_id: 'crm-42' } })
  assert.equal(made.status, 201, made.text)
  const key = (await admin(server, 'POST', `/users/${made.body.id}/api_keys`)).body.key as string
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, key, { actionable_date: '2026-01-15', line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server, '2026-01-15')
  const user = { id: made.body.id, email: 'Shop.Customer@example.com', external_id: 'crm-42' }

  const listed = (await admin(server, 'GET', `/installments?subscription_id=${sub.id}`)).body.installments[0]
  assert.deepEqual(listed.user, user)
  const shown = (await admin(server, 'GET', `/installments/${listed.id}`)).body
  assert.deepEqual(shown, listed)
  const customer = (await server.request('GET', `/api/v1/subscriptions/${sub.id}/installments`, { key })).body.installments[0]
  assert.deepEqual(customer, listed)
  // installment.created is built in SQL: the same object, byte for byte (key order included), as the JS rendering.
  const [created] = await server.store.events.ofSubscription(sub.id, 0, 1)
  assert.equal(created?.type, 'installment.created')
  assert.equal(JSON.stringify(created?.data), JSON.stringify({ object: shown }))

  const outcome = await admin(server, 'POST', `/installments/${listed.id}/outcome`, { outcome: { result: 'failed' } })
  assert.equal(outcome.status, 200, outcome.text)
  assert.deepEqual(outcome.body.user, user)
  const events = (await server.store.events.ofSubscription(sub.id, 0, 2)).reverse()
  assert.deepEqual(events.map((e) => e.type), ['installment.failed', 'installment.retry_scheduled'])
  for (const e of events) assert.equal(JSON.stringify(e.data), JSON.stringify({ object: outcome.body }))
})
