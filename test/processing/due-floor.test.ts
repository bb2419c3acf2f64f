import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { dueWalk } from '../../src/processing/batch.ts'
import { serviceClock } from '../../src/clock.ts'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { openTestStore } from '../helpers/store.ts'
import { testSql } from '../helpers/rows.ts'
import { installmentsOf, processAsOf, seedDueSubscriptions } from './helpers.ts'

// Migration 4 (issue 6): the processor's index holds each subscription at `due_floor`, a date
// never after its actionable_date, so that a skip (the date moves forward) writes no index page.
// What must hold: nothing due is ever missed, nothing not due is processed, the floors a skip
// left behind are lifted by the next run, and /metrics' oldest overdue date stays exact.

const TODAY = '2026-01-15'
const plus = (date: string, days: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10)

/** A store of its own, removed after the test. */
async function tempStore(t: import('node:test').TestContext): Promise<Store> {
  return (await openTestStore(t, { synchronous: 'NORMAL' })).store
}

/** Subscriptions whose floor is not at their date (skipped since their floor was last set). */
const trailingFloors = async (store: Store): Promise<number> =>
  Number((await testSql(store).get('SELECT count(*) AS n FROM subscriptions WHERE due_floor IS DISTINCT FROM actionable_date'))?.['n'])

async function setup(t: import('node:test').TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const weekly = (actionableDate: string): Promise<any> => createSubscription(server, alice.key, {
    interval_units: 'week', actionable_date: actionableDate, line_items_attributes: [{ subscribable_id: item, quantity: 1 }],
  })
  const skip = async (id: number): Promise<any> => {
    const r = await server.request('POST', `/api/v1/subscriptions/${id}/skip`, { key: alice.key })
    assert.equal(r.status, 200)
    return r.body
  }
  const floorOf = async (id: number): Promise<string | null> =>
    (await testSql(server.store).get('SELECT due_floor FROM subscriptions WHERE id = ?', id))?.['due_floor'] as string | null
  return { server, alice, weekly, skip, floorOf }
}

test('a skip moves the date and leaves the floor; a run processes nothing that was skipped past its day, then lifts the floor', async (t) => {
  const { server, weekly, skip, floorOf } = await setup(t)
  const sub = await weekly(plus(TODAY, 1))
  assert.equal(await floorOf(sub.id), plus(TODAY, 1))
  await skip(sub.id)
  assert.equal((await skip(sub.id)).actionable_date, plus(TODAY, 15))
  assert.equal(await floorOf(sub.id), plus(TODAY, 1), 'a skip writes no index entry')

  const day = plus(TODAY, 8) // past the floor, before the date
  // Counted from the index alone: the trailing floor counts until a run lifts it (the run, walking
  // the index, lifts it first and counts again, so its total is exact).
  assert.equal(await server.store.installments.countDue(day), 1)
  assert.match((await processAsOf(server, day)).out.join('\n'), /examined 0 due/)
  assert.deepEqual(await installmentsOf(server.store, sub.id), [])
  assert.equal(await floorOf(sub.id), plus(TODAY, 15), 'the run lifted the floor to the date')
  assert.equal(await server.store.installments.countDue(day), 0)

  await processAsOf(server, plus(TODAY, 15))
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), [plus(TODAY, 15)])
  assert.equal(await floorOf(sub.id), plus(TODAY, 22), 'processing moves the floor with the date')
})

test('a subscription skipped but still due is processed once, for its own date', async (t) => {
  const { server, weekly, skip, floorOf } = await setup(t)
  const sub = await weekly(plus(TODAY, 1))
  await skip(sub.id) // now due TODAY+8, floor still TODAY+1
  await processAsOf(server, plus(TODAY, 10))
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), [plus(TODAY, 8)])
  assert.equal(await floorOf(sub.id), plus(TODAY, 15))
  await processAsOf(server, plus(TODAY, 11))
  assert.equal((await installmentsOf(server.store, sub.id)).length, 1)
})

test('a date moved before the floor, by any write, lowers the floor: the subscription is processed on that date', async (t) => {
  const { server, alice, weekly, floorOf } = await setup(t)
  const sub = await weekly(plus(TODAY, 14))
  const r = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { actionable_date: plus(TODAY, 3) } } })
  assert.equal(r.status, 200)
  assert.equal(await floorOf(sub.id), plus(TODAY, 3))
  await processAsOf(server, plus(TODAY, 3))
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), [plus(TODAY, 3)])

  // Pause to a later date, then resume at once (tomorrow): the floor follows the date down again.
  const other = await weekly(plus(TODAY, 2))
  await server.request('POST', `/api/v1/subscriptions/${other.id}/pause`, { key: alice.key, json: { subscription: { actionable_date: plus(TODAY, 30) } } })
  assert.equal(await floorOf(other.id), plus(TODAY, 2))
  const resumed = await server.request('POST', `/api/v1/subscriptions/${other.id}/resume`, { key: alice.key })
  assert.equal(resumed.body.actionable_date, plus(TODAY, 1))
  assert.equal(await floorOf(other.id), plus(TODAY, 1))
})

test('the oldest overdue date reads dates, not floors, and skips subscriptions with nothing to deliver; the due count reads the floors', async (t) => {
  const { server, alice, weekly, skip } = await setup(t)
  // Due before every other, first in the index, but with no line item: not what /metrics reports.
  const empty = await weekly(plus(TODAY, 1))
  const gone = await server.request('DELETE', `/api/v1/line_items/${empty.line_items[0].id}`, { key: alice.key })
  assert.equal(gone.status, 200)
  const skipped = await weekly(plus(TODAY, 1))
  await skip(skipped.id)
  await skip(skipped.id) // date TODAY+15, floor TODAY+1: first in the index
  await weekly(plus(TODAY, 7))
  const past = await weekly(plus(TODAY, 2))
  for (let i = 0; i < 3; i++) await skip(past.id) // date TODAY+23: not due on TODAY+20
  const day = plus(TODAY, 20)
  assert.equal(await server.store.installments.oldestDue(day), plus(TODAY, 7))
  // The index alone: the one without line items is due all the same, and the one skipped past the
  // day counts while its floor trails (a run lifts it before it counts: the next test).
  assert.equal(await server.store.installments.countDue(day), 4)
  assert.equal(await server.store.installments.oldestDue(plus(TODAY, 6)), null)
})

test('a run whose walk steps over floors that trail their dates processes exactly the due subscriptions, batch after batch', async (t) => {
  const store = await tempStore(t)
  const DUE = '2026-03-01'
  await seedDueSubscriptions(store, 60, DUE)
  const sql = testSql(store)
  // Every third one skipped past the run's day the way a skip writes it (the date alone), every
  // fifth one skipped but still due on it.
  await sql.exec(`UPDATE subscriptions SET actionable_date = '2026-04-01' WHERE id % 3 = 0;
    UPDATE subscriptions SET actionable_date = '2026-03-08' WHERE id % 5 = 0 AND id % 3 <> 0`)
  const day = '2026-03-10'
  const expected = (await sql.all(`SELECT id, actionable_date FROM subscriptions WHERE actionable_date <= ? ORDER BY id`, day))
    .map((r) => `${r['id']}:${r['actionable_date']}`)
  assert.equal(expected.length, 40)
  assert.equal(await store.installments.countDue(day), 60, 'the index alone: floors that trail count until lifted')
  // The walk itself, before any floor is lifted: its cursor is (floor, id), not (date, id).
  const walk = await dueWalk(store, day, 40, 7)
  const walked: string[] = []
  while (!walk.done) {
    const step = await store.write((tx) => walk.read(tx, 7))
    walk.advance(step.next)
    walked.push(...step.rows.map((r) => `${r.id}:${r.actionable_date}`))
  }
  assert.deepEqual(walked.sort((a, b) => parseInt(a) - parseInt(b)), expected)
  const run = await runProcessor(store, { clock: serviceClock('UTC', day), batchSize: 7 })
  assert.deepEqual([run.completed, run.installments, run.total], [true, 40, 40], 'the run lifts the floors, then counts exactly')
  assert.equal(await store.installments.countDue(day), 0, 'every floor lifted or moved on')
  const made = (await sql.all('SELECT subscription_id, due_date FROM installments ORDER BY subscription_id'))
    .map((r) => `${r['subscription_id']}:${r['due_date']}`)
  assert.deepEqual(made, expected)
  assert.equal(await trailingFloors(store), 0, 'every floor lifted or moved with its date')
})

test('a run that walks by id processes the due rows whatever their floors, and leaves the lifting to the next run', async (t) => {
  const store = await tempStore(t)
  await seedDueSubscriptions(store, 45, '2026-03-01')
  await testSql(store).run(`UPDATE subscriptions SET actionable_date = '2026-04-01' WHERE id % 3 = 0`) // 15 skipped past the day
  const day = '2026-03-10'
  // 30 due in batches of 2: more than ten batches, so the walk goes by id.
  const big = await runProcessor(store, { clock: serviceClock('UTC', day), batchSize: 2 })
  assert.deepEqual([big.completed, big.installments], [true, 30])
  assert.equal(await trailingFloors(store), 15, 'an id walk reads no floor and lifts none')
  const next = await runProcessor(store, { clock: serviceClock('UTC', day), batchSize: 2 })
  assert.deepEqual([next.completed, next.installments], [true, 0])
  assert.equal(await trailingFloors(store), 0, 'the next run, through the index, lifted them')
})

test('the floor never passes the date, whatever statement writes either', async (t) => {
  const sql = testSql(await tempStore(t))
  const now = '2026-01-01T00:00:00.000Z'
  await sql.run(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'floor@example.com', '${now}', '${now}')`)
  const insert = (id: number, date: string | null, dueFloor: string | null) =>
    sql.run(`INSERT INTO subscriptions (id, user_id, state, interval_length, interval_units, actionable_date, currency,
      created_on, created_at, updated_at, due_floor) VALUES (?, 1, 'active', 1, 'week', ?, 'USD', '2026-01-01', '${now}', '${now}', ?)`, id, date, dueFloor)
  const floor = async (id: number): Promise<unknown> => (await sql.get('SELECT due_floor FROM subscriptions WHERE id = ?', id))?.['due_floor']
  const set = async (id: number, assignments: string): Promise<void> => void (await sql.run(`UPDATE subscriptions SET ${assignments} WHERE id = ?`, id))

  await insert(1, '2026-02-01', null)
  assert.equal(await floor(1), '2026-02-01', 'an insert without a floor gets the date')
  await insert(2, '2026-02-01', '2026-03-01')
  assert.equal(await floor(2), '2026-02-01', 'an insert with a later floor gets the date')
  await insert(3, '2026-02-01', '2026-01-20')
  assert.equal(await floor(3), '2026-01-20', 'an earlier floor stays')
  await insert(4, null, null)
  assert.equal(await floor(4), null, 'no date, no floor')

  await set(1, "actionable_date = '2026-02-15'")
  assert.equal(await floor(1), '2026-02-01', 'a later date leaves the floor')
  await set(1, "actionable_date = '2026-01-25'")
  assert.equal(await floor(1), '2026-01-25', 'an earlier date lowers it')
  await set(1, "due_floor = '2026-05-01'")
  assert.equal(await floor(1), '2026-01-25', 'a floor set past the date comes back to it')
  await set(4, "actionable_date = '2026-06-01'")
  assert.equal(await floor(4), '2026-06-01', 'a date where there was none sets it')
  await set(4, 'actionable_date = NULL')
  assert.equal(await floor(4), '2026-06-01', 'clearing the date leaves the floor (the next run lifts it)')
})
