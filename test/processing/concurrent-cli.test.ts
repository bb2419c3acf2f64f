import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { assertExactlyOnePerSubscription, processAsOf, seedDueSubscriptions } from './helpers.ts'

/**
 * `replenish process` beside `serve` on one file (issue 15, item 6): the run and a client's
 * writes take turns at SQLite's write lock; every request is answered, every write lands, and the
 * run makes exactly one installment per due subscription.
 */
test('a process run beside a server: a client alternating GET and PATCH throughout gets 200s, its writes land, the run is exactly once', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-01' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { actionable_date: '2026-06-01', line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const lineItem = sub.line_items[0].id as number
  await seedDueSubscriptions(server.store, 4000, '2026-01-10')

  let running = true
  const statuses: number[] = []
  let quantity = 1
  const client = (async () => {
    for (let n = 0; running || n < 4; n++) {
      const res = n % 2 === 0
        ? await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
        : await server.request('PATCH', `/api/v1/line_items/${lineItem}`, { key: alice.key, json: { subscription_line_item: { quantity: ++quantity } } })
      statuses.push(res.status)
    }
  })()
  const run = await processAsOf(server, '2026-01-15').finally(() => {
    running = false
  })
  await client
  assert.match(run.out.at(-1) ?? '', /^processed 4000 subscriptions as of 2026-01-15 /)
  assert.deepEqual(statuses.filter((s) => s !== 200), [])
  assert.equal((await server.store.subscriptions.lineItemById(lineItem))?.quantity, quantity)
  await assertExactlyOnePerSubscription(server.store, 4000)
})
