/**
 * C16's reports: GET /admin/api/v1/reports/recurring and /reports/monthly, exactly as the contract
 * defines them (interval factors, one exact sum rounded half-up at the end, churn as a 4-decimal
 * string or null, the 36-month cap, C13's strict parameters), for scopes admin and read.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { addMonths } from '../../src/domain/reports.ts'
import { processAsOf } from '../processing/helpers.ts'

const R = '/admin/api/v1/reports'
const get = (server: TestServer, path: string, key = ADMIN_TOKEN) => server.request('GET', `${R}${path}`, { key })
const admin = (server: TestServer, method: string, path: string, json?: unknown) =>
  server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })

test('recurring: Σ total × months per interval over active, unpaused subscriptions of the currency, exact, rounded half-up once', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-15', REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const user = await seedUser(server.store)
  const ten = await seedSubscribable(server.store, { prices: { USD: '10.00', JPY: '1' } })
  const one = await seedSubscribable(server.store, { prices: { USD: '1.00' } })
  const two = await seedSubscribable(server.store, { prices: { USD: '2.50' }, discount: 2000 }) // 2.50 less 20 % = 2.00
  const unpriced = await seedSubscribable(server.store, { prices: { EUR: '5.00' } })
  const sub = (interval_length: number, interval_units: string, subscribable_id: number, quantity = 1, currency = 'USD') =>
    createSubscription(server, user.key, { interval_length, interval_units, currency, line_items_attributes: [{ subscribable_id, quantity }] })
  await sub(1, 'month', ten) // 10.00 a month
  // Three of 10.00 every 3 months: exactly 10.00 together; each rounded alone would be 3.33, 9.99 in all.
  for (let i = 0; i < 3; i++) await sub(3, 'month', ten)
  await sub(1, 'week', one) // 1.00 × 30.4375 / 7 = 4.348214…
  await sub(10, 'day', two) // 2.00 × 30.4375 / 10 = 6.0875
  await sub(1, 'year', ten, 12) // 120.00 / 12 = 10.00
  // Canceled inside the 30 days' notice: pending_cancellation, which still acts (1.00).
  const pending = await createSubscription(server, user.key, { actionable_date: '2026-03-20', line_items_attributes: [{ subscribable_id: one, quantity: 1 }] })
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${pending.id}/cancel`, { key: user.key })).body.state, 'pending_cancellation')
  await sub(1, 'month', unpriced) // active, but no USD price: counted as unpriced, not in the value
  await createSubscription(server, user.key, { line_items_attributes: [] }) // no lines: a total of 0.00
  // Not counted: paused, canceled, inactive, another currency.
  const paused = await sub(1, 'month', ten)
  await server.request('POST', `/api/v1/subscriptions/${paused.id}/pause`, { key: user.key })
  const canceled = await sub(1, 'month', ten)
  await admin(server, 'POST', `/subscriptions/${canceled.id}/cancel`)
  await sub(1, 'month', ten, 1, 'JPY')

  const res = await get(server, '/recurring')
  assert.equal(res.status, 200, res.text)
  // 10 + 10 + 4.3482142857 + 6.0875 + 10 + 1 = 41.4357142857… → 41.44 (each rounded first: 41.43).
  assert.deepEqual(res.body, {
    currency: 'USD', as_of: res.body.as_of, active_subscriptions: 10, monthly_recurring_value: '41.44', unpriced_subscriptions: 1,
  })
  assert.match(res.body.as_of, /^2026-03-15T\d{2}:\d{2}:\d{2}\.\d{3}Z$/)
  assert.deepEqual(Object.keys(res.body), ['currency', 'as_of', 'active_subscriptions', 'monthly_recurring_value', 'unpriced_subscriptions'])

  // Half-up once at the end: ¥1 every 2 months is ¥0.5 a month, which rounds up to ¥1.
  await sub(2, 'month', ten, 1, 'JPY')
  const jpy = await get(server, '/recurring?currency=jpy')
  assert.deepEqual([jpy.body.currency, jpy.body.active_subscriptions, jpy.body.monthly_recurring_value, jpy.body.unpriced_subscriptions], ['JPY', 2, '2', 0])
  // A price change shows at once (C16: prices follow the catalog).
  await admin(server, 'PATCH', `/subscribables/${ten}`, { subscribable: { prices: { USD: '20.00' } } })
  assert.equal((await get(server, '/recurring')).body.monthly_recurring_value, '71.44')
  const none = await get(server, '/recurring?currency=CHF')
  assert.deepEqual([none.body.active_subscriptions, none.body.monthly_recurring_value, none.body.unpriced_subscriptions], [0, '0.00', 0])
})

test('recurring: the default currency is REPLENISH_CURRENCY; a bad currency is a 422 in C13 shape', async (t) => {
  const server = await startTestServer(t, { REPLENISH_CURRENCY: 'BHD' })
  const res = await get(server, '/recurring')
  assert.deepEqual([res.body.currency, res.body.monthly_recurring_value], ['BHD', '0.000'])
  for (const q of ['?currency=XYZ', '?currency=US', '?currency=dollars', '?currency=840']) {
    const bad = await get(server, `/recurring${q}`)
    assert.deepEqual([bad.status, bad.body], [422, { currency: ['is not a valid currency code'] }], q)
  }
  assert.equal((await get(server, '/recurring?currency=&unknown=1')).status, 200, 'an empty value is absent, unknown names ignored')
})

/** An import file's line (docs/import.md). */
const line = (o: object): string => JSON.stringify(o)

test('monthly: new, canceled, active at start and end, churn, installments made and fulfilled with their frozen totals', async (t) => {
  const server = await startTestServer(t)
  const M = new Date().toISOString().slice(0, 7)
  const at = (month: string, day = 15): string => `${month}-${String(day).padStart(2, '0')}T10:00:00.000Z`
  // History by import (C13 keeps every date): four USD subscriptions made 3 months ago; two canceled
  // 2 months ago, one ended (inactive) last month; one EUR.
  const user = { type: 'user', id: 70, email: 'history@example.com' }
  const history = [
    { id: 701, state: 'active', actionable_date: '2099-01-01', updated_at: at(addMonths(M, -3)) },
    { id: 702, state: 'canceled', updated_at: at(addMonths(M, -2)) },
    { id: 703, state: 'canceled', updated_at: at(addMonths(M, -2), 20) },
    { id: 704, state: 'inactive', updated_at: at(addMonths(M, -1)) },
    { id: 705, state: 'active', actionable_date: '2099-01-01', currency: 'EUR', updated_at: at(addMonths(M, -3)) },
  ].map((s) => line({ type: 'subscription', user_id: 70, interval_length: 1, currency: 'USD', created_at: at(addMonths(M, -3), 2), ...s }))
  const imported = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: [line(user), ...history].join('\n'), headers: { 'content-type': 'application/x-ndjson' } })
  assert.equal(imported.status, 200, imported.text)

  // This month, through the APIs: two new, one of them canceled; an older one made due and processed.
  const alice = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store, { prices: { USD: '12.50' }, discount: 1000 })
  const today = new Date().toISOString().slice(0, 10)
  const due = await createSubscription(server, alice.key, { actionable_date: today, line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }] })
  const gone = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
  await admin(server, 'POST', `/subscriptions/${gone.id}/cancel`)
  await processAsOf(server)
  const installment = (await admin(server, 'GET', `/installments?subscription_id=${due.id}`)).body.installments[0]
  assert.equal(installment.total, '22.50')
  // The catalog changes after the installment was made: the fulfilled total is what it froze.
  await admin(server, 'PATCH', `/subscribables/${coffee}`, { subscribable: { prices: { USD: '99.00' } } })
  assert.equal((await admin(server, 'POST', `/installments/${installment.id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R1' } })).status, 200)

  const res = await get(server, `/monthly?from=${addMonths(M, -4)}&to=${M}`)
  assert.equal(res.status, 200, res.text)
  const zero = { new_subscriptions: 0, canceled_subscriptions: 0, installments_made: 0, installments_fulfilled: 0, fulfilled_total: '0.00' }
  assert.deepEqual(res.body, {
    currency: 'USD',
    months: [
      { month: addMonths(M, -4), ...zero, active_at_start: 0, active_at_end: 0, churn_rate: null },
      { month: addMonths(M, -3), ...zero, new_subscriptions: 4, active_at_start: 0, active_at_end: 4, churn_rate: null },
      { month: addMonths(M, -2), ...zero, canceled_subscriptions: 2, active_at_start: 4, active_at_end: 2, churn_rate: '0.5000' },
      // An end (inactive) is no cancellation, but the subscription no longer acts.
      { month: addMonths(M, -1), ...zero, active_at_start: 2, active_at_end: 1, churn_rate: '0.0000' },
      {
        month: M, new_subscriptions: 2, canceled_subscriptions: 1, active_at_start: 1, active_at_end: 2, churn_rate: '1.0000',
        installments_made: 1, installments_fulfilled: 1, fulfilled_total: '22.50',
      },
    ],
  })
  const eur = await get(server, `/monthly?from=${addMonths(M, -3)}&to=${addMonths(M, -3)}&currency=eur`)
  assert.deepEqual(eur.body, { currency: 'EUR', months: [{ month: addMonths(M, -3), ...zero, fulfilled_total: '0.00', new_subscriptions: 1, active_at_start: 0, active_at_end: 1, churn_rate: null }] })
  // A month later on, the history before `from` still counts towards active at start.
  const later = await get(server, `/monthly?from=${addMonths(M, -1)}&to=${addMonths(M, 1)}`)
  assert.deepEqual(later.body.months.map((m: { active_at_start: number; active_at_end: number }) => [m.active_at_start, m.active_at_end]), [[2, 1], [1, 2], [2, 2]])
  // Default: the twelve months up to this one.
  const defaults = await get(server, '/monthly')
  assert.deepEqual(defaults.body.months.map((m: { month: string }) => m.month), Array.from({ length: 12 }, (_, i) => addMonths(M, i - 11)))
  // A read token reads the reports; a metrics token does not; none is a 401.
  const read = (await admin(server, 'POST', '/admin_tokens', { admin_token: { scope: 'read' } })).body.token
  const metrics = (await admin(server, 'POST', '/admin_tokens', { admin_token: { scope: 'metrics' } })).body.token
  assert.deepEqual((await get(server, `/monthly?from=${M}&to=${M}`, read)).body, { currency: 'USD', months: [res.body.months[4]] })
  assert.equal((await get(server, '/recurring', read)).status, 200)
  assert.deepEqual([(await get(server, '/monthly', metrics)).status, (await get(server, '/recurring', metrics)).status], [403, 403])
  const anonymous = await server.request('GET', `${R}/recurring`)
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an admin token.' }])
})

test('monthly: at most 36 months; bad parameters are 422s in C13 shape, all named at once; nothing changes', async (t) => {
  const server = await startTestServer(t)
  assert.equal((await get(server, '/monthly?from=2024-01&to=2026-12')).body.months.length, 36)
  const before = await snapshot(server.store)
  const cases: [string, Record<string, string[]>][] = [
    ['?from=2024-01&to=2027-01', { to: ['must be within 36 months of from'] }],
    ['?from=2026-05&to=2026-04', { to: ['must not be before from'] }],
    ['?from=2026-13&to=2026-12', { from: ['is not a valid month'] }],
    ['?from=2026-1&to=2026-12', { from: ['is not a valid month'] }],
    ['?from=2026-01-01', { from: ['is not a valid month'] }],
    ['?to=202612', { to: ['is not a valid month'] }],
    ['?from=2026-00', { from: ['is not a valid month'] }],
    ['?from=x&to=y&currency=ZZZ', { from: ['is not a valid month'], to: ['is not a valid month'], currency: ['is not a valid currency code'] }],
  ]
  for (const [q, errors] of cases) {
    const res = await get(server, `/monthly${q}`)
    assert.deepEqual([res.status, res.body], [422, errors], q)
  }
  const es = await server.request('GET', `${R}/monthly?from=2024-01&to=2027-01`, { key: ADMIN_TOKEN, headers: { 'Accept-Language': 'es' } })
  assert.deepEqual(es.body, { to: ['debe estar a no más de 36 meses de from'] })
  assert.equal(await snapshot(server.store), before)
})

test('monthly: every way a subscription stops or starts acting moves the counts (customer, admin, processor, erasure, activation)', async (t) => {
  const today = new Date().toISOString().slice(0, 10)
  const M = today.slice(0, 7)
  const server = await startTestServer(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const user = await seedUser(server.store)
  const other = await seedUser(server.store)
  const item = await seedSubscribable(server.store, { prices: { USD: '1.00' } })
  const make = (key: string, attrs: Record<string, unknown> = {}) => createSubscription(server, key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }], ...attrs })
  const month = async () => (await get(server, `/monthly?from=${M}&to=${M}`)).body.months[0]
  const [a, , c, d] = [await make(user.key), await make(user.key), await make(user.key, { actionable_date: today }), await make(user.key, { actionable_date: today, end_date: addDays(today, 1) })]
  await make(other.key)
  await make(other.key)
  assert.deepEqual(pick(await month()), [6, 0, 6])
  // The customer cancels (at once, no notice needed that far ahead), then reactivates: canceled once, acting again.
  await server.request('POST', `/api/v1/subscriptions/${a.id}/cancel`, { key: user.key })
  assert.deepEqual(pick(await month()), [6, 1, 5])
  await server.request('POST', `/api/v1/subscriptions/${a.id}/activate`, { key: user.key })
  assert.deepEqual(pick(await month()), [6, 1, 6])
  // Inside the notice: pending_cancellation still acts; the processor's run cancels it after its last delivery.
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${c.id}/cancel`, { key: user.key })).body.state, 'pending_cancellation')
  assert.deepEqual(pick(await month()), [6, 1, 6])
  await processAsOf(server)
  // c canceled by the processor; d's next date passes its end date: inactive (no cancellation).
  assert.deepEqual(pick(await month()), [6, 2, 4])
  // Erasure cancels the user's subscriptions.
  assert.equal((await admin(server, 'POST', `/users/${other.id}/erase`)).status, 200)
  assert.deepEqual(pick(await month()), [6, 4, 2])
  // Canceling a canceled one again changes nothing; canceling an inactive one is no churn.
  await admin(server, 'POST', `/subscriptions/${a.id}/cancel`)
  await admin(server, 'POST', `/subscriptions/${a.id}/cancel`)
  await admin(server, 'POST', `/subscriptions/${d.id}/cancel`)
  assert.deepEqual(pick(await month()), [6, 5, 1])
  assert.equal((await month()).installments_made, 2)
})

/** [new, canceled, active at end] of a month. */
const pick = (m: { new_subscriptions: number; canceled_subscriptions: number; active_at_end: number }) => [m.new_subscriptions, m.canceled_subscriptions, m.active_at_end]
const addDays = (date: string, n: number): string => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)

test('monthly: installments made count by the currency the plans carry, or by the rows when a caller gives none', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store, { prices: { USD: '1.00', EUR: '1.00' } })
  const M = new Date().toISOString().slice(0, 7)
  // Each plan is due on its subscription's date (PostgreSQL's batch makes an installment only then: a compare-and-set).
  const date = '2099-01-01'
  const subs: number[] = []
  for (const currency of ['USD', 'EUR', 'EUR']) {
    subs.push((await createSubscription(server, user.key, { currency, actionable_date: date, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })).id)
  }
  const plan = (id: number, currency?: string) => ({ subscription_id: id, due_date: date, actionable_date: date, state: 'active' as const, ...(currency ? { currency } : {}) })
  await server.store.write((tx) => tx.installments.processMany([plan(subs[0]!, 'USD'), plan(subs[1]!, 'EUR')], new Date().toISOString()))
  // Given no currencies: counted from the rows; the second plan repeats a date that has its installment, so it makes none.
  await server.store.write((tx) => tx.installments.processMany([plan(subs[2]!), plan(subs[0]!)], new Date().toISOString()))
  const made = async (currency: string) => (await get(server, `/monthly?from=${M}&to=${M}&currency=${currency}`)).body.months[0].installments_made
  assert.deepEqual([await made('USD'), await made('EUR')], [1, 2])
})
