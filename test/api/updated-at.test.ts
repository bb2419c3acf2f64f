import { test } from 'node:test'
import assert from 'node:assert/strict'
import { setTimeout as sleep } from 'node:timers/promises'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'

// A line item is part of its subscription (C3 renders it inside), so editing one moves the
// subscription's updated_at, by the line item routes and by nested line_items_attributes alike.
test('editing a line item moves its subscription’s updated_at; a no-op edit does not', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-05-01' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const lineItemId = sub.line_items[0].id

  await sleep(5)
  const nested = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key,
    json: { subscription: { line_items_attributes: [{ id: lineItemId, quantity: 2 }] } },
  })
  assert.equal(nested.status, 200)
  assert.equal(nested.body.line_items[0].quantity, 2)
  assert.ok(nested.body.updated_at > sub.updated_at, 'nested edit moves updated_at')

  await sleep(5)
  const direct = await server.request('PATCH', `/api/v1/line_items/${lineItemId}`, { key: alice.key, json: { subscription_line_item: { quantity: 3 } } })
  assert.equal(direct.status, 200)
  const afterDirect = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.ok(afterDirect.body.updated_at > nested.body.updated_at, 'line item route moves updated_at')

  await sleep(5)
  const noop = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key,
    json: { subscription: { line_items_attributes: [{ id: lineItemId, quantity: 3 }] } },
  })
  assert.equal(noop.status, 200)
  assert.equal(noop.body.updated_at, afterDirect.body.updated_at)

  // A swap to another product, and a removal, through the line item routes move it too (each
  // touches the subscription in the statement that changes the item, where the backend can).
  const other = await seedSubscribable(server.store)
  await sleep(5)
  const swapped = await server.request('PATCH', `/api/v1/line_items/${lineItemId}`, { key: alice.key, json: { subscription_line_item: { subscribable_id: other } } })
  assert.equal(swapped.status, 200)
  const afterSwap = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.equal(afterSwap.body.line_items[0].subscribable_id, other)
  assert.ok(afterSwap.body.updated_at > afterDirect.body.updated_at, 'a swap moves updated_at')
  await sleep(5)
  assert.equal((await server.request('DELETE', `/api/v1/line_items/${lineItemId}`, { key: alice.key })).status, 200)
  const afterDelete = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.deepEqual(afterDelete.body.line_items, [])
  assert.ok(afterDelete.body.updated_at > afterSwap.body.updated_at, 'a removal moves updated_at')
})
