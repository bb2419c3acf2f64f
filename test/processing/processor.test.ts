import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedPayment, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { admin, eventTypes, installmentsOf, processAsOf } from './helpers.ts'
import { processCommand } from '../../src/cli/process.ts'
import { UsageError } from '../../src/cli/commands.ts'
import { serviceClock } from '../../src/clock.ts'
import { runProcessor } from '../../src/processing/processor.ts'

/** C9 through `replenish process --as-of` on the database a real server uses; time moves with REPLENISH_TODAY and --as-of. */
const TODAY = '2026-01-15'
const ADDRESS = { firstname: 'Ada', lastname: 'Lovelace', address1: '1 Main St', city: 'London', zipcode: 'N1', country_iso: 'GB' }

async function setup(t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const make = (attrs: Record<string, unknown> = {}): Promise<any> =>
    createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 2 }], ...attrs })
  const show = async (id: number): Promise<any> => (await server.request('GET', `/api/v1/subscriptions/${id}`, { key: alice.key })).body
  return { server, alice, item, make, show }
}

/** The last day `day` can be in that month: the anchor rule of C8. */
function anchorDate(year: number, month: number, day: number): string {
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(day, last)).padStart(2, '0')}`
}

const addDay = (date: string): string => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)

test('a monthly subscription on the 31st processed daily around its dates for 24 months gets exactly 24 installments, on the anchor days', async (t) => {
  const { server, make, show } = await setup(t)
  const sub = await make({ interval_units: 'month', actionable_date: '2026-01-31' })
  const expected: string[] = []
  for (let m = 0; m < 24; m++) expected.push(anchorDate(2026 + Math.floor(m / 12), (m % 12) + 1, 31))
  for (const date of expected) {
    await processAsOf(server, date) // the due day itself
    await processAsOf(server, addDay(date)) // and the day after: nothing new
  }
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), expected)
  assert.ok(expected.includes('2026-02-28') && expected.includes('2027-02-28') && expected.includes('2026-03-31'))
  const after = await show(sub.id)
  assert.equal(after.actionable_date, '2028-01-31')
  assert.equal(after.state, 'active')
  assert.equal(after.processing_state, 'pending')
  assert.equal((await eventTypes(server.store, sub.id)).filter((e) => e === 'installment.created').length, 24)
})

test('three missed periods make one catch-up installment for the missed date, then the first date after today', async (t) => {
  const { server, make, show } = await setup(t)
  const sub = await make({ interval_units: 'month', actionable_date: '2026-02-10' })
  await processAsOf(server, '2026-05-25') // down since Feb 10: Feb, Mar, Apr and May 10 all passed
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), ['2026-02-10'])
  assert.equal((await show(sub.id)).actionable_date, '2026-06-10')
  await processAsOf(server, '2026-05-26')
  await processAsOf(server, '2026-06-09')
  assert.equal((await installmentsOf(server.store, sub.id)).length, 1)
  await processAsOf(server, '2026-06-10')
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), ['2026-02-10', '2026-06-10'])
})

test('running twice on the same day makes nothing twice', async (t) => {
  const { server, make } = await setup(t)
  const sub = await make({ actionable_date: '2026-01-20' })
  const first = await processAsOf(server, '2026-01-20')
  assert.match(first.out.at(-1) ?? '', /^processed 1 subscription as of 2026-01-20 in \d+\.\d s \(examined 1 due\): 1 installment made, 0 ended, 0 canceled, 0 resumed; 0 retries due, 0 abandoned$/)
  const before = await server.store.events.countOfSubscription(sub.id)
  const second = await processAsOf(server, '2026-01-20')
  assert.match(second.out.at(-1) ?? '', /^processed 0 subscriptions as of 2026-01-20 /)
  assert.equal((await installmentsOf(server.store, sub.id)).length, 1)
  assert.equal(await server.store.events.countOfSubscription(sub.id), before)
})

test('the installment is a snapshot: line items with sku, name and price (C16), addresses, payment ids, currency, totals; later changes leave it alone', async (t) => {
  const { server, alice, item, show } = await setup(t)
  const payment = await seedPayment(server.store, alice.id)
  const other = await seedSubscribable(server.store, { prices: { EUR: '3.33', USD: '3.99' } })
  await admin(server, 'PATCH', `/subscribables/${item}`, { subscribable: { prices: { EUR: '12.50' }, discount_percent: '10' } })
  const sub = await createSubscription(server, alice.key, {
    actionable_date: '2026-01-20', currency: 'EUR', payment_method_id: payment.methodId, payment_source_id: payment.sourceId,
    shipping_address_attributes: ADDRESS, billing_address_attributes: { ...ADDRESS, firstname: 'Bill' },
    line_items_attributes: [{ subscribable_id: item, quantity: 2 }, { subscribable_id: other, quantity: 5 }],
  })
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key }) // successive_skip_count 1, date Feb 20
  await processAsOf(server, '2026-02-20')
  const [made] = await installmentsOf(server.store, sub.id)
  assert.ok(made)
  const res = await admin(server, 'GET', `/installments/${made.id}`)
  assert.equal(res.status, 200)
  const sku = async (id: number) => (await server.store.catalog.findSubscribable(id))?.sku
  const expected = {
    id: made.id, subscription_id: sub.id,
    user: { id: alice.id, email: (await admin(server, 'GET', `/users/${alice.id}`)).body.email, external_id: null },
    due_date: '2026-02-20', state: 'pending', retry_at: null,
    // 2 × 12.50 less 10 % = 22.50; 5 × 3.33 = 16.65 (the catalog's EUR prices when it was made).
    line_items: [
      { subscribable_id: item, sku: await sku(item), name: 'Coffee', quantity: 2, price: '12.50', discount_percent: '10', total: '22.50' },
      { subscribable_id: other, sku: await sku(other), name: 'Coffee', quantity: 5, price: '3.33', discount_percent: '0', total: '16.65' },
    ],
    shipping_address: sub.shipping_address, billing_address: sub.billing_address,
    payment_method_id: payment.methodId, payment_source_id: payment.sourceId, currency: 'EUR',
    subtotal: '41.65', discount_total: '2.50', total: '39.15', attempts: [],
    created_at: res.body.created_at, updated_at: res.body.created_at,
  }
  assert.deepEqual(res.body, expected)
  assert.equal(res.body.shipping_address.firstname, 'Ada')
  // The event holds the same object (it is built in SQL; this pins it to the representation).
  const event = (await server.store.events.ofSubscription(sub.id, 0, 1))[0]
  assert.equal(event?.type, 'installment.created')
  assert.deepEqual(event?.data, { object: expected })
  // The subscription moved on, its successive skips reset.
  const after = await show(sub.id)
  assert.equal(after.actionable_date, '2026-03-20')
  assert.equal(after.successive_skip_count, 0)
  assert.equal(after.skip_count, 1)
  // Renaming the catalog item, changing its price or discount, or the quantity afterwards does
  // not rewrite the snapshot (C16: the amount the shop charges); the subscription follows the catalog.
  await admin(server, 'PATCH', `/subscribables/${item}`, { subscribable: { name: 'Decaf', prices: { EUR: '99.00' }, discount_percent: '0' } })
  await admin(server, 'PATCH', `/subscribables/${other}`, { subscribable: { prices: { EUR: null } } })
  await server.request('PATCH', `/api/v1/line_items/${after.line_items[0].id}`, { key: alice.key, json: { subscription_line_item: { quantity: 9 } } })
  assert.deepEqual((await admin(server, 'GET', `/installments/${made.id}`)).body, expected)
  const created = (await server.store.events.ofSubscription(sub.id, 0, 20)).find((e) => e.type === 'installment.created')
  assert.deepEqual(created?.data, { object: expected })
  const now = await show(sub.id)
  assert.deepEqual([now.line_items[0].price, now.line_items[0].total, now.line_items[1].price, now.total], ['99.00', '891.00', null, null])
})

test('a pending cancellation gets its last installment, then is canceled; the installment stays pending', async (t) => {
  const { server, alice, make, show } = await setup(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '10' })
  const sub = await make({ actionable_date: '2026-01-20' })
  const canceled = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
  assert.equal(canceled.body.state, 'pending_cancellation')
  await processAsOf(server, '2026-01-20')
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => [i.due_date, i.state]), [['2026-01-20', 'pending']])
  const after = await show(sub.id)
  assert.deepEqual([after.state, after.actionable_date, after.processing_state], ['canceled', null, 'pending'])
  assert.deepEqual(await eventTypes(server.store, sub.id), ['subscription.created', 'subscription.cancellation_pending', 'installment.created', 'subscription.canceled'])
  const event = (await server.store.events.ofSubscription(sub.id, 0, 1))[0]
  assert.deepEqual(event?.data, { object: after })
  await processAsOf(server, '2026-03-20')
  assert.equal((await installmentsOf(server.store, sub.id)).length, 1)
})

test('end date: a date equal to it still gets its installment, then the subscription is inactive', async (t) => {
  const { server, make, show } = await setup(t)
  const sub = await make({ actionable_date: '2026-02-01', end_date: '2026-02-01' })
  await processAsOf(server, '2026-02-01')
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), ['2026-02-01'])
  const after = await show(sub.id)
  assert.deepEqual([after.state, after.actionable_date], ['inactive', null])
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-2), ['installment.created', 'subscription.ended'])
  assert.deepEqual((await server.store.events.ofSubscription(sub.id, 0, 1))[0]?.data, { object: after })
})

test('end date already behind the next date: inactive without an installment, when due or once the end date has passed', async (t) => {
  const { server, make, show } = await setup(t)
  const due = await make({ actionable_date: '2026-02-20', end_date: '2026-02-10' })
  const notYet = await make({ actionable_date: '2026-03-20', end_date: '2026-02-10' })
  await processAsOf(server, '2026-02-10') // end date not passed yet: both stay
  assert.equal((await show(due.id)).state, 'active')
  assert.equal((await show(notYet.id)).state, 'active')
  await processAsOf(server, '2026-02-20')
  for (const id of [due.id, notYet.id]) {
    const after = await show(id)
    assert.deepEqual([after.state, after.actionable_date], ['inactive', null])
    assert.equal((await installmentsOf(server.store, id)).length, 0)
    assert.deepEqual(await eventTypes(server.store, id), ['subscription.created', 'subscription.ended'])
  }
})

test('a paused subscription is processed once its resume date arrives, and resumed; paused without a date, never', async (t) => {
  const { server, make, show } = await setup(t)
  const dated = await make({ actionable_date: '2026-01-20' })
  const forever = await make({ actionable_date: '2026-01-20' })
  await admin(server, 'POST', `/subscriptions/${dated.id}/pause`, { subscription: { actionable_date: '2026-02-05' } })
  await admin(server, 'POST', `/subscriptions/${forever.id}/pause`)
  await processAsOf(server, '2026-02-04')
  assert.equal((await installmentsOf(server.store, dated.id)).length, 0)
  await processAsOf(server, '2026-02-05')
  assert.deepEqual((await installmentsOf(server.store, dated.id)).map((i) => i.due_date), ['2026-02-05'])
  const after = await show(dated.id)
  assert.deepEqual([after.paused, after.actionable_date, after.state], [false, '2026-03-05', 'active'])
  // The run the day before told of the resume date (C17: a paused subscription acts on its resume date).
  assert.deepEqual((await eventTypes(server.store, dated.id)).slice(-4), ['subscription.paused', 'subscription.upcoming', 'installment.created', 'subscription.resumed'])
  await processAsOf(server, '2027-01-01')
  assert.equal((await installmentsOf(server.store, forever.id)).length, 0)
  assert.deepEqual([(await show(forever.id)).paused, (await show(forever.id)).actionable_date], [true, null])
})

test('not actionable: no line items, canceled or inactive subscriptions get nothing and do not change', async (t) => {
  const { server, alice, make, show } = await setup(t)
  const empty = await createSubscription(server, alice.key, { actionable_date: '2026-01-20' })
  const canceled = await make({ actionable_date: '2026-01-20' })
  await server.request('POST', `/api/v1/subscriptions/${canceled.id}/cancel`, { key: alice.key })
  const before = [await show(empty.id), await show(canceled.id)]
  const run = await processAsOf(server, '2026-03-01')
  assert.match(run.out.at(-1) ?? '', /^processed 0 subscriptions/)
  assert.deepEqual([await show(empty.id), await show(canceled.id)], before)
  assert.equal((await installmentsOf(server.store, empty.id)).length + (await installmentsOf(server.store, canceled.id)).length, 0)
})

test('without --as-of the run uses the service clock (REPLENISH_TODAY); a date that is not one is a usage error', async (t) => {
  const { server, make } = await setup(t)
  const today = await make({ actionable_date: TODAY })
  const tomorrow = await make({ actionable_date: '2026-01-16' })
  await processAsOf(server)
  assert.equal((await installmentsOf(server.store, today.id)).length, 1)
  assert.equal((await installmentsOf(server.store, tomorrow.id)).length, 0)
  await assert.rejects(processCommand(server.config, '2026-02-30', { out: () => {}, err: () => {} }),
    (e: unknown) => e instanceof UsageError && e.message === '--as-of: expected a real date as YYYY-MM-DD, got "2026-02-30"')
  assert.equal((await installmentsOf(server.store, tomorrow.id)).length, 0)
})

test('time zones: due "today" in Pacific/Auckland is processed once it is that date there, not by the UTC date', async (t) => {
  const { server, make } = await setup(t)
  const sub = await make({ actionable_date: '2026-03-15' })
  // 12:30 UTC on March 14 is 01:30 on March 15 in Auckland (NZDT, UTC+13).
  const instant = () => new Date('2026-03-14T12:30:00.000Z')
  const utc = await runProcessor(server.store, { clock: serviceClock('UTC', undefined, instant) })
  assert.deepEqual([utc.asOf, utc.installments], ['2026-03-14', 0])
  assert.equal((await installmentsOf(server.store, sub.id)).length, 0)
  // An hour earlier it is still the 14th in Auckland too.
  const early = await runProcessor(server.store, { clock: serviceClock('Pacific/Auckland', undefined, () => new Date('2026-03-14T10:30:00.000Z')) })
  assert.deepEqual([early.asOf, early.installments], ['2026-03-14', 0])
  const auckland = await runProcessor(server.store, { clock: serviceClock('Pacific/Auckland', undefined, instant) })
  assert.deepEqual([auckland.asOf, auckland.installments], ['2026-03-15', 1])
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.due_date), ['2026-03-15'])
})

test('progress goes to stderr as examined/total due, rate and ETA', async (t) => {
  const { server, make } = await setup(t)
  await make({ actionable_date: '2026-01-20' })
  await make({ actionable_date: '2026-01-21' })
  const run = await processAsOf(server, '2026-01-31')
  assert.equal(run.err.length >= 1, true)
  for (const line of run.err) assert.match(line, /^examined \d+\/2 due \(\d+\.\d%\), \d+\/s, ETA (\d+ s|unknown)$/)
  assert.match(run.err.at(-1) ?? '', /^examined 2\/2 due \(100\.0%\), \d+\/s, ETA 0 s$/)
})
