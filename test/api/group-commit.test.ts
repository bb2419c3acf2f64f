import { test } from 'node:test'
import assert from 'node:assert/strict'
import { countRows, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'
import { burst, closeAll, connections, type RawRequest } from '../helpers/raw-http.ts'

/**
 * Group commit over HTTP (issue 6): many clients' writes share a transaction, each in its own
 * savepoint, and no answer leaves before the COMMIT that holds its writes.
 *
 * To put a known set of requests into one batch, `burst` (helpers/raw-http.ts) writes them all
 * on already-open keep-alive connections in one synchronous loop.
 */

interface Customer {
  readonly id: number
  readonly key: string
  readonly subscriptionId: number
  readonly lineItemIds: readonly [number, number]
}

/** A commit counter, and a switch that makes the next COMMIT fail. */
function commitControl() {
  const state = { commits: 0, failNext: false, atCommit: undefined as (() => void) | undefined }
  const beforeCommit = (): void => {
    state.commits++
    state.atCommit?.()
    if (state.failNext) {
      state.failNext = false
      throw new Error('injected COMMIT failure')
    }
  }
  return { state, beforeCommit }
}

async function seedCustomers(server: TestServer, count: number): Promise<{ customers: Customer[]; items: [number, number] }> {
  const items: [number, number] = [await seedSubscribable(server.store), await seedSubscribable(server.store)]
  const users = await Promise.all(Array.from({ length: count }, () => seedUser(server.store)))
  const customers = await Promise.all(
    users.map(async (u) => {
      const sub = await createSubscription(server, u.key, {
        line_items_attributes: [{ subscribable_id: items[0], quantity: 1 }, { subscribable_id: items[1], quantity: 1 }],
      })
      return { id: u.id, key: u.key, subscriptionId: sub.id as number, lineItemIds: [sub.line_items[0].id, sub.line_items[1].id] as [number, number] }
    }),
  )
  return { customers, items }
}

const quantityOf = (server: TestServer, lineItemId: number): number | undefined =>
  (sqliteOf(server.store).db.prepare('SELECT quantity FROM line_items WHERE id = ?').get(lineItemId) as { quantity: number } | undefined)?.quantity

const eventsOf = (server: TestServer, type: string): number =>
  (sqliteOf(server.store).db.prepare('SELECT count(*) AS n FROM events WHERE type = ?').get(type) as { n: number }).n

test('200 concurrent writes from 50 clients all land', { timeout: 20_000 }, async (t) => {
  const server = await startTestServer(t)
  const { customers, items } = await seedCustomers(server, 50)
  const subscriptionsBefore = await countRows(server.store, 'subscriptions')

  const requests = customers.flatMap((c, i) => [
    server.request('PATCH', `/api/v1/line_items/${c.lineItemIds[0]}`, { key: c.key, json: { subscription_line_item: { quantity: 100 + i } } }),
    server.request('PATCH', `/api/v1/line_items/${c.lineItemIds[1]}`, { key: c.key, json: { subscription_line_item: { quantity: 200 + i } } }),
    server.request('POST', `/api/v1/subscriptions/${c.subscriptionId}/skip`, { key: c.key }),
    server.request('POST', '/api/v1/subscriptions', {
      key: c.key,
      json: { subscription: { interval_length: 2, line_items_attributes: [{ subscribable_id: items[0], quantity: 3 }, { subscribable_id: items[1], quantity: 4 }] } },
    }),
  ])
  const answers = await Promise.all(requests)
  assert.deepEqual(answers.map((a) => a.status), Array(200).fill(200))

  for (const [i, c] of customers.entries()) {
    assert.equal(quantityOf(server, c.lineItemIds[0]), 100 + i)
    assert.equal(quantityOf(server, c.lineItemIds[1]), 200 + i)
    const sub = await server.store.subscriptions.find(c.subscriptionId)
    assert.equal(sub?.skip_count, 1)
    const created = answers[i * 4 + 3]?.body
    assert.equal(created.user_id, c.id)
    assert.deepEqual((await server.store.subscriptions.lineItems(created.id)).map((li) => [li.subscribable_id, li.quantity]), [[items[0], 3], [items[1], 4]])
  }
  assert.equal(await countRows(server.store, 'subscriptions'), subscriptionsBefore + 50)
  assert.equal(eventsOf(server, 'line_item.updated'), 100)
  assert.equal(eventsOf(server, 'subscription.skipped'), 50)
  assert.equal(eventsOf(server, 'subscription.created'), 100) // 50 seeded, 50 in the burst
})

test('a request that fails after writing rolls back only its own writes; the rest of its batch commits', { timeout: 20_000 }, async (t) => {
  const control = commitControl()
  const server = await startTestServer(t, {}, { beforeCommit: control.beforeCommit })
  const { customers } = await seedCustomers(server, 40)
  const sockets = await connections(server, 40)
  t.after(() => closeAll(sockets))
  const good = customers.slice(0, 30)
  const bad = customers.slice(30)
  const commitsBefore = control.state.commits
  const updatedBefore = eventsOf(server, 'line_item.updated')

  const answers = await burst(sockets, [
    ...good.map((c) => ({ method: 'PATCH', path: `/api/v1/line_items/${c.lineItemIds[0]}`, key: c.key, json: { subscription_line_item: { quantity: 5 } } })),
    // Updates its own first line item, then names another subscription's line item: 404 (C7)
    // after the first change was written, so that change must be rolled back with its savepoint.
    ...bad.map((c, i) => ({
      method: 'PATCH',
      path: `/api/v1/subscriptions/${c.subscriptionId}`,
      key: c.key,
      json: { subscription: { line_items_attributes: [{ id: c.lineItemIds[0], quantity: 7 }, { id: good[i]?.lineItemIds[1], quantity: 9 }] } },
    })),
  ])

  assert.equal(control.state.commits, commitsBefore + 1, 'the 40 requests shared one COMMIT')
  assert.deepEqual(answers.map((a) => a.status), [...Array(30).fill(200), ...Array(10).fill(404)])
  for (const c of good) {
    assert.equal(quantityOf(server, c.lineItemIds[0]), 5)
    assert.equal(quantityOf(server, c.lineItemIds[1]), 1)
  }
  for (const c of bad) assert.equal(quantityOf(server, c.lineItemIds[0]), 1)
  assert.equal(eventsOf(server, 'line_item.updated'), updatedBefore + 30)
})

test('no answer leaves before its COMMIT: a failing COMMIT answers 500 to its whole batch and keeps nothing; the next batch works', { timeout: 20_000 }, async (t) => {
  const control = commitControl()
  const server = await startTestServer(t, {}, { beforeCommit: control.beforeCommit })
  const { customers, items } = await seedCustomers(server, 30)
  const sockets = await connections(server, 30)
  t.after(() => closeAll(sockets))
  const writes = (quantity: number): RawRequest[] =>
    customers.map((c, i) =>
      i % 3 === 0
        ? { method: 'PATCH', path: `/api/v1/line_items/${c.lineItemIds[0]}`, key: c.key, json: { subscription_line_item: { quantity } } }
        : i % 3 === 1
          ? { method: 'POST', path: `/api/v1/subscriptions/${c.subscriptionId}/skip`, key: c.key }
          : { method: 'POST', path: '/api/v1/subscriptions', key: c.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: items[0], quantity }] } } },
    )

  const before = await snapshot(server.store)
  const answered = server.log.length
  let answeredAtCommit = -1
  control.state.atCommit = () => {
    answeredAtCommit = server.log.length - answered
  }
  control.state.failNext = true
  const failed = await burst(sockets, writes(6))
  assert.equal(answeredAtCommit, 0, 'no request of the batch was answered before its COMMIT ran')
  assert.deepEqual(failed.map((a) => a.status), Array(30).fill(500))
  for (const a of failed) assert.deepEqual(Object.keys(a.body), ['error', 'request_id'])
  assert.equal(failed[0]?.body.error, 'Internal server error')
  assert.equal(server.errors.length, 30)
  assert.equal(await snapshot(server.store), before, 'nothing of the failed batch was stored')

  const commits = control.state.commits
  const worked = await burst(sockets, writes(8))
  assert.equal(control.state.commits, commits + 1)
  assert.deepEqual(worked.map((a) => a.status), Array(30).fill(200))
  for (const [i, c] of customers.entries()) {
    if (i % 3 === 0) assert.equal(quantityOf(server, c.lineItemIds[0]), 8)
    if (i % 3 === 1) assert.equal((await server.store.subscriptions.find(c.subscriptionId))?.skip_count, 1)
  }
  assert.equal(eventsOf(server, 'subscription.created'), 30 + 10)
})

test('no answer leaves before the WAL sync that makes its batch durable; a failed sync answers 500, stops writes and makes /readyz 503', { timeout: 20_000 }, async (t) => {
  // The fdatasync of the WAL (synchronous=FULL, wal-sync.ts) is held, then released or failed.
  const held: ((err: Error | null) => void)[] = []
  let hold = false
  const server = await startTestServer(t, {}, {
    syncWal: (_fd, done) => {
      if (hold) held.push(done)
      else done(null)
    },
  })
  const { customers } = await seedCustomers(server, 20)
  const sockets = await connections(server, 20)
  t.after(() => closeAll(sockets))
  const patch = (quantity: number): RawRequest[] =>
    customers.map((c) => ({ method: 'PATCH', path: `/api/v1/line_items/${c.lineItemIds[0]}`, key: c.key, json: { subscription_line_item: { quantity } } }))

  hold = true
  const answered = server.log.length
  const pending = burst(sockets, patch(6))
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  await new Promise((resolve) => setTimeout(resolve, 50))
  // Committed (the rows are there), but not yet on the disk: nobody has been answered.
  assert.equal(quantityOf(server, customers[0]!.lineItemIds[0]), 6)
  assert.equal(server.log.length, answered)
  held.shift()!(null)
  assert.deepEqual((await pending).map((a) => a.status), Array(20).fill(200))

  const failing = burst(sockets, patch(7))
  while (held.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  held.shift()!(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
  const failed = await failing
  assert.deepEqual(failed.map((a) => a.status), Array(20).fill(500))
  assert.equal(failed[0]?.body.error, 'Internal server error')
  const later = await server.request('POST', `/api/v1/subscriptions/${customers[0]!.subscriptionId}/skip`, { key: customers[0]!.key })
  assert.equal(later.status, 500)
  assert.equal((await server.store.subscriptions.find(customers[0]!.subscriptionId))?.skip_count, 0, 'the refused write never ran')
  const ready = await server.request('GET', '/readyz')
  assert.equal(ready.status, 503)
  assert.deepEqual(ready.body, { status: 'not ready', reason: 'writes are stopped until a restart: fdatasync of the WAL failed: EIO: i/o error, fdatasync' })
  // Reads still work.
  const read = await server.request('GET', `/api/v1/subscriptions/${customers[1]!.subscriptionId}`, { key: customers[1]!.key })
  assert.equal(read.status, 200)
})
