/**
 * One test (or more) per statement of shared/spec/interface-v1.md, over real HTTP, each in both
 * body encodings the service accepts (JSON and Rails-bracket forms, C1). Stored state is read
 * back from the database: a 422 or a 401 must leave every table exactly as it was.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  countRows, createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer,
} from '../helpers/server.ts'
import { ENCODINGS, encoded, type Encoding } from '../helpers/encoding.ts'

const TODAY = '2026-03-15'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const NOT_AUTHORIZED = { error: 'You are not authorized to perform that action.' }
const INVALID_PAYMENT = { payment_source_type: ['Invalid payment method or source'] }

let server: TestServer

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: TODAY })
})
after(() => server.close())

function assertTimestamps(body: any): void {
  assert.match(body.created_at, ISO_TIME)
  assert.match(body.updated_at, ISO_TIME)
}

/** The whole C3 object with the defaults of a create, overridden by `fields`. */
function subscriptionBody(body: any, fields: Record<string, unknown>): Record<string, unknown> {
  return {
    id: body.id, user_id: body.user_id, state: 'active', paused: false,
    interval_length: 1, interval_units: 'month', actionable_date: '2026-04-15', end_date: null,
    skip_count: 0, successive_skip_count: 0, payment_method_id: null, payment_source_id: null,
    currency: 'USD', subtotal: '0.00', discount_total: '0.00', total: '0.00', processing_state: 'pending', shipping_address: null, billing_address: null,
    line_items: [], created_at: body.created_at, updated_at: body.updated_at,
    ...fields,
  }
}

async function subscriptionWithItem(key: string, quantity = 1): Promise<{ sub: any; itemId: number }> {
  const subscribable = await seedSubscribable(server.store, { prices: { USD: '2.50' } })
  const sub = await createSubscription(server, key, { line_items_attributes: [{ subscribable_id: subscribable, quantity }] })
  return { sub, itemId: sub.line_items[0].id }
}

for (const encoding of ENCODINGS) {
  describe(`interface-v1 over ${encoding}`, () => {
    describe('1. Create a subscription', () => {
      test('interval_length alone is enough: 200, created and owned by the authenticated user', async () => {
        const alice = await seedUser(server.store)
        const before = await countRows(server.store, 'subscriptions')
        const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, ...encoded(encoding, { subscription: { interval_length: 11 } }) })
        assert.equal(res.status, 200)
        assertTimestamps(res.body)
        assert.deepEqual(res.body, subscriptionBody(res.body, { user_id: alice.id, interval_length: 11, actionable_date: '2027-02-15' }))
        assert.equal(await countRows(server.store, 'subscriptions'), before + 1)
        const stored = await server.store.subscriptions.find(res.body.id as number)
        assert.equal(stored?.user_id, alice.id)
        assert.equal(stored?.interval_length, 11)
      })

      test('the owner is the authenticated user even when the body names another one', async () => {
        const alice = await seedUser(server.store)
        const bob = await seedUser(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key, ...encoded(encoding, { subscription: { interval_length: 2, user_id: bob.id } }),
        })
        assert.equal(res.status, 200)
        assert.equal(res.body.user_id, alice.id)
        assert.equal((await server.store.subscriptions.find(res.body.id))?.user_id, alice.id)
      })

      test('interval_units week is used', async () => {
        const alice = await seedUser(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key, ...encoded(encoding, { subscription: { interval_length: 1, interval_units: 'week' } }),
        })
        assert.equal(res.status, 200)
        assert.deepEqual(res.body, subscriptionBody(res.body, { user_id: alice.id, interval_units: 'week', actionable_date: '2026-03-22' }))
      })

      test('valid payment_method_id and payment_source_id given together are stored', async () => {
        const alice = await seedUser(server.store)
        const pay = await seedPayment(server.store, alice.id)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key,
          ...encoded(encoding, { subscription: { interval_length: 1, payment_method_id: pay.methodId, payment_source_id: pay.sourceId } }),
        })
        assert.equal(res.status, 200)
        assert.deepEqual(res.body, subscriptionBody(res.body, { user_id: alice.id, payment_method_id: pay.methodId, payment_source_id: pay.sourceId }))
        const stored = await server.store.subscriptions.find(res.body.id as number)
        assert.equal(stored?.payment_method_id, pay.methodId)
        assert.equal(stored?.payment_source_id, pay.sourceId)
      })

      test('a payment source of another user without a method: 422 payment_source_type, nothing created', async () => {
        const alice = await seedUser(server.store)
        const bob = await seedUser(server.store)
        const bobs = await seedPayment(server.store, bob.id)
        const before = await snapshot(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key, ...encoded(encoding, { subscription: { interval_length: 1, payment_source_id: bobs.sourceId } }),
        })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, INVALID_PAYMENT)
        assert.equal(await snapshot(server.store), before)
      })

      test('a payment method without a source: 422 payment_source_type, nothing created', async () => {
        const alice = await seedUser(server.store)
        const pay = await seedPayment(server.store, alice.id)
        const before = await snapshot(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key, ...encoded(encoding, { subscription: { interval_length: 1, payment_method_id: pay.methodId } }),
        })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, INVALID_PAYMENT)
        assert.equal(await snapshot(server.store), before)
      })

      test('a payment source of another user together with its method: 422, nothing created', async () => {
        const alice = await seedUser(server.store)
        const bob = await seedUser(server.store)
        const bobs = await seedPayment(server.store, bob.id)
        const before = await snapshot(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key,
          ...encoded(encoding, { subscription: { interval_length: 1, payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId } }),
        })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, INVALID_PAYMENT)
        assert.equal(await snapshot(server.store), before)
      })

      test('a method and a source that do not agree: 422, nothing created', async () => {
        const alice = await seedUser(server.store)
        const one = await seedPayment(server.store, alice.id)
        const two = await seedPayment(server.store, alice.id)
        const before = await snapshot(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', {
          key: alice.key,
          ...encoded(encoding, { subscription: { interval_length: 1, payment_method_id: one.methodId, payment_source_id: two.sourceId } }),
        })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, INVALID_PAYMENT)
        assert.equal(await snapshot(server.store), before)
      })

      test('interval_length -1: 422, no subscription created', async () => {
        const alice = await seedUser(server.store)
        const before = await snapshot(server.store)
        const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, ...encoded(encoding, { subscription: { interval_length: -1 } }) })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, { interval_length: ['must be greater than 0'] })
        assert.equal(await snapshot(server.store), before)
      })
    })

    describe('2. Update a subscription', () => {
      test('the owner changes interval_length: 200 and the stored value changes', async () => {
        const alice = await seedUser(server.store)
        const sub = await createSubscription(server, alice.key, { interval_length: 1 })
        const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, ...encoded(encoding, { subscription: { interval_length: 3 } }) })
        assert.equal(res.status, 200)
        // C7: a new interval counts from the start (created today): today + 3 months.
        assert.deepEqual(res.body, subscriptionBody(res.body, { user_id: alice.id, interval_length: 3, actionable_date: '2026-06-15', created_at: sub.created_at }))
        assert.equal((await server.store.subscriptions.find(sub.id))?.interval_length, 3)
      })

      test('interval_length -1: 422 and nothing changes', async () => {
        const alice = await seedUser(server.store)
        const sub = await createSubscription(server, alice.key, { interval_length: 2 })
        const before = await snapshot(server.store)
        const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, ...encoded(encoding, { subscription: { interval_length: -1 } }) })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, { interval_length: ['must be greater than 0'] })
        assert.equal(await snapshot(server.store), before)
        assert.equal((await server.store.subscriptions.find(sub.id))?.interval_length, 2)
      })

      test('a caller who does not own the subscription: 401 and nothing changes', async () => {
        const alice = await seedUser(server.store)
        const bob = await seedUser(server.store)
        const sub = await createSubscription(server, alice.key, { interval_length: 2 })
        const before = await snapshot(server.store)
        const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: bob.key, ...encoded(encoding, { subscription: { interval_length: 5 } }) })
        assert.equal(res.status, 401)
        assert.deepEqual(res.body, NOT_AUTHORIZED)
        assert.equal(await snapshot(server.store), before)
      })
    })

    describe('5. Update a line item', () => {
      test('the owner of the parent subscription sets quantity: 200 and it is stored', async () => {
        const alice = await seedUser(server.store)
        const { sub, itemId } = await subscriptionWithItem(alice.key)
        const res = await server.request('PATCH', `/api/v1/line_items/${itemId}`, { key: alice.key, ...encoded(encoding, { subscription_line_item: { quantity: 4 } }) })
        assert.equal(res.status, 200)
        assert.deepEqual(res.body, {
          id: itemId, subscription_id: sub.id, subscribable_id: sub.line_items[0].subscribable_id, quantity: 4, one_time: false,
          price: '2.50', discount_percent: '0', total: '10.00', // C16: 4 × 2.50
          created_at: sub.line_items[0].created_at, updated_at: res.body.updated_at,
        })
        assert.equal((await server.store.subscriptions.lineItemById(itemId))?.quantity, 4)
      })

      test('quantity -1: 422 and nothing changes', async () => {
        const alice = await seedUser(server.store)
        const { itemId } = await subscriptionWithItem(alice.key, 2)
        const before = await snapshot(server.store)
        const res = await server.request('PATCH', `/api/v1/line_items/${itemId}`, { key: alice.key, ...encoded(encoding, { subscription_line_item: { quantity: -1 } }) })
        assert.equal(res.status, 422)
        assert.deepEqual(res.body, { quantity: ['must be greater than 0'] })
        assert.equal(await snapshot(server.store), before)
        assert.equal((await server.store.subscriptions.lineItemById(itemId))?.quantity, 2)
      })

      test('a caller who does not own the parent subscription: 401 and nothing changes', async () => {
        const alice = await seedUser(server.store)
        const bob = await seedUser(server.store)
        const { itemId } = await subscriptionWithItem(alice.key, 2)
        const before = await snapshot(server.store)
        const res = await server.request('PATCH', `/api/v1/line_items/${itemId}`, { key: bob.key, ...encoded(encoding, { subscription_line_item: { quantity: 3 } }) })
        assert.equal(res.status, 401)
        assert.deepEqual(res.body, NOT_AUTHORIZED)
        assert.equal(await snapshot(server.store), before)
      })
    })
  })
}

describe('3. Skip a subscription (no payload)', () => {
  test('the owner skips: 200, actionable_date moves forward by one interval (1 week), state unchanged', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1, interval_units: 'week' })
    assert.equal(sub.actionable_date, '2026-03-22')
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, subscriptionBody(res.body, {
      user_id: alice.id, interval_units: 'week', actionable_date: '2026-03-29', skip_count: 1, successive_skip_count: 1, created_at: sub.created_at,
    }))
    const stored = await server.store.subscriptions.find(sub.id)
    assert.equal(stored?.actionable_date, '2026-03-29')
    assert.equal(stored?.state, 'active')
  })

  test('the step is interval_length times interval_units', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 3, interval_units: 'week' })
    assert.equal(sub.actionable_date, '2026-04-05')
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })
    assert.equal(res.status, 200)
    assert.equal(res.body.actionable_date, '2026-04-26')
  })

  test('a caller who does not own the subscription: 401 and nothing changes', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1, interval_units: 'week' })
    const before = await snapshot(server.store)
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: bob.key })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, NOT_AUTHORIZED)
    assert.equal(await snapshot(server.store), before)
  })
})

describe('4. Cancel a subscription (no payload)', () => {
  test('the owner cancels: 200 and the state becomes canceled', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, subscriptionBody(res.body, { user_id: alice.id, state: 'canceled', actionable_date: null, created_at: sub.created_at }))
    assert.equal((await server.store.subscriptions.find(sub.id))?.state, 'canceled')
  })

  test('a subscription in any state is canceled (a canceled one again: 200)', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const paused = await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: alice.key })
    assert.equal(paused.status, 200)
    const first = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
    assert.equal(first.status, 200)
    assert.equal(first.body.state, 'canceled')
    const again = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
    assert.equal(again.status, 200)
    assert.equal(again.body.state, 'canceled')
    assert.equal((await server.store.subscriptions.find(sub.id))?.state, 'canceled')
  })

  test('a caller who does not own the subscription: 401 and nothing changes', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const before = await snapshot(server.store)
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: bob.key })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, NOT_AUTHORIZED)
    assert.equal(await snapshot(server.store), before)
    assert.equal((await server.store.subscriptions.find(sub.id))?.state, 'active')
  })
})

describe('6. Delete a line item (no payload)', () => {
  test('the owner deletes: 200 with the removed item, and it no longer exists afterwards', async () => {
    const alice = await seedUser(server.store)
    const { sub, itemId } = await subscriptionWithItem(alice.key, 2)
    const res = await server.request('DELETE', `/api/v1/line_items/${itemId}`, { key: alice.key })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, sub.line_items[0])
    assert.equal(await server.store.subscriptions.lineItemById(itemId), undefined)
    const gone = await server.request('GET', `/api/v1/line_items/${itemId}`, { key: alice.key })
    assert.equal(gone.status, 404)
    const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
    assert.deepEqual(shown.body.line_items, [])
  })

  test('a caller who does not own the parent subscription: 401 and the item stays', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const { itemId } = await subscriptionWithItem(alice.key, 2)
    const before = await snapshot(server.store)
    const res = await server.request('DELETE', `/api/v1/line_items/${itemId}`, { key: bob.key })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, NOT_AUTHORIZED)
    assert.equal(await snapshot(server.store), before)
    assert.equal((await server.store.subscriptions.lineItemById(itemId))?.quantity, 2)
  })
})

describe('Authentication', () => {
  test('the key in "Authorization: Bearer <API_KEY>" identifies the user; ownership is checked against that user', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    const mine = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
    assert.equal(mine.status, 200)
    assert.deepEqual(mine.body, sub)
    const theirs = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: bob.key })
    assert.equal(theirs.status, 401)
    assert.deepEqual(theirs.body, NOT_AUTHORIZED)
  })

  test('every operation requires an authenticated user', async () => {
    const alice = await seedUser(server.store)
    const { sub, itemId } = await subscriptionWithItem(alice.key)
    const before = await snapshot(server.store)
    const calls: [string, string][] = [
      ['POST', '/api/v1/subscriptions'],
      ['PATCH', `/api/v1/subscriptions/${sub.id}`],
      ['POST', `/api/v1/subscriptions/${sub.id}/skip`],
      ['POST', `/api/v1/subscriptions/${sub.id}/cancel`],
      ['PATCH', `/api/v1/line_items/${itemId}`],
      ['DELETE', `/api/v1/line_items/${itemId}`],
    ]
    for (const [method, path] of calls) {
      const res = await server.request(method, path, method === 'DELETE' || path.endsWith('skip') || path.endsWith('cancel') ? {} : { json: { quantity: 1, interval_length: 1 } })
      assert.equal(res.status, 401, `${method} ${path}`)
      assert.deepEqual(res.body, { error: 'You must specify an API key.' })
    }
    assert.equal(await snapshot(server.store), before)
  })
})

test('Versioning: the version is the path segment v1; other versions are not routes', async () => {
  const alice = await seedUser(server.store)
  const res = await server.request('POST', '/api/v2/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1 } } })
  assert.equal(res.status, 404)
  assert.deepEqual(res.body, { error: 'The resource you were looking for could not be found.' })
})
