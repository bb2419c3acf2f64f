import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { seedDueSubscriptions } from '../processing/helpers.ts'
import { sqliteOf } from '../helpers/store.ts'
import { takeWriteLock } from '../helpers/database.ts'

/**
 * The server while another process holds SQLite's write lock (issue 15, item 6): it waits for the
 * lock off the event loop, so everything else is answered meanwhile, and the waiting write lands
 * once the lock is free; a write that cannot get the lock within 5 s is a 500 (C1) and /readyz
 * says why.
 */
function otherConnection(t: TestContext, file: string): DatabaseSync {
  const other = new DatabaseSync(file, { timeout: 0 })
  t.after(() => other.close())
  return other
}

async function setup(t: TestContext) {
  const server = await startTestServer(t)
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  // A few thousand more rows, as beside a processor run.
  await seedDueSubscriptions(server.store, 3000, '2026-01-01')
  const lineItem = sub.line_items[0].id as number
  const patch = (quantity: number) =>
    server.request('PATCH', `/api/v1/line_items/${lineItem}`, { key: alice.key, json: { subscription_line_item: { quantity } } })
  return { server, alice, sub, lineItem, patch }
}

test('while another process holds the write lock, /healthz and reads are answered, and a PATCH made meanwhile lands once the lock is free', async (t) => {
  const { server, alice, sub, lineItem, patch } = await setup(t)
  const other = otherConnection(t, server.config.db)
  await takeWriteLock(other)
  let settled = false
  const waiting = patch(7).finally(() => {
    settled = true
  })
  // Sent after the PATCH, on other connections: answered while it waits.
  assert.deepEqual((await server.request('GET', '/healthz')).body, { status: 'ok' })
  const read = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
  assert.equal(read.status, 200)
  assert.equal(read.body.line_items[0].quantity, 1)
  assert.equal(settled, false, 'the PATCH waits for the lock')
  other.exec('COMMIT')
  const res = await waiting
  assert.deepEqual([res.status, res.body.quantity], [200, 7])
  assert.equal((sqliteOf(server.store).db.prepare('SELECT quantity FROM line_items WHERE id = ?').get(lineItem) as { quantity: number }).quantity, 7)
})

test('a PATCH that cannot get the lock within 5 s is a 500 with the request id; /readyz is 503 until a write lands again', { timeout: 20_000 }, async (t) => {
  const { server, patch } = await setup(t)
  const other = otherConnection(t, server.config.db)
  await takeWriteLock(other)
  const failed = await patch(8)
  assert.equal(failed.status, 500)
  assert.deepEqual(failed.body, { error: 'Internal server error', request_id: failed.headers.get('x-request-id') })
  const ready = await server.request('GET', '/readyz')
  assert.deepEqual([ready.status, ready.body], [503, { status: 'not ready', reason: 'database is locked by another process' }])
  other.exec('ROLLBACK')
  assert.equal((await patch(9)).status, 200)
  assert.equal((await server.request('GET', '/readyz')).status, 200)
})
