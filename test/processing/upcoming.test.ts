/**
 * C17's upcoming deliveries: `subscription.upcoming` once per (subscription, actionable_date) when
 * that date is at most REPLENISH_UPCOMING_DAYS away and the subscription will act on it, written by
 * the processor (`replenish process` and serve's schedule); a date that moves and comes within
 * the window again gets its own event.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../helpers/wait.ts'
import { createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { admin, eventTypes, processAsOf } from './helpers.ts'
import { upcomingDate } from '../../src/domain/upcoming.ts'
import { processingSchedule } from '../../src/processing/schedule.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { addDays } from '../../src/domain/dates.ts'

const TODAY = '2026-03-10'

async function setup(t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const make = (attrs: Record<string, unknown> = {}): Promise<any> =>
    createSubscription(server, alice.key, { interval_units: 'week', line_items_attributes: [{ subscribable_id: item, quantity: 1 }], ...attrs })
  return { server, alice, item, make }
}

/** The dates each subscription was told of, oldest first, from its events' objects. */
async function toldOf(server: TestServer, id: number): Promise<string[]> {
  const events = await server.store.events.ofSubscription(id, 0, 1000)
  return events.filter((e) => e.type === 'subscription.upcoming').map((e) => (e.data.object as { actionable_date: string }).actionable_date).reverse()
}

test('the rule: acting, with an item, dated after today and at most the window away, not past its end date, not told of that date yet', () => {
  const s = { state: 'active' as const, actionable_date: '2026-03-13', end_date: null, has_items: true, upcoming_for: null }
  const horizon = '2026-03-13'
  assert.equal(upcomingDate(s, TODAY, horizon), '2026-03-13')
  assert.equal(upcomingDate({ ...s, state: 'pending_cancellation' }, TODAY, horizon), '2026-03-13', 'the last delivery of a pending cancellation comes')
  for (const [why, over] of [
    ['canceled', { state: 'canceled' }], ['inactive', { state: 'inactive' }], ['no date (paused for good)', { actionable_date: null }],
    ['past the window', { actionable_date: '2026-03-14' }], ['today: this run makes it', { actionable_date: TODAY }],
    ['past its end date', { end_date: '2026-03-12' }], ['no item', { has_items: false }], ['told already', { upcoming_for: '2026-03-13' }],
  ] as const) {
    assert.equal(upcomingDate({ ...s, ...over }, TODAY, horizon), undefined, why)
  }
  assert.equal(upcomingDate({ ...s, end_date: '2026-03-13', upcoming_for: '2026-03-06' }, TODAY, horizon), '2026-03-13', 'on its end date, and after another date was told')
})

test('replenish process writes one event per subscription due within 3 days (the default), with the subscription; a second run writes none', async (t) => {
  const { server, make } = await setup(t)
  const inOne = await make({ actionable_date: addDays(TODAY, 1) })
  const inThree = await make({ actionable_date: addDays(TODAY, 3) })
  const inFour = await make({ actionable_date: addDays(TODAY, 4) })
  const { out } = await processAsOf(server, TODAY)
  assert.match(out.at(-1) ?? '', /; 2 upcoming deliveries announced$/)
  assert.deepEqual(await toldOf(server, inOne.id), [addDays(TODAY, 1)])
  assert.deepEqual(await toldOf(server, inThree.id), [addDays(TODAY, 3)])
  assert.deepEqual(await toldOf(server, inFour.id), [])
  const [event] = (await admin(server, 'GET', '/events?type=subscription.upcoming&limit=1')).body.events
  assert.deepEqual(event.data.object, (await admin(server, 'GET', `/subscriptions/${inOne.id}`)).body, 'the subscription as it stands')
  assert.equal(event.subscription_id, inOne.id)
  await processAsOf(server, TODAY)
  await processAsOf(server, addDays(TODAY, 1)) // inOne is made then; inFour comes within the window
  assert.deepEqual(await toldOf(server, inThree.id), [addDays(TODAY, 3)], 'once per date, run after run')
  assert.deepEqual(await toldOf(server, inFour.id), [addDays(TODAY, 4)])
  // inOne's next date (a week on) is a new date: told of when it comes within the window.
  await processAsOf(server, addDays(TODAY, 5))
  assert.deepEqual(await toldOf(server, inOne.id), [addDays(TODAY, 1), addDays(TODAY, 8)])
  assert.deepEqual((await eventTypes(server.store, inOne.id)).slice(-3), ['subscription.upcoming', 'installment.created', 'subscription.upcoming'])
})

test('a subscription the run moves into the window is told of its new date by the same run, once, after its installment, without the one-time line it delivered', async (t) => {
  const { server, alice, item, make } = await setup(t)
  // Every two days: today's delivery moves it to TODAY + 2, inside the window.
  const daily = await make({ interval_units: 'day', interval_length: 2, actionable_date: TODAY })
  const once = await server.request('POST', `/api/v1/subscriptions/${daily.id}/line_items`, { key: alice.key, json: { subscription_line_item: { subscribable_id: item, quantity: 5, one_time: true } } })
  assert.equal(once.status, 200, once.text)
  const other = await make({ interval_units: 'day', interval_length: 2, actionable_date: TODAY })
  // Units of one subscription: each is told in its own unit, not all in the run's last phase.
  const run = await runProcessor(server.store, { clock: serviceClock('UTC', TODAY), batchSize: 1, upcomingDays: 3 })
  assert.deepEqual([run.installments, run.upcoming], [2, 2])
  const feed = (await admin(server, 'GET', '/events?limit=100')).body.events.filter((e: { type: string }) => e.type !== 'subscription.created' && e.type !== 'line_item.created')
  assert.deepEqual(feed.map((e: { type: string; subscription_id: number }) => `${e.subscription_id} ${e.type}`), [
    `${daily.id} installment.created`, `${daily.id} line_item.deleted`, `${daily.id} subscription.upcoming`,
    `${other.id} installment.created`, `${other.id} subscription.upcoming`,
  ])
  assert.deepEqual(await toldOf(server, daily.id), [addDays(TODAY, 2)])
  assert.deepEqual((await eventTypes(server.store, daily.id)).slice(-3), ['installment.created', 'line_item.deleted', 'subscription.upcoming'])
  const [event] = (await admin(server, 'GET', '/events?type=subscription.upcoming&limit=1')).body.events
  assert.deepEqual(event.data.object, (await admin(server, 'GET', `/subscriptions/${daily.id}`)).body, 'the subscription as the run left it')
  assert.deepEqual(event.data.object.line_items.map((li: { one_time: boolean }) => li.one_time), [false])
  await processAsOf(server, TODAY)
  await processAsOf(server, addDays(TODAY, 1))
  assert.deepEqual(await toldOf(server, daily.id), [addDays(TODAY, 2)], 'and not again by a later run')
})

test('a date that moves (a skip, an update) and comes within the window again gets its own event, even back to one told of before (the customer heard of the other since)', async (t) => {
  const { server, alice, make } = await setup(t)
  const sub = await make({ actionable_date: addDays(TODAY, 2) })
  await processAsOf(server, TODAY)
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })
  await processAsOf(server, TODAY)
  assert.deepEqual(await toldOf(server, sub.id), [addDays(TODAY, 2)], 'a week away now: nothing yet')
  await processAsOf(server, addDays(TODAY, 7))
  assert.deepEqual(await toldOf(server, sub.id), [addDays(TODAY, 2), addDays(TODAY, 9)])
  await admin(server, 'PATCH', `/subscriptions/${sub.id}`, { subscription: { actionable_date: addDays(TODAY, 8) } })
  await processAsOf(server, addDays(TODAY, 7))
  await admin(server, 'PATCH', `/subscriptions/${sub.id}`, { subscription: { actionable_date: addDays(TODAY, 9) } })
  await processAsOf(server, addDays(TODAY, 7))
  await processAsOf(server, addDays(TODAY, 8))
  assert.deepEqual(await toldOf(server, sub.id), [addDays(TODAY, 2), addDays(TODAY, 9), addDays(TODAY, 8), addDays(TODAY, 9)])
})

test('only subscriptions that will act on the date: a paused one on its resume date, not one paused for good, canceled, empty, or ending before it', async (t) => {
  const { server, alice, make } = await setup(t)
  const resuming = await make({ actionable_date: addDays(TODAY, 20) })
  await server.request('POST', `/api/v1/subscriptions/${resuming.id}/pause`, { key: alice.key, json: { subscription: { actionable_date: addDays(TODAY, 2) } } })
  const forever = await make({ actionable_date: addDays(TODAY, 2) })
  await server.request('POST', `/api/v1/subscriptions/${forever.id}/pause`, { key: alice.key })
  const canceled = await make({ actionable_date: addDays(TODAY, 2) })
  await server.request('POST', `/api/v1/subscriptions/${canceled.id}/cancel`, { key: alice.key })
  const empty = await createSubscription(server, alice.key, { interval_units: 'week', actionable_date: addDays(TODAY, 2) })
  const ending = await make({ actionable_date: addDays(TODAY, 2) })
  await admin(server, 'PATCH', `/subscriptions/${ending.id}`, { subscription: { end_date: addDays(TODAY, 1) } })
  await processAsOf(server, TODAY)
  assert.deepEqual(await toldOf(server, resuming.id), [addDays(TODAY, 2)])
  for (const s of [forever, canceled, empty, ending]) assert.deepEqual(await toldOf(server, s.id), [], `subscription ${s.id}`)
})

test('REPLENISH_UPCOMING_DAYS sets the window; 0 writes none', async (t) => {
  const week = await setup(t, { REPLENISH_UPCOMING_DAYS: '7' })
  const inSeven = await week.make({ actionable_date: addDays(TODAY, 7) })
  await processAsOf(week.server, TODAY)
  assert.deepEqual(await toldOf(week.server, inSeven.id), [addDays(TODAY, 7)])
  const off = await setup(t, { REPLENISH_UPCOMING_DAYS: '0' })
  const tomorrow = await off.make({ actionable_date: addDays(TODAY, 1) })
  await processAsOf(off.server, TODAY)
  assert.deepEqual(await toldOf(off.server, tomorrow.id), [])
})

test('serve\'s schedule writes them too, and logs how many', async (t) => {
  const { server, make } = await setup(t)
  const sub = await make({ actionable_date: addDays(TODAY, 2) })
  const log: any[] = []
  const schedule = processingSchedule({ store: server.store, clock: serviceClock('UTC', TODAY), processEvery: 10, upcomingDays: 3, log: (e) => log.push(e) })
  schedule.start()
  await until('the run to log', () => log.length > 0)
  await schedule.stop()
  assert.equal(log[0]?.upcoming, 1)
  assert.deepEqual(await toldOf(server, sub.id), [addDays(TODAY, 2)])
})

test('the walk goes through the due index in units: many subscriptions, small batches, each told once', async (t) => {
  const { server, make } = await setup(t)
  const ids: number[] = []
  for (let i = 0; i < 30; i++) ids.push((await make({ actionable_date: addDays(TODAY, 1 + (i % 5)) })).id)
  const { runProcessor } = await import('../../src/processing/processor.ts')
  const s = await runProcessor(server.store, { clock: serviceClock('UTC', TODAY), batchSize: 4, upcomingDays: 3 })
  assert.equal(s.upcoming, ids.filter((_, i) => 1 + (i % 5) <= 3).length)
  for (const [i, id] of ids.entries()) assert.deepEqual(await toldOf(server, id), 1 + (i % 5) <= 3 ? [addDays(TODAY, 1 + (i % 5))] : [])
})
