import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'

/** C10 event recording and the customer events list (C5, C3 pagination). */
const TODAY = '2026-01-15'
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

async function setup(t: TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  return { server, alice, item }
}

const address = (city: string) => ({ firstname: 'Ada', address1: '1 Main St', city, zipcode: '10001', country_iso: 'US' })

test('GET /subscriptions/:id/events: newest first, paginated like every customer list', async (t) => {
  const { server, alice } = await setup(t)
  const sub = await createSubscription(server, alice.key)
  for (const action of ['skip', 'pause', 'resume', 'skip', 'cancel']) {
    assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/${action}`, { key: alice.key })).status, 200)
  }
  const all = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: alice.key })
  assert.equal(all.status, 200)
  const types = ['subscription.canceled', 'subscription.skipped', 'subscription.resumed', 'subscription.paused', 'subscription.skipped', 'subscription.created']
  assert.deepEqual(all.body.events.map((e: any) => e.type), types)
  assert.deepEqual({ ...all.body, events: null }, { events: null, count: 6, current_page: 1, pages: 1, per_page: 25, total_count: 6 })
  const ids = all.body.events.map((e: any) => e.id)
  assert.deepEqual(ids, [...ids].sort((a: number, b: number) => b - a))
  for (const e of all.body.events) {
    assert.deepEqual(Object.keys(e), ['id', 'type', 'created_at', 'subscription_id', 'actor', 'request_id', 'data'])
    assert.equal(e.subscription_id, sub.id)
    assert.match(e.created_at, ISO)
    assert.deepEqual(Object.keys(e.data), ['object'])
  }
  assert.deepEqual(all.body.events, await server.store.events.ofSubscription(sub.id, 0, 100))

  const page2 = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events?page=2&per_page=4`, { key: alice.key })
  assert.deepEqual(page2.body, { events: all.body.events.slice(4), count: 2, current_page: 2, pages: 2, per_page: 4, total_count: 6 })
  const beyond = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events?page=9&per_page=4`, { key: alice.key })
  assert.deepEqual(beyond.body, { events: [], count: 0, current_page: 9, pages: 2, per_page: 4, total_count: 6 })
  const nonsense = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events?page=x&per_page=0`, { key: alice.key })
  assert.deepEqual(nonsense.body, { ...all.body })
  const capped = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events?per_page=1000`, { key: alice.key })
  assert.equal(capped.body.per_page, 100)
})

test('events list: owner only (401 for another user or no key), 404 for an unknown or malformed id', async (t) => {
  const { server, alice } = await setup(t)
  const sub = await createSubscription(server, alice.key)
  const bob = await seedUser(server.store)
  const foreign = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: bob.key })
  assert.deepEqual([foreign.status, foreign.body], [401, { error: 'You are not authorized to perform that action.' }])
  const none = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`)
  assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an API key.' }])
  for (const id of [String(sub.id + 1), 'abc', '0', '-1']) {
    const res = await server.request('GET', `/api/v1/subscriptions/${id}/events`, { key: alice.key })
    assert.deepEqual([res.status, res.body], [404, { error: 'The resource you were looking for could not be found.' }], id)
  }
  // Another subscription's events never show up in this one's list.
  await createSubscription(server, bob.key)
  const own = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: alice.key })
  assert.deepEqual(own.body.events.map((e: any) => [e.type, e.subscription_id]), [['subscription.created', sub.id]])
})

test('a refused change (422) or a failed one (404 inside the unit) leaves no event and no change', async (t) => {
  const { server, alice, item } = await setup(t)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const other = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const snap = await snapshot(server.store)
  const refused = [
    await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: -1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } }),
    await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { interval_length: 2, end_date: TODAY, shipping_address_attributes: address('Paris') } } }),
    await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key, json: { subscription_line_item: { quantity: 0 } } }),
    await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, json: { subscription_line_item: { subscribable_id: item, quantity: 10_000 } } }),
    await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: alice.key, json: { subscription: { actionable_date: 'soon' } } }),
  ]
  for (const res of refused) assert.equal(res.status, 422, res.text)
  assert.equal(await snapshot(server.store), snap)
  // Line items are written first, then the foreign id is found: the whole unit rolls back.
  const rolledBack = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key,
    json: { subscription: { interval_length: 2, line_items_attributes: [{ subscribable_id: item, quantity: 3 }, { id: other.line_items[0].id, quantity: 9 }] } },
  })
  assert.deepEqual([rolledBack.status, rolledBack.body], [404, { error: 'The resource you were looking for could not be found.' }])
  assert.equal(await snapshot(server.store), snap)
})

test('an update writes one event per kind of change, each holding the representation after the whole change', async (t) => {
  const { server, alice } = await setup(t)
  const payment = await seedPayment(server.store, alice.id)
  const sub = await createSubscription(server, alice.key)
  const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key,
    json: { subscription: {
      interval_units: 'week', payment_method_id: payment.methodId, payment_source_id: payment.sourceId,
      shipping_address_attributes: address('Paris'), billing_address_attributes: address('Lyon'), end_date: '2026-12-31',
    } },
  })
  assert.equal(res.status, 200, res.text)
  const events = (await server.store.events.ofSubscription(sub.id, 0, 100)).reverse()
  assert.deepEqual(events.map((e) => e.type), [
    'subscription.created', 'subscription.frequency_changed', 'subscription.payment_method_changed',
    'subscription.shipping_address_changed', 'subscription.billing_address_changed', 'subscription.updated',
  ])
  for (const e of events.slice(1)) assert.deepEqual(e.data.object, res.body)
  // The same update again changes nothing and writes nothing.
  const snap = await snapshot(server.store)
  const again = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key,
    json: { subscription: {
      interval_units: 'week', payment_method_id: payment.methodId, payment_source_id: payment.sourceId,
      shipping_address_attributes: address('Paris'), billing_address_attributes: address('Lyon'), end_date: '2026-12-31',
    } },
  })
  assert.deepEqual([again.status, again.body], [200, res.body])
  assert.equal(await snapshot(server.store), snap)
})

/**
 * The history explains the state: replaying the events of a subscription in order (each
 * subscription.* event sets the state, each line_item.* event edits its line items) gives, after
 * every step, exactly what GET answers; every step writes exactly its events, none missing or extra.
 */
test('replayed in order, the events of a subscription explain its current state after every step', async (t) => {
  const { server, alice, item } = await setup(t)
  const item2 = await seedSubscribable(server.store)
  const payment = await seedPayment(server.store, alice.id)
  const key = alice.key
  let id = 0
  let firstItem = 0
  let secondItem = 0
  const sub = (path = ''): string => `/api/v1/subscriptions/${id}${path}`
  const patch = (attrs: Record<string, unknown>) => server.request('PATCH', sub(), { key, json: { subscription: attrs } })
  const steps: [string, () => Promise<{ status: number; body: any }>, string[]][] = [
    ['create', async () => {
      const res = await server.request('POST', '/api/v1/subscriptions', { key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 2 }] } } })
      id = res.body.id
      firstItem = res.body.line_items[0].id
      return res
    }, ['subscription.created']],
    ['interval', () => patch({ interval_length: 2 }), ['subscription.frequency_changed']],
    ['payment', () => patch({ payment_method_id: payment.methodId, payment_source_id: payment.sourceId }), ['subscription.payment_method_changed']],
    ['shipping', () => patch({ shipping_address_attributes: address('Paris') }), ['subscription.shipping_address_changed']],
    ['billing', () => patch({ billing_address_attributes: address('Lyon') }), ['subscription.billing_address_changed']],
    ['end date', () => patch({ end_date: '2027-01-01' }), ['subscription.updated']],
    ['add item', async () => {
      const res = await server.request('POST', sub('/line_items'), { key, json: { subscription_line_item: { subscribable_id: item2, quantity: 1 } } })
      secondItem = res.body.id
      return res
    }, ['line_item.created']],
    ['edit item', () => server.request('PATCH', `/api/v1/line_items/${secondItem}`, { key, json: { subscription_line_item: { quantity: 3 } } }), ['line_item.updated']],
    ['skip', () => server.request('POST', sub('/skip'), { key }), ['subscription.skipped']],
    ['pause', () => server.request('POST', sub('/pause'), { key, json: { subscription: { actionable_date: '2026-06-30' } } }), ['subscription.paused']],
    ['pause again', () => server.request('POST', sub('/pause'), { key }), []],
    ['resume', () => server.request('POST', sub('/resume'), { key }), ['subscription.resumed']],
    ['nested items', () => patch({ line_items_attributes: [{ id: firstItem, _destroy: true }, { subscribable_id: item, quantity: 5 }] }), ['line_item.deleted', 'line_item.created']],
    ['delete item', () => server.request('DELETE', `/api/v1/line_items/${secondItem}`, { key }), ['line_item.deleted']],
    ['cancel', () => server.request('POST', sub('/cancel'), { key }), ['subscription.canceled']],
    ['cancel again', () => server.request('POST', sub('/cancel'), { key }), []],
    ['activate', () => server.request('POST', sub('/activate'), { key }), ['subscription.activated']],
    ['all at once', () => patch({ interval_units: 'week', shipping_address_attributes: { city: 'Nice' }, end_date: null }),
      ['subscription.frequency_changed', 'subscription.shipping_address_changed', 'subscription.updated']],
  ]

  let replayed: any = null
  let seen = 0
  const expectedTypes: string[] = []
  for (const [name, run, types] of steps) {
    const res = await run()
    assert.equal(res.status, 200, `${name}: ${JSON.stringify(res.body)}`)
    expectedTypes.push(...types)
    const events = (await server.store.events.ofSubscription(id, 0, 1000)).reverse()
    assert.deepEqual(events.slice(seen).map((e) => e.type), types, `${name}: the events it wrote`)
    for (const e of events.slice(seen)) {
      assert.equal(e.subscription_id, id)
      const object = e.data.object as any
      if (e.type.startsWith('subscription.')) {
        replayed = object
      } else {
        const items = (replayed.line_items as any[]).filter((li) => li.id !== object.id)
        if (e.type !== 'line_item.deleted') items.push(object)
        replayed = { ...replayed, line_items: items.sort((a, b) => a.id - b.id) }
      }
    }
    seen = events.length
    const current = (await server.request('GET', sub(), { key })).body
    if (types.some((type) => type.startsWith('subscription.'))) {
      assert.deepEqual(replayed, current, `${name}: replayed state`)
      assert.deepEqual(res.body, current, `${name}: the answer is the state`)
    } else {
      // Line item routes may touch the subscription's updated_at; all else is explained.
      assert.deepEqual({ ...replayed, updated_at: null }, { ...current, updated_at: null }, `${name}: replayed state`)
    }
  }
  assert.deepEqual((await server.store.events.ofSubscription(id, 0, 1000)).reverse().map((e) => e.type), expectedTypes)
  // And the customer list says the same, newest first.
  const listed = await server.request('GET', sub('/events?per_page=100'), { key })
  assert.deepEqual(listed.body.events.map((e: any) => e.type), [...expectedTypes].reverse())
  assert.equal(listed.body.total_count, expectedTypes.length)
})
