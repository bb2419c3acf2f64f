import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { burst, closeAll, connections } from '../helpers/raw-http.ts'
import { holdSubscription } from '../helpers/database.ts'
import type { Subscription } from '../../src/domain/types.ts'

/**
 * The store interface's rules (issue 16, docs/decisions.md "The store interface") as a client
 * and a caller of the store see them: a write decides from reads made inside its unit, and a read
 * outside any unit never sees a unit in progress (the read barrier).
 */
const TODAY = '2026-01-15'

/**
 * One subscription, and `clients` connections that all skip it at the same instant while another
 * process (`replenish process`) holds it (SQLite: the write lock; PostgreSQL: its row): every
 * request is handled, and its unit queued or waiting, before any unit changes it. A skip that read
 * the subscription before its unit would decide from the state all of them saw, and all but one of
 * the skips would be lost. (Without the lock, SQLite runs each request's unit before the next
 * request is read, so no read could be stale.)
 */
async function concurrentSkips(t: TestContext, clients: number, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const owner = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, owner.key, {
    interval_units: 'week', interval_length: 1, actionable_date: '2026-01-22', line_items_attributes: [{ subscribable_id: item, quantity: 1 }],
  })
  const sockets = await connections(server, clients)
  t.after(() => closeAll(sockets))
  const release = await holdSubscription(t, server, sub.id)
  const answers = burst(sockets, sockets.map(() => ({ method: 'POST', path: `/api/v1/subscriptions/${sub.id}/skip`, key: owner.key })))
  // Answered on another connection after the burst was read: every skip is now waiting for the lock.
  assert.equal((await server.request('GET', '/healthz')).status, 200)
  await release()
  return { server, sub, answers: await answers }
}

const skippedEvents = async (server: TestServer, id: number): Promise<number> =>
  (await server.store.events.ofSubscription(id, 0, 1000)).filter((e) => e.type === 'subscription.skipped').length

const weeksAfter = (date: string, weeks: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + weeks * 7 * 86_400_000).toISOString().slice(0, 10)

test('concurrent skips of one subscription from many clients each act exactly once: skip_count is the number of 200s', { timeout: 20_000 }, async (t) => {
  const { server, sub, answers } = await concurrentSkips(t, 40)
  const oks = answers.filter((a) => a.status === 200)
  assert.equal(oks.length, 40, JSON.stringify(answers.find((a) => a.status !== 200)?.body))
  const stored = await server.store.subscriptions.find(sub.id)
  // Each skip read the subscription inside its own unit, after the skips before it: none was lost.
  assert.deepEqual([stored?.skip_count, stored?.successive_skip_count, stored?.actionable_date], [oks.length, oks.length, weeksAfter('2026-01-22', oks.length)])
  assert.equal(await skippedEvents(server, sub.id), oks.length)
  // Every answer is a different step: the counts 1…40, each once.
  assert.deepEqual(oks.map((a) => a.body.skip_count as number).sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i + 1))
})

test('concurrent skips against a limit: exactly the allowed number succeed, the rest are refused (C11)', { timeout: 20_000 }, async (t) => {
  const { server, sub, answers } = await concurrentSkips(t, 20, { REPLENISH_MAX_SUCCESSIVE_SKIPS: '3' })
  const oks = answers.filter((a) => a.status === 200)
  assert.equal(oks.length, 3)
  for (const refused of answers.filter((a) => a.status !== 200)) {
    assert.deepEqual([refused.status, Object.keys(refused.body)], [422, ['successive_skip_count']])
  }
  const stored = await server.store.subscriptions.find(sub.id)
  assert.deepEqual([stored?.skip_count, stored?.successive_skip_count], [oks.length, oks.length])
  assert.equal(await skippedEvents(server, sub.id), oks.length)
})

test('a read issued while a unit is suspended between two awaits waits for it: it never sees writes the unit then rolls back', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const owner = await seedUser(server.store)
  const sub = await createSubscription(server, owner.key, { interval_length: 1 })
  const committed = await server.store.subscriptions.find(sub.id)
  const committedJson = (await server.store.subscriptions.findJson(sub.id))?.body
  let read: Promise<Subscription | undefined> | undefined
  let readJson: Promise<string | undefined> | undefined
  await assert.rejects(
    server.store.write(async (tx) => {
      await tx.subscriptions.update((await tx.subscriptions.lock(sub.id))!, { interval_length: 9 })
      // Issued, not awaited, while the unit holds its uncommitted write.
      read = server.store.subscriptions.find(sub.id)
      readJson = server.store.subscriptions.findJson(sub.id).then((found) => found?.body)
      await tx.events.record('subscription.updated', sub.id, {})
      throw new Error('the unit fails after the reads were issued')
    }),
    /the unit fails after the reads were issued/,
  )
  assert.equal(committed?.interval_length, 1)
  assert.deepEqual(await read, committed)
  assert.equal(await readJson, committedJson)
  assert.deepEqual((await server.store.events.ofSubscription(sub.id, 0, 10)).map((e) => e.type), ['subscription.created'])
})
