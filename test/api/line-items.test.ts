/**
 * The line item routes of C5: add, show, update (quantity or a swapped subscribable), delete.
 * Ownership goes through the subscription (C2); a refusal leaves the database as it was.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { renderLineItem } from '../../src/domain/representation.ts'
import {
  createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type SeededUser, type TestServer,
} from '../helpers/server.ts'

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const NOT_AUTHORIZED = { error: 'You are not authorized to perform that action.' }
const CANNOT = { subscribable: ['The requested item cannot be subscribed'] }

let server: TestServer
let alice: SeededUser
let bob: SeededUser
let coffee: number
let tea: number
let hidden: number

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
  alice = await seedUser(server.store)
  bob = await seedUser(server.store)
  coffee = await seedSubscribable(server.store)
  tea = await seedSubscribable(server.store, { prices: { USD: '1.20' }, discount: 2500 })
  hidden = await seedSubscribable(server.store, { subscribable: false })
})
after(() => server.close())

async function withItem(quantity = 2): Promise<{ sub: any; item: any }> {
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: coffee, quantity }] })
  return { sub, item: sub.line_items[0] }
}

async function refusedWithout(change: () => Promise<{ status: number; body: any }>, status: number, body: unknown): Promise<void> {
  const before = await snapshot(server.store)
  const res = await change()
  assert.equal(res.status, status)
  assert.deepEqual(res.body, body)
  assert.equal(await snapshot(server.store), before)
}

describe('POST /api/v1/subscriptions/:id/line_items', () => {
  test('adds a line item: 200 with it, and the subscription shows it', async () => {
    const { sub } = await withItem()
    // C16: each line shows tea's price and discount now, and its total (quantity × 1.20 less 25 %).
    for (const [options, quantity, total] of [
      [{ json: { subscription_line_item: { subscribable_id: tea, quantity: 3 } } }, 3, '2.70'],
      [{ form: `subscription_line_item[subscribable_id]=${tea}&subscription_line_item[quantity]=4` }, 4, '3.60'],
      [{ json: { subscribable_id: String(tea), quantity: '5' } }, 5, '4.50'],
    ] as const) {
      const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, ...options })
      assert.equal(res.status, 200)
      assert.match(res.body.created_at, ISO_TIME)
      assert.deepEqual(res.body, {
        id: res.body.id, subscription_id: sub.id, subscribable_id: tea, quantity, one_time: false, price: '1.20', discount_percent: '25', total,
        created_at: res.body.created_at, updated_at: res.body.created_at,
      })
      assert.deepEqual(renderLineItem((await server.store.subscriptions.lineItemById(res.body.id))!), res.body)
    }
    const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
    assert.deepEqual(shown.body.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[coffee, 2], [tea, 3], [tea, 4], [tea, 5]])
  })

  test('quantity and subscribable_id are both required and checked; 422 creates nothing', async () => {
    const { sub } = await withItem()
    const add = (body: unknown) => () => server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, json: { subscription_line_item: body } })
    await refusedWithout(add({ subscribable_id: tea }), 422, { quantity: ['is not a number'] })
    await refusedWithout(add({ quantity: 1 }), 422, CANNOT)
    await refusedWithout(add({ subscribable_id: hidden, quantity: 1 }), 422, CANNOT)
    await refusedWithout(add({ subscribable_id: 999_999, quantity: 1 }), 422, CANNOT)
    await refusedWithout(add({ subscribable_id: tea, quantity: 0 }), 422, { quantity: ['must be greater than 0'] })
    await refusedWithout(add({ subscribable_id: tea, quantity: 10_000 }), 422, { quantity: ['must be less than or equal to 9999'] })
    await refusedWithout(add({ subscribable_id: tea, quantity: 1.5 }), 422, { quantity: ['must be an integer'] })
    await refusedWithout(add({ subscribable_id: 'tea', quantity: 'one' }), 422, { quantity: ['is not a number'], ...CANNOT })
  })

  test('another user\'s subscription is 401, a missing one 404; nothing is created', async () => {
    const { sub } = await withItem()
    const body = { json: { subscription_line_item: { subscribable_id: tea, quantity: 1 } } }
    await refusedWithout(() => server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: bob.key, ...body }), 401, NOT_AUTHORIZED)
    await refusedWithout(() => server.request('POST', '/api/v1/subscriptions/999999/line_items', { key: alice.key, ...body }), 404, NOT_FOUND)
  })
})

describe('GET /api/v1/line_items/:id', () => {
  test('the owner reads it; another user gets 401; a missing one is 404', async () => {
    const { item } = await withItem()
    const mine = await server.request('GET', `/api/v1/line_items/${item.id}`, { key: alice.key })
    assert.deepEqual([mine.status, mine.body], [200, item])
    const theirs = await server.request('GET', `/api/v1/line_items/${item.id}`, { key: bob.key })
    assert.deepEqual([theirs.status, theirs.body], [401, NOT_AUTHORIZED])
    const none = await server.request('GET', '/api/v1/line_items/999999', { key: alice.key })
    assert.deepEqual([none.status, none.body], [404, NOT_FOUND])
  })
})

describe('PATCH /api/v1/line_items/:id', () => {
  test('quantity is stored, from JSON, a form, or an integer string; the bounds 1 and 9999 are accepted', async () => {
    const { item } = await withItem()
    for (const [options, quantity] of [
      [{ json: { subscription_line_item: { quantity: 9999 } } }, 9999],
      [{ form: 'subscription_line_item[quantity]=1' }, 1],
      [{ json: { subscription_line_item: { quantity: '12' } } }, 12],
      [{ form: 'subscription_line_item%5Bquantity%5D=13' }, 13],
    ] as const) {
      const res = await server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: alice.key, ...options })
      assert.equal(res.status, 200)
      assert.deepEqual(res.body, { ...item, quantity, updated_at: res.body.updated_at })
      assert.equal((await server.store.subscriptions.lineItemById(item.id))?.quantity, quantity)
    }
  })

  test('subscribable_id swaps the item for another subscribable one', async () => {
    const { item } = await withItem()
    const res = await server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: alice.key, json: { subscription_line_item: { subscribable_id: tea, quantity: 6 } } })
    assert.equal(res.status, 200)
    // The line now shows tea's price and discount (C16): 6 × 1.20 less 25 %.
    assert.deepEqual(res.body, { ...item, subscribable_id: tea, quantity: 6, price: '1.20', discount_percent: '25', total: '5.40', updated_at: res.body.updated_at })
    const stored = await server.store.subscriptions.lineItemById(item.id)
    assert.deepEqual([stored?.subscribable_id, stored?.quantity], [tea, 6])
  })

  test('invalid values: 422 and nothing changes', async () => {
    const { item } = await withItem()
    const patch = (body: unknown) => () => server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: alice.key, json: { subscription_line_item: body } })
    await refusedWithout(patch({ quantity: -1 }), 422, { quantity: ['must be greater than 0'] })
    await refusedWithout(patch({ quantity: 0 }), 422, { quantity: ['must be greater than 0'] })
    await refusedWithout(patch({ quantity: 10_000 }), 422, { quantity: ['must be less than or equal to 9999'] })
    await refusedWithout(patch({ quantity: '3.5' }), 422, { quantity: ['must be an integer'] })
    await refusedWithout(patch({ quantity: 'many' }), 422, { quantity: ['is not a number'] })
    await refusedWithout(patch({ quantity: null }), 422, { quantity: ['is not a number'] })
    await refusedWithout(patch({ quantity: '' }), 422, { quantity: ['is not a number'] })
    await refusedWithout(patch({ subscribable_id: hidden }), 422, CANNOT)
    await refusedWithout(patch({ subscribable_id: 999_999, quantity: 2 }), 422, CANNOT)
    await refusedWithout(() => server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: alice.key, form: 'subscription_line_item[quantity]=-1' }), 422, { quantity: ['must be greater than 0'] })
  })

  test('a body with nothing to change answers the item as it is and writes nothing', async () => {
    const { item } = await withItem(3)
    await refusedWithout(() => server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: alice.key, json: { subscription_line_item: { quantity: 3, note: 'x' } } }), 200, item)
  })

  test('another user: 401; a missing item: 404; nothing changes', async () => {
    const { item } = await withItem()
    await refusedWithout(() => server.request('PATCH', `/api/v1/line_items/${item.id}`, { key: bob.key, json: { subscription_line_item: { quantity: 5 } } }), 401, NOT_AUTHORIZED)
    await refusedWithout(() => server.request('PATCH', '/api/v1/line_items/999999', { key: alice.key, json: { subscription_line_item: { quantity: 5 } } }), 404, NOT_FOUND)
  })
})

describe('DELETE /api/v1/line_items/:id', () => {
  test('200 with the removed item; it is gone; a second delete is 404', async () => {
    const { sub, item } = await withItem()
    const res = await server.request('DELETE', `/api/v1/line_items/${item.id}`, { key: alice.key })
    assert.deepEqual([res.status, res.body], [200, item])
    assert.deepEqual(await server.store.subscriptions.lineItems(sub.id), [])
    const again = await server.request('DELETE', `/api/v1/line_items/${item.id}`, { key: alice.key })
    assert.deepEqual([again.status, again.body], [404, NOT_FOUND])
  })

  test('the id of a deleted item is never given to a new one', async () => {
    const { sub, item } = await withItem()
    assert.equal((await server.request('DELETE', `/api/v1/line_items/${item.id}`, { key: alice.key })).status, 200)
    const added = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, json: { subscription_line_item: { subscribable_id: tea, quantity: 1 } } })
    assert.equal(added.status, 200)
    assert.ok(added.body.id > item.id, `${added.body.id} reuses ${item.id}`)
    const gone = await server.request('GET', `/api/v1/line_items/${item.id}`, { key: alice.key })
    assert.deepEqual([gone.status, gone.body], [404, NOT_FOUND])
  })

  test('another user: 401 and the item stays', async () => {
    const { item } = await withItem()
    await refusedWithout(() => server.request('DELETE', `/api/v1/line_items/${item.id}`, { key: bob.key }), 401, NOT_AUTHORIZED)
    assert.deepEqual(renderLineItem((await server.store.subscriptions.lineItemById(item.id))!), item)
  })
})
