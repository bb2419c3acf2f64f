/**
 * C18 on SQLite: a dry unit leaves the body cache (body-cache.ts) exactly as it found it. It does
 * not answer from it (the cache holds what the unit is changing), does not fill it from writes that
 * are rolled back, and its triggers' drops do not empty it: after a dry run the cached bodies and
 * kept line items are the ones before, and every answer is still the database's.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'

const DRY = { 'replenish-dry-run': '1' }

test('a dry run neither reads, fills nor empties the body cache, and what it changed never shows afterwards', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-02' })
  const cache = sqliteOf(server.store)
  const alice = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }] })
  const other = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
  const lineItem = sub.line_items[0].id as number
  // A real change keeps the subscription's line items rendered; a GET caches its body.
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })).status, 200)
  const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  await server.request('GET', `/api/v1/subscriptions/${other.id}`, { key: alice.key })
  const sizes = (): [number, number] => [cache.readCacheSize(), cache.keptLineItemsSize()]
  const before = sizes()
  assert.ok(before[0] >= 2 && before[1] >= 1, `cached ${before}`)

  // The dry run answers its own change, not the kept line items.
  const dry = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key, headers: DRY, json: { subscription: { interval_length: 3, line_items_attributes: [{ id: lineItem, quantity: 7 }] } },
  })
  assert.equal(dry.status, 200, dry.text)
  assert.deepEqual([dry.body.interval_length, dry.body.line_items[0].quantity], [3, 7])
  const dryCreate = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, headers: DRY, json: { subscription: { interval_length: 1 } } })
  assert.equal(dryCreate.status, 200)
  await server.request('DELETE', `/api/v1/line_items/${other.line_items[0].id}`, { key: alice.key, headers: DRY })
  assert.deepEqual(sizes(), before, 'the cache holds what it held before the dry runs')

  // Nothing the dry runs did shows: not in a cached GET, not in the next real change's answer.
  const again = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.equal(again.text, shown.text)
  const next = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })
  assert.deepEqual([next.body.interval_length, next.body.line_items[0].quantity], [1, 2])
  const otherNow = await server.request('GET', `/api/v1/subscriptions/${other.id}`, { key: alice.key })
  assert.equal(otherNow.body.line_items.length, 1)
})
