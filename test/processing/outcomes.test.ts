import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { admin, eventTypes, installmentsOf, processAsOf } from './helpers.ts'
import { serviceClock } from '../../src/clock.ts'

/** C9's outcomes through POST /admin/api/v1/installments/:id/outcome, with the stored state and events checked. */
const TODAY = '2026-01-15'
const HOUR = 3_600_000

async function setup(t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { actionable_date: TODAY, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server, TODAY)
  const first = (await installmentsOf(server.store, sub.id))[0]
  assert.ok(first)
  const outcome = (id: number, body: unknown, headers?: Record<string, string>) =>
    server.request('POST', `/admin/api/v1/installments/${id}/outcome`, { key: ADMIN_TOKEN, json: body, ...(headers ? { headers } : {}) })
  const show = async (): Promise<any> => (await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })).body
  return { server, alice, sub, installmentId: first.id, outcome, show }
}

/** The service clock the server's handlers read, moved to another day (at the real time of day). */
function moveServerTo(server: TestServer, date: string): void {
  Object.assign(server.app, { clock: serviceClock('UTC', date) })
}

async function lastEvents(server: TestServer, subscriptionId: number, n: number) {
  return (await server.store.events.ofSubscription(subscriptionId, 0, n)).reverse()
}

test('fulfilled: 200 with the installment, the attempt kept, processing_state success, one event; an identical repeat changes nothing', async (t) => {
  const { server, sub, installmentId, outcome, show } = await setup(t)
  const res = await outcome(installmentId, { outcome: { result: 'fulfilled', order_reference: 'R-100' } })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.state, 'fulfilled')
  assert.equal(res.body.retry_at, null)
  assert.equal(res.body.attempts.length, 1)
  assert.deepEqual(res.body.attempts[0], { result: 'fulfilled', order_reference: 'R-100', message: null, created_at: res.body.attempts[0].created_at })
  assert.match(res.body.attempts[0].created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
  assert.deepEqual((await admin(server, 'GET', `/installments/${installmentId}`)).body, res.body)
  assert.equal((await show()).processing_state, 'success')
  const [event] = await lastEvents(server, sub.id, 1)
  assert.deepEqual([event?.type, event?.data], ['installment.fulfilled', { object: res.body }])

  const before = await snapshot(server.store)
  const again = await outcome(installmentId, { outcome: { result: 'fulfilled', order_reference: 'R-100', message: 'resent' } })
  assert.equal(again.status, 200)
  assert.deepEqual(again.body, res.body)
  assert.equal(await snapshot(server.store), before)

  for (const other of [{ result: 'fulfilled', order_reference: 'R-101' }, { result: 'fulfilled' }, { result: 'failed' }]) {
    const refused = await outcome(installmentId, { outcome: other })
    assert.equal(refused.status, 422)
    assert.deepEqual(refused.body, { state: ['cannot record an outcome for an installment which is fulfilled'] })
  }
  assert.equal(await snapshot(server.store), before)
})

test('a failure: retrying, retry_at = service now + the reprocessing interval, failed + retry_scheduled; the retry comes due on a later run', async (t) => {
  const { server, sub, installmentId, outcome, show } = await setup(t, { REPLENISH_REPROCESSING_INTERVAL_HOURS: '6' })
  const serviceNow = () => Date.parse(`${TODAY}T${new Date().toISOString().slice(11)}`)
  const from = serviceNow()
  const res = await outcome(installmentId, { outcome: { result: 'payment_failed', message: 'card declined' } })
  const to = serviceNow()
  assert.equal(res.status, 200, res.text)
  assert.equal(res.body.state, 'retrying')
  const retryAt = Date.parse(res.body.retry_at)
  assert.ok(retryAt >= from + 6 * HOUR && retryAt <= to + 6 * HOUR, `retry_at ${res.body.retry_at} is six service hours on`)
  assert.deepEqual(res.body.attempts.map((a: any) => [a.result, a.order_reference, a.message]), [['payment_failed', null, 'card declined']])
  assert.equal((await show()).processing_state, 'failed')
  assert.deepEqual((await lastEvents(server, sub.id, 2)).map((e) => [e.type, e.data]), [
    ['installment.failed', { object: res.body }],
    ['installment.retry_scheduled', { object: res.body }],
  ])

  // Not due yet on the same day (six hours on, before midnight only if now is before 18:00 UTC).
  if (to + 6 * HOUR < Date.parse(`${TODAY}T23:59:59.999Z`)) {
    await processAsOf(server, TODAY)
    assert.equal((await admin(server, 'GET', `/installments/${installmentId}`)).body.state, 'retrying')
  }
  const run = await processAsOf(server, '2026-01-16')
  assert.match(run.out.at(-1) ?? '', /1 retry due, 0 abandoned$/)
  const due = (await admin(server, 'GET', `/installments/${installmentId}`)).body
  assert.deepEqual([due.state, due.retry_at], ['pending', null])
  assert.equal((await show()).processing_state, 'pending')
  const [event] = await lastEvents(server, sub.id, 1)
  assert.deepEqual([event?.type, event?.data], ['installment.retry_due', { object: due }])

  // The same failure again after retry_due is a new attempt, not a replay.
  const second = await outcome(installmentId, { outcome: { result: 'payment_failed', message: 'card declined' } })
  assert.equal(second.status, 200)
  assert.equal(second.body.state, 'retrying')
  assert.equal(second.body.attempts.length, 2)
  // ... and the identical repeat of that one is a replay.
  const before = await snapshot(server.store)
  const replay = await outcome(installmentId, { outcome: { result: 'payment_failed' } })
  assert.deepEqual([replay.status, replay.body], [200, second.body])
  assert.equal(await snapshot(server.store), before)
})

test('after REPLENISH_MAX_REPROCESSING_DAYS since the first failure, a further failure abandons it and cancels the subscription', async (t) => {
  const { server, sub, installmentId, outcome, show } = await setup(t, { REPLENISH_MAX_REPROCESSING_DAYS: '2' })
  // A second, newer installment is open too: the cancel abandons it with the failing one.
  await processAsOf(server, '2026-02-15')
  const newer = (await installmentsOf(server.store, sub.id))[1]
  assert.ok(newer)
  assert.equal((await outcome(installmentId, { outcome: { result: 'failed' } })).body.state, 'retrying')
  moveServerTo(server, '2026-01-16')
  assert.equal((await outcome(installmentId, { outcome: { result: 'out_of_stock', message: 'gone' } })).body.state, 'retrying')
  moveServerTo(server, '2026-01-17') // two days after the first failure
  const res = await outcome(installmentId, { outcome: { result: 'failed', message: 'again' } })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual([res.body.state, res.body.retry_at], ['abandoned', null])
  assert.deepEqual(res.body.attempts.map((a: any) => a.result), ['failed', 'out_of_stock', 'failed'])
  const after = await show()
  assert.deepEqual([after.state, after.actionable_date, after.processing_state], ['canceled', null, 'failed'])
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.state), ['abandoned', 'abandoned'])
  assert.deepEqual((await lastEvents(server, sub.id, 3)).map((e) => [e.type, (e.data.object as any).id]), [
    ['installment.abandoned', installmentId],
    ['installment.abandoned', newer.id],
    ['subscription.canceled', sub.id],
  ])
  assert.deepEqual((await lastEvents(server, sub.id, 1))[0]?.data, { object: after })
  // Closed now: a further outcome is refused; the identical repeat of the last one is not.
  assert.deepEqual((await outcome(installmentId, { outcome: { result: 'fulfilled' } })).body, { state: ['cannot record an outcome for an installment which is abandoned'] })
  assert.equal((await outcome(installmentId, { outcome: { result: 'failed' } })).status, 200)
})

test('retries stop when the subscription is canceled: open installments are abandoned at once and never come due', async (t) => {
  const { server, alice, sub, installmentId, outcome } = await setup(t)
  await processAsOf(server, '2026-02-15')
  assert.equal((await outcome(installmentId, { outcome: { result: 'payment_failed' } })).body.state, 'retrying')
  const canceled = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
  assert.equal(canceled.status, 200)
  assert.deepEqual([canceled.body.state, canceled.body.processing_state], ['canceled', 'failed'])
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => i.state), ['abandoned', 'abandoned'])
  const abandoned = (await admin(server, 'GET', `/installments/${installmentId}`)).body
  assert.deepEqual([abandoned.state, abandoned.retry_at], ['abandoned', null])
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-3), ['installment.abandoned', 'installment.abandoned', 'subscription.canceled'])
  assert.deepEqual((await server.store.events.ofSubscription(sub.id, 0, 1))[0]?.data, { object: canceled.body })

  const before = await snapshot(server.store)
  const run = await processAsOf(server, '2026-03-01')
  assert.match(run.out.at(-1) ?? '', /^processed 0 subscriptions .*0 retries due, 0 abandoned$/)
  const failedAgain = await outcome(installmentId, { outcome: { result: 'failed' } })
  assert.deepEqual([failedAgain.status, failedAgain.body], [422, { state: ['cannot record an outcome for an installment which is abandoned'] }])
  const rows = (store: string) => JSON.parse(store).filter(([name]: [string]) => ['installments', 'installment_attempts', 'subscriptions'].includes(name))
  assert.deepEqual(rows(await snapshot(server.store)), rows(before))
})

test('the last installment of a pending cancellation is not retried: a failure abandons it', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_CANCELLATION_NOTICE_DAYS: '5' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { actionable_date: '2026-01-17', line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
  await processAsOf(server, '2026-01-17')
  const [last] = await installmentsOf(server.store, sub.id)
  assert.ok(last)
  const res = await admin(server, 'POST', `/installments/${last.id}/outcome`, { outcome: { result: 'payment_failed' } })
  assert.deepEqual([res.status, res.body.state, res.body.retry_at], [200, 'abandoned', null])
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-1), ['installment.abandoned'])
})

test('processing_state follows the last installment, not an older one', async (t) => {
  const { server, installmentId, sub, outcome, show } = await setup(t)
  await processAsOf(server, '2026-02-15')
  const newer = (await installmentsOf(server.store, sub.id))[1]
  assert.ok(newer)
  await outcome(installmentId, { outcome: { result: 'failed' } })
  assert.equal((await show()).processing_state, 'pending')
  await outcome(newer.id, { outcome: { result: 'fulfilled', order_reference: 'R-2' } })
  assert.equal((await show()).processing_state, 'success')
  await outcome(installmentId, { outcome: { result: 'fulfilled', order_reference: 'R-1' } })
  assert.equal((await show()).processing_state, 'success')
})

test('outcome requests: result not in the list, missing root, unknown id, no token, customer key, form body, Idempotency-Key', async (t) => {
  const { server, alice, installmentId, outcome } = await setup(t)
  const before = await snapshot(server.store)
  const bad = await outcome(installmentId, { outcome: { result: 'shipped' } })
  assert.deepEqual([bad.status, bad.body], [422, { result: ['is not included in the list'] }])
  const translated = await outcome(installmentId, { outcome: { result: 'shipped' } }, { 'accept-language': 'es' })
  assert.deepEqual(translated.body, { result: ['no está incluido en la lista'] })
  const missing = await outcome(installmentId, { outcome: 'fulfilled' })
  const text = 'param is missing or the value is empty: outcome'
  assert.deepEqual([missing.status, missing.body], [422, { error: text, exception: text, missing_param: 'outcome' }])
  assert.deepEqual((await outcome(999_999, { outcome: { result: 'fulfilled' } })).body, { error: 'The resource you were looking for could not be found.' })
  const anonymous = await server.request('POST', `/admin/api/v1/installments/${installmentId}/outcome`, { json: { outcome: { result: 'fulfilled' } } })
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an admin token.' }])
  const customer = await server.request('POST', `/admin/api/v1/installments/${installmentId}/outcome`, { key: alice.key, json: { outcome: { result: 'fulfilled' } } })
  assert.deepEqual([customer.status, customer.body], [401, { error: 'Invalid admin token.' }])
  assert.equal(await snapshot(server.store), before)

  const headers = { 'idempotency-key': 'outcome-1' }
  const form = await server.request('POST', `/admin/api/v1/installments/${installmentId}/outcome`, {
    key: ADMIN_TOKEN, form: 'outcome[result]=failed&outcome[message]=timeout', headers,
  })
  assert.deepEqual([form.status, form.body.state, form.body.attempts.length], [200, 'retrying', 1])
  const replayed = await server.request('POST', `/admin/api/v1/installments/${installmentId}/outcome`, {
    key: ADMIN_TOKEN, form: 'outcome[result]=failed&outcome[message]=timeout', headers,
  })
  assert.deepEqual([replayed.status, replayed.body], [200, form.body])
  assert.equal(replayed.headers.get('idempotent-replayed'), 'true')
})

test('a pending cancellation completed by the processor ends older open deliveries and keeps the last one it owes', async (t) => {
  const { server, alice, sub, installmentId, outcome, show } = await setup(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '40' })
  assert.equal((await outcome(installmentId, { outcome: { result: 'payment_failed' } })).body.state, 'retrying')
  const pending = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
  assert.equal(pending.body.state, 'pending_cancellation')
  assert.equal((await installmentsOf(server.store, sub.id))[0]?.state, 'retrying', 'not canceled yet: its retries go on')
  const run = await processAsOf(server, '2026-02-15')
  assert.match(run.out.at(-1) ?? '', /^processed 1 subscription .*: 1 installment made, 0 ended, 1 canceled, 0 resumed; 0 retries due, 1 abandoned$/)
  assert.deepEqual((await installmentsOf(server.store, sub.id)).map((i) => [i.due_date, i.state]), [['2026-01-15', 'abandoned'], ['2026-02-15', 'pending']])
  const after = await show()
  assert.deepEqual([after.state, after.processing_state], ['canceled', 'pending'])
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-3), ['installment.created', 'installment.abandoned', 'subscription.canceled'])
})

test('a retry never comes due for a subscription that is canceled, however it got there', async (t) => {
  const { server, sub, installmentId, outcome } = await setup(t)
  assert.equal((await outcome(installmentId, { outcome: { result: 'failed' } })).body.state, 'retrying')
  // Canceled behind the API's back (an operator's SQL, a restore): the processor still refuses to retry.
  await server.store.write(async (tx) => tx.subscriptions.update((await tx.subscriptions.lock(sub.id))!, { state: 'canceled', actionable_date: null }))
  const run = await processAsOf(server, '2026-01-20')
  assert.match(run.out.at(-1) ?? '', /0 retries due, 1 abandoned$/)
  const inst = (await admin(server, 'GET', `/installments/${installmentId}`)).body
  assert.deepEqual([inst.state, inst.retry_at], ['abandoned', null])
  assert.deepEqual((await eventTypes(server.store, sub.id)).slice(-1), ['installment.abandoned'])
})
