import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'

test('a created subscription can be read back by its owner', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-31' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const created = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 2 }] })
  assert.equal(created.actionable_date, '2026-02-28')
  const shown = await server.request('GET', `/api/v1/subscriptions/${created.id}`, { key: alice.key })
  assert.equal(shown.status, 200)
  assert.deepEqual(shown.body, created)
})
