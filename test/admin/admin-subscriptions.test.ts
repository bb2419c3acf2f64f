/**
 * Issue 18 item 3, C13 "Admin writes": the shop creates (POST, 201) and updates (PATCH and PUT,
 * 200) a subscription for any user. The rules are the customer's (C6, C7), checked here by sending
 * the same bodies to both APIs and getting the same 422, except what C13 adds: any actionable_date
 * (past ones included) and the skip counters. The events are those the customer routes write.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ADMIN_TOKEN, createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer,
  type RequestOptions, type SeededUser, type TestServer,
} from '../helpers/server.ts'

const TODAY = '2026-03-15'
const A = '/admin/api/v1'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const INVALID_PAYMENT = { payment_source_type: ['Invalid payment method or source'] }

let server: TestServer
let alice: SeededUser
let bob: SeededUser
let item: number
let otherItem: number

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: TODAY })
  alice = await seedUser(server.store)
  bob = await seedUser(server.store)
  item = await seedSubscribable(server.store)
  otherItem = await seedSubscribable(server.store)
})
after(() => server.close())

const admin = (method: string, path: string, options: RequestOptions = {}) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })
const adminCreate = (attrs: Record<string, unknown>, options: RequestOptions = {}) => admin('POST', '/subscriptions', { json: { subscription: attrs }, ...options })

async function eventsOf(subscriptionId: number): Promise<{ type: string; object: unknown }[]> {
  const newestFirst = await server.store.events.ofSubscription(subscriptionId, 0, 1000)
  return newestFirst.reverse().map((e) => ({ type: e.type, object: e.data.object }))
}

function address(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    firstname: 'Ada', lastname: 'Lovelace', company: null, address1: '12 St James Sq', address2: null,
    city: 'London', zipcode: 'SW1Y 4JH', state_name: null, country_iso: 'GB', phone: null, ...overrides,
  }
}

/** The 422 of a request, and proof that it changed nothing. */
async function refusal(method: string, path: string, options: RequestOptions): Promise<unknown> {
  const before = await snapshot(server.store)
  const res = await server.request(method, path, options)
  assert.equal(res.status, 422, `${method} ${path} ${JSON.stringify(options.json)}: ${res.text}`)
  assert.equal(await snapshot(server.store), before, `${method} ${path} ${JSON.stringify(options.json)} changed the database`)
  return res.body
}

describe('POST /admin/api/v1/subscriptions', () => {
  test('201 with the C3 body, owned by user_id: past date, skip counters, payment, addresses and line items kept', async () => {
    const pay = await seedPayment(server.store, alice.id)
    const res = await adminCreate({
      user_id: alice.id, interval_length: 2, interval_units: 'week', actionable_date: '2026-01-31', end_date: '2027-01-01',
      skip_count: 7, successive_skip_count: 2, currency: 'EUR', payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
      shipping_address_attributes: address(), billing_address_attributes: address({ firstname: 'Bea' }),
      line_items_attributes: [{ subscribable_id: item, quantity: 3 }, { subscribable_id: otherItem, quantity: 1 }],
    })
    assert.equal(res.status, 201, res.text)
    const sub = res.body
    assert.deepEqual(
      { ...sub, id: 0, line_items: [], created_at: '', updated_at: '' },
      {
        id: 0, user_id: alice.id, state: 'active', paused: false, interval_length: 2, interval_units: 'week',
        actionable_date: '2026-01-31', end_date: '2027-01-01', skip_count: 7, successive_skip_count: 2,
        // C16: the items have no EUR price, so no totals.
        payment_method_id: pay.methodId, payment_source_id: pay.sourceId, currency: 'EUR', subtotal: null, discount_total: null, total: null,
        processing_state: 'pending', shipping_address: address(), billing_address: address({ firstname: 'Bea' }), line_items: [], created_at: '', updated_at: '',
      },
    )
    assert.deepEqual(sub.line_items.map((li: any) => [li.subscription_id, li.subscribable_id, li.quantity]), [[sub.id, item, 3], [sub.id, otherItem, 1]])
    // The same body from both APIs' GET, the customer's with the owner's key.
    assert.deepEqual((await admin('GET', `/subscriptions/${sub.id}`)).body, sub)
    assert.deepEqual((await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })).body, sub)
    // The admin list renders its page in JavaScript (representation.ts): the same text as the SQL-rendered GET.
    const listed = await admin('GET', `/subscriptions?after=${sub.id - 1}&limit=1`)
    assert.equal(JSON.stringify(listed.body.subscriptions[0]), (await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })).text)
    // As the customer's create: one subscription.created event holding the body.
    assert.deepEqual(await eventsOf(sub.id), [{ type: 'subscription.created', object: sub }])
    // A past date is due now: the processor's next run picks it up (C9).
    const due = await admin('GET', `/subscriptions?user_id=${alice.id}&actionable_before=${TODAY}`)
    assert.ok(due.body.subscriptions.some((s: any) => s.id === sub.id))
  })

  test('a form body (Rails brackets, integer strings) works as JSON does; defaults are the customer\'s', async () => {
    const res = await admin('POST', '/subscriptions', {
      form: `subscription[user_id]=${bob.id}&subscription[interval_length]=1&subscription[skip_count]=3` +
        `&subscription[line_items_attributes][0][subscribable_id]=${item}&subscription[line_items_attributes][0][quantity]=2`,
    })
    assert.equal(res.status, 201, res.text)
    assert.deepEqual(
      [res.body.user_id, res.body.interval_units, res.body.actionable_date, res.body.currency, res.body.skip_count, res.body.successive_skip_count, res.body.line_items.length],
      [bob.id, 'month', '2026-04-15', 'USD', 3, 0, 1],
    )
  })

  test('user_id is required and must be a user; its error comes with every other field\'s, and nothing is made', async () => {
    const url = `${A}/subscriptions`
    const send = (subscription: Record<string, unknown>) => refusal('POST', url, { key: ADMIN_TOKEN, json: { subscription } })
    assert.deepEqual(await send({ interval_length: 1 }), { user_id: ["can't be blank"] })
    assert.deepEqual(await send({ user_id: 999_999, interval_length: 1 }), { user_id: ['is invalid'] })
    assert.deepEqual(await send({ user_id: 'abc', interval_length: 1 }), { user_id: ['is invalid'] })
    assert.deepEqual(await send({ user_id: 999_999, interval_length: 0, interval_units: 'fortnight' }), {
      user_id: ['is invalid'], interval_units: ['is not included in the list'], interval_length: ['must be greater than 0'],
    })
    assert.deepEqual(await refusal('POST', url, { key: ADMIN_TOKEN, json: {} }), {
      error: 'param is missing or the value is empty: subscription', exception: 'param is missing or the value is empty: subscription', missing_param: 'subscription',
    })
  })

  test('the payment source must be that user\'s (C6): another user\'s is the one payment_source_type error', async () => {
    const bobs = await seedPayment(server.store, bob.id)
    const body = { interval_length: 1, payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId }
    assert.deepEqual(await refusal('POST', `${A}/subscriptions`, { key: ADMIN_TOKEN, json: { subscription: { ...body, user_id: alice.id } } }), INVALID_PAYMENT)
    const forBob = await adminCreate({ ...body, user_id: bob.id })
    assert.equal(forBob.status, 201, forBob.text)
    assert.equal(forBob.body.payment_source_id, bobs.sourceId)
  })

  test('the customer\'s rules, from the same code: each bad body gets the same 422 from both APIs', async () => {
    const bobs = await seedPayment(server.store, bob.id)
    const closed = await seedSubscribable(server.store, { subscribable: false })
    const bodies: Record<string, unknown>[] = [
      { interval_length: 'x' },
      { interval_length: 1.5 },
      { interval_length: 13, interval_units: 'year' },
      { interval_length: 1, interval_units: 'fortnight' },
      { interval_length: 1, actionable_date: '2026-02-30' },
      { interval_length: 1, end_date: TODAY },
      { interval_length: 1, currency: 'XX' },
      { interval_length: 1, payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId },
      { interval_length: 1, payment_method_id: bobs.methodId },
      { interval_length: 1, shipping_address_attributes: address({ zipcode: '', country_iso: 'GBR' }) },
      { interval_length: 1, line_items_attributes: [{ subscribable_id: closed, quantity: 1 }, { subscribable_id: item, quantity: 10_000 }] },
    ]
    for (const subscription of bodies) {
      const customer = await refusal('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription } })
      const shop = await refusal('POST', `${A}/subscriptions`, { key: ADMIN_TOKEN, json: { subscription: { ...subscription, user_id: alice.id } } })
      assert.deepEqual(shop, customer, JSON.stringify(subscription))
    }
  })

  test('what C13 adds: a past actionable_date, refused to a customer; skip counters, ignored from a customer (C1)', async () => {
    const past = { interval_length: 1, actionable_date: '2025-12-01' }
    assert.deepEqual(await refusal('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: past } }), { actionable_date: ['must be today or later'] })
    const shop = await adminCreate({ ...past, user_id: alice.id })
    assert.equal(shop.status, 201, shop.text)
    assert.equal(shop.body.actionable_date, '2025-12-01')

    const customer = await createSubscription(server, alice.key, { skip_count: 5, successive_skip_count: 5 })
    assert.deepEqual([customer.skip_count, customer.successive_skip_count], [0, 0])
  })

  test('skip counters are integers from 0 to 2147483647', async () => {
    const send = (counters: Record<string, unknown>) =>
      refusal('POST', `${A}/subscriptions`, { key: ADMIN_TOKEN, json: { subscription: { user_id: alice.id, interval_length: 1, ...counters } } })
    assert.deepEqual(await send({ skip_count: -1, successive_skip_count: 'x' }), {
      skip_count: ['must be greater than or equal to 0'], successive_skip_count: ['is not a number'],
    })
    assert.deepEqual(await send({ skip_count: 1.5, successive_skip_count: 2_147_483_648 }), {
      skip_count: ['must be an integer'], successive_skip_count: ['must be less than or equal to 2147483647'],
    })
    const edge = await adminCreate({ user_id: alice.id, interval_length: 1, skip_count: 2_147_483_647, successive_skip_count: '0' })
    assert.equal(edge.status, 201, edge.text)
    assert.deepEqual([edge.body.skip_count, edge.body.successive_skip_count], [2_147_483_647, 0])
  })

  test('an Idempotency-Key replays the 201 and makes one subscription', async () => {
    const options = { headers: { 'idempotency-key': `create-${Date.now()}` } }
    const first = await adminCreate({ user_id: bob.id, interval_length: 3 }, options)
    const again = await adminCreate({ user_id: bob.id, interval_length: 3 }, options)
    assert.equal(first.status, 201, first.text)
    assert.deepEqual([again.status, again.body, again.headers.get('idempotent-replayed')], [201, first.body, 'true'])
    const made = await admin('GET', `/subscriptions?user_id=${bob.id}&limit=100`)
    assert.equal(made.body.subscriptions.filter((s: any) => s.interval_length === 3).length, 1)
  })
})

describe('PATCH and PUT /admin/api/v1/subscriptions/:id', () => {
  const adminUpdate = (id: number, attrs: Record<string, unknown>, method = 'PATCH') => admin(method, `/subscriptions/${id}`, { json: { subscription: attrs } })

  test('200 with the C3 body for any owner\'s subscription; the events are the ones the customer update writes', async () => {
    const pay = await seedPayment(server.store, alice.id)
    const twins = [await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })]
    twins.push(await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] }))
    const change = (sub: any) => ({
      interval_length: 2, end_date: '2027-06-30', payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
      shipping_address_attributes: address(), billing_address_attributes: address({ city: 'Leeds' }),
      line_items_attributes: [{ id: sub.line_items[0].id, quantity: 4 }, { subscribable_id: otherItem, quantity: 2 }],
    })
    const [mine, theirs] = twins as [any, any]
    const customer = await server.request('PATCH', `/api/v1/subscriptions/${mine.id}`, { key: alice.key, json: { subscription: change(mine) } })
    const shop = await adminUpdate(theirs.id, change(theirs))
    assert.equal(customer.status, 200, customer.text)
    assert.equal(shop.status, 200, shop.text)
    const comparable = (body: any) => ({ ...body, id: 0, created_at: '', updated_at: '', line_items: body.line_items.map((li: any) => [li.subscribable_id, li.quantity]) })
    assert.deepEqual(comparable(shop.body), comparable(customer.body))
    assert.deepEqual((await admin('GET', `/subscriptions/${theirs.id}`)).body, shop.body)
    const types = async (id: number) => (await eventsOf(id)).map((e) => e.type)
    assert.deepEqual(await types(theirs.id), await types(mine.id))
    assert.deepEqual(await types(theirs.id), [
      'subscription.created', 'line_item.updated', 'line_item.created', 'subscription.frequency_changed',
      'subscription.payment_method_changed', 'subscription.shipping_address_changed', 'subscription.billing_address_changed', 'subscription.updated',
    ])
    assert.deepEqual((await eventsOf(theirs.id)).at(-1)?.object, shop.body)
  })

  test('what C13 adds: a past actionable_date and the skip counters (subscription.updated); PUT does the same', async () => {
    const sub = await createSubscription(server, bob.key, {})
    assert.deepEqual(
      await refusal('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: bob.key, json: { subscription: { actionable_date: '2026-03-14' } } }),
      { actionable_date: ['must be today or later'] },
    )
    const res = await adminUpdate(sub.id, { actionable_date: '2026-03-14', skip_count: 9, successive_skip_count: '3' })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual([res.body.actionable_date, res.body.skip_count, res.body.successive_skip_count], ['2026-03-14', 9, 3])
    const put = await adminUpdate(sub.id, { skip_count: 0, successive_skip_count: 0 }, 'PUT')
    assert.equal(put.status, 200, put.text)
    assert.deepEqual([put.body.skip_count, put.body.successive_skip_count], [0, 0])
    assert.deepEqual((await eventsOf(sub.id)).map((e) => e.type), ['subscription.created', 'subscription.updated', 'subscription.updated'])
    // A customer's body may name the counters: never applied (C1), nothing written.
    const ignored = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: bob.key, json: { subscription: { skip_count: 5 } } })
    assert.deepEqual([ignored.status, ignored.body.skip_count], [200, 0])
    assert.equal((await eventsOf(sub.id)).length, 3)
  })

  test('the customer\'s 422s, the owner\'s payment source only, and 404 before a bad body', async () => {
    const sub = await createSubscription(server, alice.key, {})
    const bobs = await seedPayment(server.store, bob.id)
    const bodies: Record<string, unknown>[] = [
      { interval_length: 0 },
      { interval_units: 'year', interval_length: 11 },
      { end_date: '2026-03-15' },
      { payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId },
      { billing_address_attributes: { firstname: 'X' } },
      { line_items_attributes: [{ subscribable_id: item, quantity: 0 }] },
      { skip_count: -2 },
    ]
    for (const subscription of bodies) {
      const shop = await refusal('PATCH', `${A}/subscriptions/${sub.id}`, { key: ADMIN_TOKEN, json: { subscription } })
      if ('skip_count' in subscription) {
        assert.deepEqual(shop, { skip_count: ['must be greater than or equal to 0'] })
        continue
      }
      const customer = await refusal('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription } })
      assert.deepEqual(shop, customer, JSON.stringify(subscription))
    }
    assert.deepEqual(await refusal('PATCH', `${A}/subscriptions/${sub.id}`, { key: ADMIN_TOKEN, json: { subscription: { payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId } } }), INVALID_PAYMENT)
    const missing = await adminUpdate(999_999, { interval_length: 0 })
    assert.deepEqual([missing.status, missing.body], [404, NOT_FOUND])
    const foreignItem = await createSubscription(server, bob.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const before = await snapshot(server.store)
    const crossed = await adminUpdate(sub.id, { line_items_attributes: [{ id: foreignItem.line_items[0].id, quantity: 2 }] })
    assert.deepEqual([crossed.status, crossed.body], [404, NOT_FOUND])
    assert.equal(await snapshot(server.store), before)
  })

  test('a body that changes nothing writes nothing: same updated_at, no event', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 2 })
    const res = await adminUpdate(sub.id, { interval_length: 2, skip_count: 0 })
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(res.body, sub)
    assert.equal((await eventsOf(sub.id)).length, 1)
  })
})
