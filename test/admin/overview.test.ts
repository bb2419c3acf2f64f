/**
 * GET /admin/api/v1/overview (issue 19, docs/console.md): the staff dashboard's counts and its two
 * 90-day series, checked to the number against seeded data: which subscriptions count as due
 * (acting, with a line item, paused ones with a resume date), the edges of both windows, local
 * days in REPLENISH_TIME_ZONE, and webhook deliveries that need a look.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import type { SubscriptionPatch } from '../../src/domain/types.ts'
import { processAsOf } from '../processing/helpers.ts'
import { addDays, dateIn } from '../../src/domain/dates.ts'
import { STEP_IDS } from '../../src/admin/overview.ts'

const A = '/admin/api/v1'
const TODAY = '2026-01-15'

async function overview(server: TestServer, key = ADMIN_TOKEN): Promise<any> {
  const res = await server.request('GET', `${A}/overview`, { key })
  assert.equal(res.status, 200, res.text)
  return res.body
}

/** Days of a series that are not zero, as `{date: count}` (or the given field). */
function nonZero(series: any[], field = 'count'): Record<string, number> {
  return Object.fromEntries(series.filter((d) => d[field] > 0).map((d) => [d.date, d[field]]))
}

/** Straight into the store, as the processor or an import would (states the customer API cannot reach). */
async function force(server: TestServer, id: number, patch: SubscriptionPatch): Promise<void> {
  await server.store.write(async (tx) => void (await tx.subscriptions.update((await tx.subscriptions.lock(id))!, patch)))
}

/** An installment attempt recorded as if at `at`. */
async function attempt(server: TestServer, installmentId: number, result: string, at: string): Promise<void> {
  await server.store.write(async (tx) => void (await tx.installments.addAttempt(installmentId, result, null, null, at)))
}

test('overview: subscriptions by state, due today, overdue and the next 90 days of deliveries', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const line = { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] }
  const make = async (date: string, withItem = true) => (await createSubscription(server, alice.key, { actionable_date: date, ...(withItem ? line : {}) })).id as number
  const act = (id: number, action: string, json?: unknown) =>
    server.request('POST', `/api/v1/subscriptions/${id}/${action}`, { key: alice.key, ...(json ? { json } : {}) })

  await make(TODAY) // due today
  await make('2026-01-20')
  await make('2026-01-20')
  await make('2026-01-20', false) // nothing to deliver: makes no installment, not counted
  const pausedWithDate = await make('2026-01-22')
  assert.equal((await act(pausedWithDate, 'pause', { subscription: { actionable_date: '2026-02-01' } })).status, 200)
  const pausedForever = await make('2026-01-23')
  assert.equal((await act(pausedForever, 'pause')).status, 200)
  const pending = await make('2026-01-25') // 30 days' notice: pending_cancellation, still delivers on the 25th
  assert.equal((await act(pending, 'cancel')).body.state, 'pending_cancellation')
  const canceled = await make('2026-01-26')
  assert.equal((await server.request('POST', `${A}/subscriptions/${canceled}/cancel`, { key: ADMIN_TOKEN })).body.state, 'canceled')
  await make(addDays(TODAY, 89)) // the last day of the window
  await make(addDays(TODAY, 90)) // the day after it
  // Overdue (the processor has not run) and inactive ones cannot be made through the API today.
  const overdue1 = await make('2026-01-16')
  const overdue2 = await make('2026-01-17')
  const inactive = await make('2026-01-18')
  await force(server, overdue1, { actionable_date: '2026-01-10' })
  await force(server, overdue2, { actionable_date: '2026-01-12' })
  // Left with its date (an import may bring one): not acting, so not due all the same.
  await force(server, inactive, { state: 'inactive' })

  const body = await overview(server)
  assert.equal(body.today, TODAY)
  assert.deepEqual(body.subscriptions, { by_state: { active: 10, pending_cancellation: 1, canceled: 1, inactive: 1 }, paused: 2 })
  assert.equal(body.due_today, 1)
  assert.deepEqual(body.overdue, { count: 2, oldest_date: '2026-01-10' })
  assert.equal(body.deliveries_due.length, 90)
  assert.deepEqual(body.deliveries_due[0], { date: TODAY, count: 1 })
  assert.deepEqual(body.deliveries_due[89], { date: '2026-04-14', count: 1 })
  assert.deepEqual(nonZero(body.deliveries_due), { [TODAY]: 1, '2026-01-20': 2, '2026-01-25': 1, '2026-02-01': 1, '2026-04-14': 1 })
  // Every day is there, in order, zeros included.
  assert.deepEqual(body.deliveries_due.map((d: any) => d.date), Array.from({ length: 90 }, (_, i) => addDays(TODAY, i)))

  // The processor catches up: nothing is overdue any more, today's and the overdue ones moved on.
  await processAsOf(server, TODAY)
  const after = await overview(server)
  assert.deepEqual(after.overdue, { count: 0, oldest_date: null })
  assert.equal(after.due_today, 0)
  assert.deepEqual(after.installments, { pending: 3, retrying: 0, fulfilled: 0, abandoned: 0 })
})

test('overview: installments by state and outcomes per day over the last 90 days', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  for (let i = 0; i < 4; i++) await createSubscription(server, alice.key, { actionable_date: TODAY, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server, TODAY)
  const ids = (await server.request('GET', `${A}/installments`, { key: ADMIN_TOKEN })).body.installments.map((i: any) => i.id) as number[]
  assert.equal(ids.length, 4)
  // Outcomes recorded long ago, each with its own time (ids in time order, as the service makes
  // them): the window's first day, the day before it, and one on each edge of a UTC midnight.
  const realToday = dateIn('UTC', new Date())
  const firstDay = addDays(realToday, -89)
  await attempt(server, ids[0] as number, 'failed', `${addDays(firstDay, -1)}T23:59:59.999Z`)
  await attempt(server, ids[0] as number, 'payment_failed', `${firstDay}T00:00:00.000Z`)
  await attempt(server, ids[0] as number, 'out_of_stock', `${addDays(realToday, -10)}T12:00:00.000Z`)
  await attempt(server, ids[1] as number, 'out_of_stock', `${addDays(realToday, -10)}T23:00:00.000Z`)
  // Through the API: recorded now, on today's real date.
  const outcome = (id: number, result: string) =>
    server.request('POST', `${A}/installments/${id}/outcome`, { key: ADMIN_TOKEN, json: { outcome: { result, order_reference: `R${id}` } } })
  assert.equal((await outcome(ids[2] as number, 'fulfilled')).status, 200)
  assert.equal((await outcome(ids[3] as number, 'failed')).status, 200)

  const body = await overview(server)
  assert.deepEqual(body.installments, { pending: 2, retrying: 1, fulfilled: 1, abandoned: 0 })
  const series = body.installment_outcomes
  assert.equal(series.length, 90)
  assert.equal(series[0].date, firstDay)
  assert.equal(series[89].date, realToday)
  assert.deepEqual(series[0], { date: firstDay, fulfilled: 0, failed: 0, payment_failed: 1, out_of_stock: 0 })
  assert.deepEqual(series[79], { date: addDays(realToday, -10), fulfilled: 0, failed: 0, payment_failed: 0, out_of_stock: 2 })
  assert.deepEqual(series[89], { date: realToday, fulfilled: 1, failed: 1, payment_failed: 0, out_of_stock: 0 })
  const total = series.reduce((n: number, d: any) => n + d.fulfilled + d.failed + d.payment_failed + d.out_of_stock, 0)
  assert.equal(total, 5, 'the attempt before the window is not counted')
})

test('overview: outcomes fall on their local day in REPLENISH_TIME_ZONE', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TIME_ZONE: 'America/New_York' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  await createSubscription(server, alice.key, { actionable_date: dateIn('America/New_York', new Date()), line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server)
  const id = (await server.request('GET', `${A}/installments`, { key: ADMIN_TOKEN })).body.installments[0].id as number
  const localToday = dateIn('America/New_York', new Date())
  const day = addDays(localToday, -20)
  const next = addDays(day, 1)
  // New York is 4 or 5 hours behind UTC (the zone decides which on that day): a minute before and
  // a minute after its midnight, both the same UTC date.
  const offsetHours = Number(new Intl.DateTimeFormat('en-US', { timeZone: 'America/New_York', timeZoneName: 'shortOffset' })
    .formatToParts(new Date(`${next}T12:00:00Z`)).find((p) => p.type === 'timeZoneName')?.value.replace('GMT', '') ?? '0')
  const beforeMidnight = new Date(Date.parse(`${next}T00:00:00Z`) - offsetHours * 3_600_000 - 60_000).toISOString()
  const afterMidnight = new Date(Date.parse(`${next}T00:00:00Z`) - offsetHours * 3_600_000 + 60_000).toISOString()
  await attempt(server, id, 'failed', beforeMidnight)
  await attempt(server, id, 'fulfilled', afterMidnight)
  const series = (await overview(server)).installment_outcomes
  assert.equal(series[89].date, localToday)
  assert.deepEqual(nonZero(series, 'failed'), { [day]: 1 })
  assert.deepEqual(nonZero(series, 'fulfilled'), { [next]: 1 })
})

test('overview: webhook deliveries retrying after a failure, and failed in the last 30 days', async (t) => {
  const server = await startTestServer(t)
  const res = await server.request('POST', `${A}/webhook_endpoints`, { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: 'http://127.0.0.1:9/hook', events: ['*'] } } })
  assert.equal(res.status, 201)
  const endpoint = res.body.id as number
  const day = 86_400_000
  const now = Date.now()
  // In the order the outbox makes them (ids follow creation time).
  const rows: [state: string, attempts: number, createdMs: number][] = [
    ['failed', 6, now - 31 * day], // failed, but made before the 30 days
    ['failed', 6, now - 29 * day],
    ['delivered', 1, now - 20 * day],
    ['failed', 6, now - 5 * day],
    ['pending', 0, now - 60_000], // not tried yet: not failing
    ['pending', 2, now - 30_000], // failed twice, retrying
    ['canceled', 1, now - 20_000],
    ['failed', 6, now - 40 * day], // made out of order (a clock set back): its time decides, not its id
  ]
  for (const [state, attempts, created] of rows) {
    // States and times the outbox and the dispatcher reach only over days: straight into the table.
    await testSql(server.store).run(`INSERT INTO webhook_deliveries (endpoint_id, event_id, event_type, state, attempt_count, due_ms, created_ms, updated_ms)
      VALUES (?, 1, 'subscription.created', ?, ?, ?, ?, ?)`, endpoint, state, attempts, state === 'pending' ? now : null, created, created)
  }
  assert.deepEqual((await overview(server)).webhook_deliveries, { retrying: 1, failed_last_30_days: 2 })
})

test('overview: an empty shop answers zeros; a read token may look, a metrics token may not', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const token = async (scope: string) =>
    (await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN, json: { admin_token: { scope } } })).body.token as string
  const body = await overview(server, await token('read'))
  assert.deepEqual(
    { ...body, deliveries_due: nonZero(body.deliveries_due), installment_outcomes: nonZero(body.installment_outcomes, 'fulfilled') },
    {
      today: TODAY,
      subscriptions: { by_state: { active: 0, pending_cancellation: 0, canceled: 0, inactive: 0 }, paused: 0 },
      due_today: 0,
      overdue: { count: 0, oldest_date: null },
      installments: { pending: 0, retrying: 0, fulfilled: 0, abandoned: 0 },
      webhook_deliveries: { retrying: 0, failed_last_30_days: 0 },
      deliveries_due: {},
      installment_outcomes: {},
    },
  )
  const metrics = await server.request('GET', `${A}/overview`, { key: await token('metrics') })
  assert.deepEqual([metrics.status, metrics.body], [403, { error: "This token's scope does not allow this request." }])
  const none = await server.request('GET', `${A}/overview`)
  assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an admin token.' }])
})

test('overview store: each timestamp takes the offset of its segment (a change to summer time)', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  await createSubscription(server, alice.key, { actionable_date: TODAY, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server, TODAY)
  const id = (await server.request('GET', `${A}/installments`, { key: ADMIN_TOKEN })).body.installments[0].id as number
  // New York on 2026-03-08: UTC-5 until 07:00Z, UTC-4 after.
  const segments = [{ from: '2026-03-01T00:00:00.000Z', offset_minutes: -300 }, { from: '2026-03-08T07:00:00.000Z', offset_minutes: -240 }]
  for (const [result, at] of [
    ['failed', '2026-03-08T04:30:00.000Z'], // 23:30 on the 7th
    ['fulfilled', '2026-03-09T04:30:00.000Z'], // 00:30 on the 9th at -4 h (it would be the 8th at -5 h)
    ['out_of_stock', '2026-03-08T06:59:00.000Z'], // 01:59 on the 8th, the last minute of winter time
  ]) await attempt(server, id, result as string, at as string)
  const tally = async (fromIso: string) => {
    const range = await server.store.overview.attemptIds(fromIso)
    return server.store.overview.tallyOutcomes(range.after, range.upto, segments, '2026-03-31T00:00:00.000Z')
  }
  assert.deepEqual((await tally('2026-03-01T00:00:00.000Z')).sort((a, b) => (a.date < b.date ? -1 : 1)), [
    { date: '2026-03-07', fulfilled: 0, failed: 1, payment_failed: 0, out_of_stock: 0 },
    { date: '2026-03-08', fulfilled: 0, failed: 0, payment_failed: 0, out_of_stock: 1 },
    { date: '2026-03-09', fulfilled: 1, failed: 0, payment_failed: 0, out_of_stock: 0 },
  ])
  // From a later instant, the earlier attempts are not read (ids follow time: found by bisection).
  assert.deepEqual((await tally('2026-03-08T05:00:00.000Z')).map((d) => d.date).sort(), ['2026-03-08', '2026-03-09'])
})

test('overview: tables larger than one step are read whole, step after step', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const n = STEP_IDS + 3
  const now = new Date().toISOString()
  const recorded = `${addDays(dateIn('UTC', new Date()), -1)}T12:00:00.000Z`
  // Tens of thousands of rows, one statement for each table (unit by unit through the store: minutes).
  await testSql(server.store).exec(`
    INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'bulk@example.com', '${now}', '${now}');
    INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES (1, 'BULK-1', 'Bulk item', true, '${now}', '${now}');
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
      SELECT 1, 'active', false, 1, 'month', '2026-01-16', 16, 'USD', '${TODAY}', '${now}', '${now}' FROM k;
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at) SELECT id, 1, 1, '${now}', '${now}' FROM subscriptions;
    INSERT INTO installments (subscription_id, due_date, state, line_items, currency, created_at, updated_at) VALUES (1, '${TODAY}', 'pending', '[]', 'USD', '${now}', '${now}');
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO installment_attempts (installment_id, result, created_at) SELECT 1, 'out_of_stock', '${recorded}' FROM k
  `)
  const body = await overview(server)
  assert.equal(body.subscriptions.by_state.active, n)
  assert.deepEqual(nonZero(body.deliveries_due), { '2026-01-16': n })
  assert.deepEqual(nonZero(body.installment_outcomes, 'out_of_stock'), { [recorded.slice(0, 10)]: n })
})

test('overview: `paused` counts active subscriptions only; a paused one whose cancellation is pending is not (issue 28)', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const make = async () => (await createSubscription(server, alice.key, { actionable_date: '2026-01-20', line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })).id as number
  const act = (id: number, action: string, json?: unknown) =>
    server.request('POST', `/api/v1/subscriptions/${id}/${action}`, { key: alice.key, ...(json ? { json } : {}) })
  await make()
  const paused = await make()
  assert.equal((await act(paused, 'pause', { subscription: { actionable_date: '2026-01-24' } })).status, 200)
  const pausedThenPending = await make()
  assert.equal((await act(pausedThenPending, 'pause', { subscription: { actionable_date: '2026-01-24' } })).status, 200)
  // 30 days' notice before the 24th: the cancellation waits, and the flag stays as it was.
  const pending = await act(pausedThenPending, 'cancel')
  assert.deepEqual([pending.body.state, pending.body.paused], ['pending_cancellation', true])
  // The dashboard's "Active" is active − paused: 2 − 1 running, not 2 − 2.
  assert.deepEqual((await overview(server)).subscriptions, { by_state: { active: 2, pending_cancellation: 1, canceled: 0, inactive: 0 }, paused: 1 })
})
