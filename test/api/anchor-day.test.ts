import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedUser, startTestServer } from '../helpers/server.ts'

// C8: the default date counts from today, so today's day is the anchor: created on Jan 31, a
// monthly plan goes Feb 28 → Mar 31, not → Mar 28.
test('a monthly subscription created on the 31st without a date keeps the 31st as its anchor', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-31' })
  const alice = await seedUser(server.store)
  const created = await createSubscription(server, alice.key, { interval_units: 'month' })
  assert.equal(created.actionable_date, '2026-02-28')
  const skipped = await server.request('POST', `/api/v1/subscriptions/${created.id}/skip`, { key: alice.key })
  assert.equal(skipped.status, 200)
  assert.equal(skipped.body.actionable_date, '2026-03-31')
  const again = await server.request('POST', `/api/v1/subscriptions/${created.id}/skip`, { key: alice.key })
  assert.equal(again.body.actionable_date, '2026-04-30')
})
