import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer } from '../helpers/server.ts'
import { admin, processAsOf } from '../processing/helpers.ts'
import { lastAskedFirst } from '../helpers/store.ts'
import type { Store } from '../../src/store/api.ts'

/** C13's bulk outcomes: POST /admin/api/v1/installments/outcomes, each entry as C9's single outcome. */
const TODAY = '2026-01-15'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }

/** Two due subscriptions processed: installments `a` and `b`, both pending. */
async function setup(t: import('node:test').TestContext, wrapStore?: (store: Store) => Store) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY }, {}, wrapStore ? { wrapStore } : {})
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const subs = []
  for (let n = 0; n < 2; n++) {
    subs.push(await createSubscription(server, alice.key, { actionable_date: TODAY, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] }))
  }
  await processAsOf(server, TODAY)
  const all = (await admin(server, 'GET', '/installments')).body.installments as any[]
  const [a, b] = subs.map((s) => all.find((i) => i.subscription_id === s.id).id as number)
  assert.ok(a !== undefined && b !== undefined)
  const bulk = (body: unknown, headers?: Record<string, string>) =>
    server.request('POST', '/admin/api/v1/installments/outcomes', { key: ADMIN_TOKEN, json: body, ...(headers ? { headers } : {}) })
  const eventsOf = async (subscriptionId: number) => (await server.store.events.ofSubscription(subscriptionId, 0, 100)).reverse()
  return { server, subs, a, b, bulk, eventsOf }
}

test('entries apply independently and answer in request order: 200 with the installment, 404, 422; the good ones are stored with their events', async (t) => {
  const { server, subs, a, b, bulk, eventsOf } = await setup(t)
  const res = await bulk({
    outcomes: [
      { installment_id: a, result: 'fulfilled', order_reference: 'R-1' },
      { installment_id: 999999, result: 'fulfilled' },
      { installment_id: b, result: 'shipped' },
      'not an entry',
      { result: 'nope' },
      { installment_id: 'x1', result: 'failed' },
      { installment_id: String(b), result: 'payment_failed', message: 'card declined' },
    ],
  })
  assert.equal(res.status, 200, res.text)
  const [first, ...rest] = res.body.results
  assert.deepEqual(first, { installment_id: a, status: 200, installment: (await admin(server, 'GET', `/installments/${a}`)).body })
  assert.equal(first.installment.state, 'fulfilled')
  assert.deepEqual(rest.slice(0, 5), [
    { installment_id: 999999, status: 404, errors: NOT_FOUND },
    { installment_id: b, status: 422, errors: { result: ['is not included in the list'] } },
    { installment_id: null, status: 422, errors: { outcome: ['is invalid'] } },
    { installment_id: null, status: 422, errors: { installment_id: ["can't be blank"], result: ['is not included in the list'] } },
    { installment_id: 'x1', status: 422, errors: { installment_id: ['is invalid'] } },
  ])
  const last = rest[5]
  assert.deepEqual([last.installment_id, last.status, last.installment.state], [b, 200, 'retrying'])
  assert.deepEqual(last.installment.attempts.map((x: any) => [x.result, x.message]), [['payment_failed', 'card declined']])
  // The same events as the single outcome writes, each holding the installment as answered.
  assert.deepEqual((await eventsOf(subs[0].id)).slice(-1).map((e) => [e.type, e.data]), [['installment.fulfilled', { object: first.installment }]])
  assert.deepEqual((await eventsOf(subs[1].id)).slice(-2).map((e) => [e.type, e.data]), [
    ['installment.failed', { object: last.installment }],
    ['installment.retry_scheduled', { object: last.installment }],
  ])
})

test('each entry is the single outcome: an identical repeat is a no-op 200, another outcome for a fulfilled one is its 422, in the caller language', async (t) => {
  const { server, subs, a, bulk, eventsOf } = await setup(t)
  const res = await bulk({
    outcomes: [
      { installment_id: a, result: 'fulfilled', order_reference: 'R-1' },
      { installment_id: a, result: 'fulfilled', order_reference: 'R-1' },
      { installment_id: a, result: 'failed' },
    ],
  }, { 'accept-language': 'es' })
  assert.equal(res.status, 200, res.text)
  const [done, repeat, refused] = res.body.results
  assert.deepEqual(repeat, done)
  assert.equal(done.installment.attempts.length, 1)
  assert.deepEqual(refused, { installment_id: a, status: 422, errors: { state: ['no se puede registrar un resultado para una entrega en estado fulfilled'] } })
  assert.deepEqual((await eventsOf(subs[0].id)).filter((e) => e.type === 'installment.fulfilled').length, 1)
  // The single call refuses with the same body.
  const single = await server.request('POST', `/admin/api/v1/installments/${a}/outcome`, {
    key: ADMIN_TOKEN, json: { outcome: { result: 'failed' } }, headers: { 'accept-language': 'es' },
  })
  assert.deepEqual([single.status, single.body], [422, refused.errors])
})

test('issue 25: entries run in request order even on a store whose concurrent units run in any order (PostgreSQL): the later entry never goes first', async (t) => {
  // lastAskedFirst runs units asked for together last first: with the entries asked for at once,
  // the failure would be recorded (webhooks included) and the fulfilled entries refused.
  const { server, subs, a, bulk, eventsOf } = await setup(t, lastAskedFirst)
  const res = await bulk({
    outcomes: [
      { installment_id: a, result: 'fulfilled', order_reference: 'R-1' },
      { installment_id: a, result: 'fulfilled', order_reference: 'R-1' },
      { installment_id: a, result: 'failed' },
    ],
  })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.results.map((r: any) => [r.status, r.installment?.state ?? r.errors]), [
    [200, 'fulfilled'],
    [200, 'fulfilled'],
    [422, { state: ['cannot record an outcome for an installment which is fulfilled'] }],
  ])
  const stored = (await admin(server, 'GET', `/installments/${a}`)).body
  assert.deepEqual([stored.state, stored.attempts.map((x: any) => x.result)], ['fulfilled', ['fulfilled']])
  assert.deepEqual((await eventsOf(subs[0].id)).map((e) => e.type).filter((type) => type.startsWith('installment.')), ['installment.created', 'installment.fulfilled'])
})

test('the body: outcomes missing or empty is the missing parameter, not a list is invalid, more than 500 entries is too long; nothing is applied', async (t) => {
  const { server, a, bulk } = await setup(t)
  const before = await snapshot(server.store)
  const missing = { error: 'param is missing or the value is empty: outcomes', exception: 'param is missing or the value is empty: outcomes', missing_param: 'outcomes' }
  for (const body of [{}, { outcomes: [] }, { outcomes: null }, { outcome: { installment_id: a, result: 'fulfilled' } }]) {
    const res = await bulk(body)
    assert.deepEqual([res.status, res.body], [422, missing], JSON.stringify(body))
  }
  for (const outcomes of ['all', 3, { installment_id: a, result: 'fulfilled' }]) {
    const res = await bulk({ outcomes })
    assert.deepEqual([res.status, res.body], [422, { outcomes: ['is invalid'] }], JSON.stringify(outcomes))
  }
  const tooMany = Array.from({ length: 501 }, () => ({ installment_id: a, result: 'fulfilled' }))
  const res = await bulk({ outcomes: tooMany })
  assert.deepEqual([res.status, res.body], [422, { outcomes: ['is too long (maximum is 500 entries)'] }])
  assert.equal(await snapshot(server.store), before)
  // 500 is allowed: every entry answered, in order.
  const full = await bulk({ outcomes: Array.from({ length: 500 }, (_, n) => ({ installment_id: 1_000_000 + n, result: 'fulfilled' })) })
  assert.equal(full.status, 200, full.text)
  assert.deepEqual(full.body.results.map((r: any) => [r.installment_id, r.status]), Array.from({ length: 500 }, (_, n) => [1_000_000 + n, 404]))
})

test('form encoding works: outcomes[][…] and outcomes[N][…] (in index order)', async (t) => {
  const { server, a, b } = await setup(t)
  const post = (form: string) => server.request('POST', '/admin/api/v1/installments/outcomes', { key: ADMIN_TOKEN, form })
  const listed = await post(`outcomes[][installment_id]=${a}&outcomes[][result]=fulfilled&outcomes[][order_reference]=R-7`)
  assert.equal(listed.status, 200, listed.text)
  assert.deepEqual(listed.body.results.map((r: any) => [r.installment_id, r.status, r.installment.attempts[0].order_reference]), [[a, 200, 'R-7']])
  const indexed = await post(`outcomes[1][installment_id]=${a}&outcomes[1][result]=failed&outcomes[0][installment_id]=${b}&outcomes[0][result]=out_of_stock`)
  assert.equal(indexed.status, 200, indexed.text)
  assert.deepEqual(indexed.body.results.map((r: any) => [r.installment_id, r.status]), [[b, 200], [a, 422]])
  assert.equal(indexed.body.results[0].installment.state, 'retrying')
})

test('an Idempotency-Key replays the whole answer and applies nothing twice; no admin token is 401', async (t) => {
  const { server, a, b, bulk } = await setup(t)
  const body = { outcomes: [{ installment_id: a, result: 'failed' }, { installment_id: b, result: 'fulfilled', order_reference: 'R-2' }] }
  const first = await bulk(body, { 'idempotency-key': 'bulk-1' })
  assert.equal(first.status, 200, first.text)
  const stored = await snapshot(server.store)
  const again = await bulk(body, { 'idempotency-key': 'bulk-1' })
  assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body], [200, 'true', first.body])
  assert.equal(await snapshot(server.store), stored)
  const anonymous = await server.request('POST', '/admin/api/v1/installments/outcomes', { json: body })
  assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an admin token.' }])
})
