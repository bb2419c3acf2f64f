/**
 * PostgreSQL's lock wait: a request whose unit waits 5 s (lock_timeout) for a row another
 * transaction holds answers 503 with Retry-After: 1 and the body every 503 has, and is logged
 * with its request id; nothing of it is committed, its pooled connection goes on serving, and the
 * same request sent again once the other transaction is over succeeds. (SQLite's lock wait:
 * lock-wait.test.ts.)
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ON_POSTGRES, postgresOf } from '../helpers/store.ts'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

test('a PATCH that waits 5 s for a row another transaction holds is a 503 with Retry-After: 1; sent again after, it succeeds', { timeout: 30_000 }, async (t) => {
  const server = await startTestServer(t)
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const lineItem = sub.line_items[0].id as number
  const patch = (quantity: number) =>
    server.request('PATCH', `/api/v1/line_items/${lineItem}`, { key: alice.key, json: { subscription_line_item: { quantity } } })

  // A client of the server's own pool, handed back before the server closes it.
  const other = await postgresOf(server.store).pool.connect()
  let waited
  const loggedBefore = server.errors.length
  try {
    await other.query('BEGIN')
    await other.query('SELECT id FROM line_items WHERE id = $1 FOR UPDATE', [lineItem])
    waited = await patch(5)
    await other.query('COMMIT')
  } finally {
    other.release()
  }
  assert.equal(waited.status, 503, waited.text)
  assert.equal(waited.headers.get('retry-after'), '1')
  assert.deepEqual(waited.body, { error: 'Internal server error', request_id: waited.headers.get('x-request-id') })
  const logged = server.errors.slice(loggedBefore) as Record<string, unknown>[]
  assert.deepEqual(logged.map((e) => [e['request_id'], e['message']]), [
    [waited.headers.get('x-request-id'), 'a lock another transaction held was waited on for 5 s (lock_timeout); answered 503 with Retry-After: 1'],
  ])

  const read = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.equal(read.body.line_items[0].quantity, 1, 'nothing of the refused PATCH was committed')
  const again = await patch(5)
  assert.deepEqual([again.status, again.body.quantity], [200, 5])
  assert.equal((await server.request('GET', '/readyz')).status, 200)
})
