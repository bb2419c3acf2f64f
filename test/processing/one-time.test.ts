import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import { openTestStore } from '../helpers/store.ts'
import { admin, eventTypes, processAsOf, seedDueSubscriptions } from './helpers.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import type { Store } from '../../src/store/api.ts'

/** C17's one-time add-ons: set on add only, delivered by the next installment, which removes them. */
const TODAY = '2026-01-15'

async function setup(t: import('node:test').TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store, { prices: { USD: '12.50' } })
  const tea = await seedSubscribable(server.store, { prices: { USD: '4.00' }, discount: 2500 })
  const make = (attrs: Record<string, unknown> = {}): Promise<any> =>
    createSubscription(server, alice.key, { actionable_date: '2026-02-01', line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }], ...attrs })
  const show = async (id: number): Promise<any> => (await server.request('GET', `/api/v1/subscriptions/${id}`, { key: alice.key })).body
  const addOnce = async (subId: number, extra: Record<string, unknown> = {}): Promise<any> => {
    const res = await server.request('POST', `/api/v1/subscriptions/${subId}/line_items`, {
      key: alice.key, json: { subscription_line_item: { subscribable_id: tea, quantity: 3, one_time: true, ...extra } },
    })
    assert.equal(res.status, 200, res.text)
    return res.body
  }
  const snapshots = async (subId: number) =>
    (await server.store.installments.listOfSubscription(subId, 0, 100)).reverse().map((i) => ({ due_date: i.due_date, lines: i.line_items.map((l) => [l.subscribable_id, l.quantity, l.total]), total: i.total }))
  return { server, alice, coffee, tea, make, show, addOnce, snapshots }
}

test('one_time: shown on every line item (false by default); set on add by the customer, the admin and nested attributes; a bad value is 422', async (t) => {
  const { server, alice, coffee, tea, make, show, addOnce } = await setup(t)
  const sub = await make()
  assert.equal(sub.line_items[0].one_time, false)
  const added = await addOnce(sub.id)
  assert.equal(added.one_time, true)
  assert.deepEqual((await show(sub.id)).line_items.map((li: any) => li.one_time), [false, true])
  const form = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, {
    key: alice.key, form: `subscription_line_item[subscribable_id]=${tea}&subscription_line_item[quantity]=1&subscription_line_item[one_time]=1`,
  })
  assert.equal(form.body.one_time, true)

  const nested = await make({ line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }, { subscribable_id: tea, quantity: 1, one_time: 'true' }] })
  assert.deepEqual(nested.line_items.map((li: any) => li.one_time), [false, true])
  const patched = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key, json: { subscription: { line_items_attributes: [{ subscribable_id: coffee, quantity: 5, one_time: true }] } },
  })
  assert.equal(patched.status, 200, patched.text)
  assert.deepEqual(patched.body.line_items.map((li: any) => [li.quantity, li.one_time]), [[2, false], [3, true], [1, true], [5, true]])

  const byAdmin = await admin(server, 'POST', '/subscriptions', { subscription: { user_id: alice.id, interval_length: 1, line_items_attributes: [{ subscribable_id: tea, quantity: 1, one_time: true }] } })
  assert.equal(byAdmin.status, 201, byAdmin.text)
  assert.equal(byAdmin.body.line_items[0].one_time, true)
  const adminAdd = await admin(server, 'PATCH', `/subscriptions/${byAdmin.body.id}`, { subscription: { line_items_attributes: [{ subscribable_id: coffee, quantity: 2, one_time: false }] } })
  assert.deepEqual(adminAdd.body.line_items.map((li: any) => li.one_time), [true, false])

  const bad = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, {
    key: alice.key, json: { subscription_line_item: { subscribable_id: tea, quantity: 1, one_time: 'sometimes' } },
  })
  assert.equal(bad.status, 422)
  assert.deepEqual(bad.body, { one_time: ['is not included in the list'] })
  const badNested = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key, json: { subscription: { line_items_attributes: [{ subscribable_id: coffee, quantity: 1, one_time: 2 }] } },
  })
  assert.equal(badNested.status, 422)
  assert.deepEqual(badNested.body, { 'line_items.one_time': ['is not included in the list'] })
})

test('one_time cannot be changed on an existing line item: updates ignore it', async (t) => {
  const { server, alice, make, show, addOnce } = await setup(t)
  const sub = await make()
  const once = await addOnce(sub.id)
  const regular = sub.line_items[0]
  const patch = await server.request('PATCH', `/api/v1/line_items/${once.id}`, { key: alice.key, json: { subscription_line_item: { quantity: 4, one_time: false } } })
  assert.deepEqual([patch.status, patch.body.quantity, patch.body.one_time], [200, 4, true])
  const patchRegular = await server.request('PATCH', `/api/v1/line_items/${regular.id}`, { key: alice.key, json: { subscription_line_item: { one_time: true } } })
  assert.deepEqual([patchRegular.status, patchRegular.body.one_time], [200, false])
  const nested = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: alice.key, json: { subscription: { line_items_attributes: [{ id: regular.id, one_time: true }, { id: once.id, quantity: 6, one_time: false }] } },
  })
  assert.equal(nested.status, 200, nested.text)
  assert.deepEqual(nested.body.line_items.map((li: any) => [li.quantity, li.one_time]), [[2, false], [6, true]])
  const byAdmin = await admin(server, 'PATCH', `/subscriptions/${sub.id}`, { subscription: { line_items_attributes: [{ id: regular.id, quantity: 3, one_time: true }] } })
  assert.deepEqual(byAdmin.body.line_items.map((li: any) => [li.quantity, li.one_time]), [[3, false], [6, true]])
  assert.deepEqual((await show(sub.id)).line_items.map((li: any) => li.one_time), [false, true])
})

test('the installment that delivers a one-time line snapshots it, and the line goes with line_item.deleted (actor: the processor)', async (t) => {
  const { server, tea, make, show, addOnce, snapshots } = await setup(t)
  const sub = await make()
  const once = await addOnce(sub.id)
  const other = await make() // no one-time line: keeps its lines
  await processAsOf(server, '2026-02-01')
  // C16 on the line: 3 × 4.00 less 25 % = 9.00; with 2 × 12.50 the installment's total is 34.00.
  assert.deepEqual(await snapshots(sub.id), [{ due_date: '2026-02-01', lines: [[sub.line_items[0].subscribable_id, 2, '25.00'], [tea, 3, '9.00']], total: '34.00' }])
  const after = await show(sub.id)
  assert.deepEqual(after.line_items.map((li: any) => li.id), [sub.line_items[0].id])
  assert.equal(after.total, '25.00')
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-2), ['installment.created', 'line_item.deleted'])
  const [deleted] = await server.store.events.ofSubscription(sub.id, 0, 1)
  assert.equal(deleted?.type, 'line_item.deleted')
  assert.deepEqual(deleted?.data.object, once)
  assert.equal(deleted?.actor?.type, 'processor')
  assert.deepEqual((await show(other.id)).line_items.length, 1)
  assert.ok(!(await eventTypes(server.store, other.id)).includes('line_item.deleted'))

  await processAsOf(server, '2026-03-01') // the next delivery: the regular line only
  assert.deepEqual((await snapshots(sub.id)).map((s) => s.lines.length), [2, 1])
})

test('a skip, a pause and a missed run keep a one-time line for the delivery that does happen', async (t) => {
  const { server, alice, tea, make, show, addOnce, snapshots } = await setup(t)
  const sub = await make()
  await addOnce(sub.id)
  const skip = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })
  assert.equal(skip.body.actionable_date, '2026-03-01')
  await processAsOf(server, '2026-02-01')
  assert.deepEqual(await snapshots(sub.id), [])
  assert.equal((await show(sub.id)).line_items.length, 2)

  const pause = await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: alice.key })
  assert.equal(pause.status, 200, pause.text)
  await processAsOf(server, '2026-03-01')
  assert.deepEqual(await snapshots(sub.id), [])
  assert.equal((await show(sub.id)).line_items.length, 2)
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/resume`, { key: alice.key })).status, 200)

  // Missed runs: the catch-up installment delivers it, once.
  await processAsOf(server, '2026-05-20')
  const made = await snapshots(sub.id)
  assert.equal(made.length, 1)
  assert.deepEqual(made[0]?.lines.map((l) => l[0]), [sub.line_items[0].subscribable_id, tea])
  assert.equal((await show(sub.id)).line_items.length, 1)
})

test("serve's processor (the same SQLite connection as the body cache) drops the cached body when it removes a one-time line", async (t) => {
  const { server, make, show, addOnce } = await setup(t)
  const sub = await make()
  await addOnce(sub.id)
  assert.equal((await show(sub.id)).line_items.length, 2) // cached now
  const run = await runProcessor(server.store, { clock: serviceClock('UTC', '2026-02-01') })
  assert.equal(run.installments, 1)
  const after = await show(sub.id)
  assert.deepEqual([after.line_items.length, after.actionable_date], [1, '2026-03-01'])
})

async function oneTimeLines(store: Store): Promise<number> {
  return Number((await testSql(store).get('SELECT count(*) AS n FROM line_items WHERE one_time'))?.['n'])
}

test('the bulk path: a run over many subscriptions, a third with a one-time line, delivers and removes each once', async (t) => {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  const n = 300
  await seedDueSubscriptions(store, n, '2026-02-01')
  const now = new Date().toISOString()
  await testSql(store).exec(`INSERT INTO line_items (subscription_id, subscribable_id, quantity, one_time, created_at, updated_at)
    SELECT id, 1, 7, true, '${now}', '${now}' FROM subscriptions WHERE id % 3 = 0`)
  assert.equal(await oneTimeLines(store), n / 3)
  // Batches of 10: more than ten batches due, so the walk goes by id (the million's path).
  const run = await runProcessor(store, { clock: serviceClock('UTC', '2026-02-01'), batchSize: 10 })
  assert.deepEqual([run.completed, run.installments], [true, n])
  assert.equal(await oneTimeLines(store), 0)
  const lines = await testSql(store).all('SELECT subscription_id AS s, line_items AS k FROM installments ORDER BY subscription_id')
  assert.equal(lines.length, n)
  for (const r of lines) assert.equal((JSON.parse(r['k'] as string) as unknown[]).length, Number(r['s']) % 3 === 0 ? 2 : 1, `subscription ${r['s']}`)
  const deleted = await testSql(store).all("SELECT subscription_id AS s, actor_type AS a FROM events WHERE type = 'line_item.deleted' ORDER BY subscription_id")
  assert.equal(deleted.length, n / 3)
  assert.ok(deleted.every((r) => Number(r['s']) % 3 === 0 && r['a'] === 'processor'))
  assert.equal(Number((await testSql(store).get('SELECT count(*) AS n FROM line_items'))?.['n']), n)
})
