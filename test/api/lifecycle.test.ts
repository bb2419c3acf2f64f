import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts'
import { renderSubscription } from '../../src/domain/representation.ts'
import type { SubscriptionPatch } from '../../src/domain/types.ts'
import { testSql } from '../helpers/rows.ts'

/** C8 over HTTP: set up state, act, then check the status, the whole body, the stored record and the event. */
const TODAY = '2026-01-15'
const NOT_ACTIVE = { paused: ['cannot pause/resume a subscription which is not active'] }

async function setup(t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const make = (attrs: Record<string, unknown> = {}): Promise<any> =>
    createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 2 }], ...attrs })
  const act = (id: number, action: string, json?: unknown, headers?: Record<string, string>): Promise<TestResponse> =>
    server.request('POST', `/api/v1/subscriptions/${id}/${action}`, { key: alice.key, json, ...(headers ? { headers } : {}) })
  return { server, alice, item, make, act }
}

async function stored(server: TestServer, id: number): Promise<Record<string, unknown>> {
  const sub = await server.store.subscriptions.find(id)
  assert.ok(sub)
  return renderSubscription(sub, await server.store.subscriptions.lineItems(id))
}

const eventsOf = (server: TestServer, id: number) => server.store.events.ofSubscription(id, 0, 1000)

/** Directly in the store, as the processor or an operator would (for states the customer API cannot reach). */
async function force(server: TestServer, id: number, patch: SubscriptionPatch): Promise<any> {
  await server.store.write(async (tx) => tx.subscriptions.update((await tx.subscriptions.lock(id))!, patch))
  return stored(server, id)
}

/** 200 with the subscription as it was plus `changes`, stored so, and exactly one new event of `type` holding it. */
async function assertChanged(server: TestServer, res: TestResponse, before: any, changes: Record<string, unknown>, type: string, eventsBefore: number): Promise<void> {
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, { ...before, ...changes, updated_at: res.body.updated_at })
  assert.ok(res.body.updated_at >= before.updated_at)
  assert.deepEqual(await stored(server, before.id), res.body)
  const events = await eventsOf(server, before.id)
  assert.equal(events.length, eventsBefore + 1)
  const newest = events[0]
  assert.ok(newest)
  // C18: made by the caller (a customer's key, or the shop's token), in this request.
  const { actor, request_id, ...rest } = newest
  assert.deepEqual({ ...rest, id: 0, created_at: '' }, { id: 0, type, created_at: '', subscription_id: before.id, data: { object: res.body } })
  assert.ok(actor?.type === 'customer' || actor?.type === 'staff', JSON.stringify(actor))
  assert.equal(request_id, res.headers.get('x-request-id'))
}

/** 200 with the subscription unchanged, nothing stored, no event. */
async function assertNoop(server: TestServer, res: TestResponse, before: any, snap: string): Promise<void> {
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, before)
  assert.equal(await snapshot(server.store), snap)
}

async function assertRefused(server: TestServer, res: TestResponse, body: unknown, snap: string): Promise<void> {
  assert.equal(res.status, 422, res.text)
  assert.deepEqual(res.body, body)
  assert.equal(await snapshot(server.store), snap)
}

// ---- skip -----------------------------------------------------------------------------------------

test('skip moves actionable_date one interval forward and increments both counters', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make({ interval_units: 'week', interval_length: 1, actionable_date: '2026-01-22' })
  const res = await act(sub.id, 'skip')
  await assertChanged(server, res, sub, { actionable_date: '2026-01-29', skip_count: 1, successive_skip_count: 1 }, 'subscription.skipped', 1)
  const again = await act(sub.id, 'skip')
  await assertChanged(server, again, res.body, { actionable_date: '2026-02-05', skip_count: 2, successive_skip_count: 2 }, 'subscription.skipped', 2)
})

test('skip keeps the anchor day: monthly on the 31st goes Jan 31 → Feb 28 → Mar 31', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make({ actionable_date: '2026-01-31' })
  const first = await act(sub.id, 'skip')
  await assertChanged(server, first, sub, { actionable_date: '2026-02-28', skip_count: 1, successive_skip_count: 1 }, 'subscription.skipped', 1)
  const second = await act(sub.id, 'skip')
  await assertChanged(server, second, first.body, { actionable_date: '2026-03-31', skip_count: 2, successive_skip_count: 2 }, 'subscription.skipped', 2)
})

test('skip of a subscription without a date counts from today + one interval', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await force(server, (await make({ interval_units: 'day', interval_length: 10 })).id, { actionable_date: null })
  const res = await act(sub.id, 'skip')
  await assertChanged(server, res, sub, { actionable_date: '2026-01-25', skip_count: 1, successive_skip_count: 1 }, 'subscription.skipped', 1)
})

test('skip of a paused subscription → 422 paused, with or without a resume date; nothing changes', async (t) => {
  const { server, make, act } = await setup(t)
  const indefinite = await make()
  assert.equal((await act(indefinite.id, 'pause')).status, 200)
  const dated = await make()
  assert.equal((await act(dated.id, 'pause', { subscription: { actionable_date: '2026-03-01' } })).status, 200)
  for (const id of [indefinite.id, dated.id]) {
    const snap = await snapshot(server.store)
    await assertRefused(server, await act(id, 'skip'), { paused: ['cannot skip a subscription which is paused'] }, snap)
  }
})

test('skip of a canceled or inactive subscription → 422 state; nothing changes', async (t) => {
  const { server, make, act } = await setup(t)
  const canceled = await make()
  assert.equal((await act(canceled.id, 'cancel')).status, 200)
  const inactive = await make()
  await force(server, inactive.id, { state: 'inactive', actionable_date: null })
  for (const id of [canceled.id, inactive.id]) {
    const snap = await snapshot(server.store)
    await assertRefused(server, await act(id, 'skip'), { state: ['cannot skip a subscription which is canceled or inactive'] }, snap)
  }
})

test('skip of a pending_cancellation subscription is allowed', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await force(server, (await make()).id, { state: 'pending_cancellation' })
  const res = await act(sub.id, 'skip')
  await assertChanged(server, res, sub, { actionable_date: '2026-03-15', skip_count: 1, successive_skip_count: 1 }, 'subscription.skipped', 1)
})

test('REPLENISH_MAX_SUCCESSIVE_SKIPS and REPLENISH_MAX_TOTAL_SKIPS → 422 keyed successive_skip_count / skip_count', async (t) => {
  const { server, make, act } = await setup(t, { REPLENISH_MAX_SUCCESSIVE_SKIPS: '2', REPLENISH_MAX_TOTAL_SKIPS: '3' })
  const sub = await make()
  assert.equal((await act(sub.id, 'skip')).status, 200)
  assert.equal((await act(sub.id, 'skip')).status, 200)
  let snap = await snapshot(server.store)
  await assertRefused(server, await act(sub.id, 'skip'), {
    successive_skip_count: ['This subscription has exceeded the maximum configured successive skip limit. It can be skipped again after the next time it is processed.'],
  }, snap)
  assert.equal((await stored(server, sub.id))['actionable_date'], '2026-04-15')
  // An installment resets the successive count (C8); the total still counts.
  const reset = await force(server, sub.id, { successive_skip_count: 0 })
  const third = await act(sub.id, 'skip')
  await assertChanged(server, third, reset, { actionable_date: '2026-05-15', skip_count: 3, successive_skip_count: 1 }, 'subscription.skipped', 3)
  snap = await snapshot(server.store)
  await assertRefused(server, await act(sub.id, 'skip'), {
    skip_count: ['This subscription has exceeded the maximum configured skip limit. It can no longer be skipped.'],
  }, snap)
})

test('both skip limits exceeded → both keys in one 422, localised', async (t) => {
  const { server, make, act } = await setup(t, { REPLENISH_MAX_SUCCESSIVE_SKIPS: '1', REPLENISH_MAX_TOTAL_SKIPS: '1' })
  const sub = await make()
  assert.equal((await act(sub.id, 'skip')).status, 200)
  const snap = await snapshot(server.store)
  await assertRefused(server, await act(sub.id, 'skip', undefined, { 'accept-language': 'de' }), {
    successive_skip_count: ['Dieses Abonnement hat die konfigurierte Höchstzahl aufeinanderfolgender Auslassungen überschritten. Es kann nach der nächsten Verarbeitung wieder ausgelassen werden.'],
    skip_count: ['Dieses Abonnement hat die konfigurierte Höchstzahl an Auslassungen überschritten. Es kann nicht mehr ausgelassen werden.'],
  }, snap)
})

test('without limits a subscription can be skipped again and again; the admin API ignores the limits (C11)', async (t) => {
  const unlimited = await setup(t)
  const sub = await unlimited.make()
  for (let i = 0; i < 5; i++) assert.equal((await unlimited.act(sub.id, 'skip')).status, 200)
  assert.equal((await stored(unlimited.server, sub.id))['skip_count'], 5)

  const limited = await setup(t, { REPLENISH_MAX_TOTAL_SKIPS: '0', REPLENISH_MAX_SUCCESSIVE_SKIPS: '0' })
  const other = await limited.make()
  assert.equal((await limited.act(other.id, 'skip')).status, 422)
  const res = await limited.server.request('POST', `/admin/api/v1/subscriptions/${other.id}/skip`, { key: ADMIN_TOKEN })
  await assertChanged(limited.server, res, other, { actionable_date: '2026-03-15', skip_count: 1, successive_skip_count: 1 }, 'subscription.skipped', 1)
})

// ---- cancel ---------------------------------------------------------------------------------------

test('cancel an active subscription → canceled, actionable_date null; canceling again is a no-op 200', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make()
  const res = await act(sub.id, 'cancel')
  await assertChanged(server, res, sub, { state: 'canceled', actionable_date: null }, 'subscription.canceled', 1)
  const snap = await snapshot(server.store)
  await assertNoop(server, await act(sub.id, 'cancel'), res.body, snap)
})

test('cancel from every state: paused (flag cleared), pending_cancellation, inactive', async (t) => {
  const { server, make, act } = await setup(t)
  const paused = await make()
  const pausedBody = (await act(paused.id, 'pause', { subscription: { actionable_date: '2026-02-01' } })).body
  await assertChanged(server, await act(paused.id, 'cancel'), pausedBody, { state: 'canceled', actionable_date: null, paused: false }, 'subscription.canceled', 2)
  const pending = await force(server, (await make()).id, { state: 'pending_cancellation' })
  await assertChanged(server, await act(pending.id, 'cancel'), pending, { state: 'canceled', actionable_date: null }, 'subscription.canceled', 1)
  const inactive = await force(server, (await make()).id, { state: 'inactive', actionable_date: null })
  await assertChanged(server, await act(inactive.id, 'cancel'), inactive, { state: 'canceled' }, 'subscription.canceled', 1)
})

test('REPLENISH_CANCELLATION_NOTICE_DAYS: actionable_date − N < today → pending_cancellation; again later → canceled when the notice allows', async (t) => {
  const { server, make, act, alice } = await setup(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '7' })
  // 2026-01-20 − 7 = 01-13 < 01-15: too late, one more delivery is made.
  const sub = await make({ actionable_date: '2026-01-20' })
  const res = await act(sub.id, 'cancel')
  await assertChanged(server, res, sub, { state: 'pending_cancellation' }, 'subscription.cancellation_pending', 1)
  // Still too late: stays pending, 200, no event.
  const snap = await snapshot(server.store)
  await assertNoop(server, await act(sub.id, 'cancel'), res.body, snap)
  // Its date moves out (as after the delivery, or an update): now the notice allows it.
  const moved = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { actionable_date: '2026-02-20' } } })
  assert.equal(moved.status, 200, moved.text)
  await assertChanged(server, await act(sub.id, 'cancel'), moved.body, { state: 'canceled', actionable_date: null }, 'subscription.canceled', 3)
})

test('cancellation notice boundary: exactly N days before the date is enough notice; no date cancels at once', async (t) => {
  const { server, make, act } = await setup(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '7' })
  const onTime = await make({ actionable_date: '2026-01-22' })
  await assertChanged(server, await act(onTime.id, 'cancel'), onTime, { state: 'canceled', actionable_date: null }, 'subscription.canceled', 1)
  const paused = await make({ actionable_date: '2026-01-16' })
  const pausedBody = (await act(paused.id, 'pause')).body
  await assertChanged(server, await act(paused.id, 'cancel'), pausedBody, { state: 'canceled', paused: false }, 'subscription.canceled', 2)
  // The admin API cancels at once whatever the notice (C11).
  const late = await make({ actionable_date: '2026-01-16' })
  const res = await server.request('POST', `/admin/api/v1/subscriptions/${late.id}/cancel`, { key: ADMIN_TOKEN })
  await assertChanged(server, res, late, { state: 'canceled', actionable_date: null }, 'subscription.canceled', 1)
})

// ---- pause and resume ------------------------------------------------------------------------------

test('pause without a date pauses indefinitely (actionable_date null); pausing again is a no-op 200', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make()
  const res = await act(sub.id, 'pause')
  await assertChanged(server, res, sub, { paused: true, actionable_date: null }, 'subscription.paused', 1)
  const snap = await snapshot(server.store)
  await assertNoop(server, await act(sub.id, 'pause', { subscription: { actionable_date: '2026-06-01' } }), res.body, snap)
})

test('pause with a date keeps it; a date before tomorrow becomes tomorrow', async (t) => {
  const { server, make, act, alice } = await setup(t)
  const later = await make()
  await assertChanged(server, await act(later.id, 'pause', { subscription: { actionable_date: '2026-03-31' } }), later,
    { paused: true, actionable_date: '2026-03-31' }, 'subscription.paused', 1)
  for (const date of ['2026-01-15', '2025-12-01', '2026-01-16']) {
    const sub = await make()
    await assertChanged(server, await act(sub.id, 'pause', { subscription: { actionable_date: date } }), sub,
      { paused: true, actionable_date: '2026-01-16' }, 'subscription.paused', 1)
  }
  // Unwrapped JSON and form bodies say the same (C1).
  const unwrapped = await make()
  await assertChanged(server, await act(unwrapped.id, 'pause', { actionable_date: '2026-02-02' }), unwrapped,
    { paused: true, actionable_date: '2026-02-02' }, 'subscription.paused', 1)
  const form = await make()
  const formRes = await server.request('POST', `/api/v1/subscriptions/${form.id}/pause`, { key: alice.key, form: 'subscription%5Bactionable_date%5D=2026-02-03' })
  await assertChanged(server, formRes, form, { paused: true, actionable_date: '2026-02-03' }, 'subscription.paused', 1)
})

test('pause with a date that is not a date → 422 actionable_date, nothing changes', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make()
  const snap = await snapshot(server.store)
  await assertRefused(server, await act(sub.id, 'pause', { subscription: { actionable_date: '2026-02-30' } }), { actionable_date: ['is not a valid date'] }, snap)
})

test('pause or resume of a subscription that is not active → 422 paused', async (t) => {
  const { server, make, act } = await setup(t)
  const canceled = (await act((await make()).id, 'cancel')).body
  const pending = await force(server, (await make()).id, { state: 'pending_cancellation' })
  const inactive = await force(server, (await make()).id, { state: 'inactive', actionable_date: null })
  for (const sub of [canceled, pending, inactive]) {
    for (const action of ['pause', 'resume']) {
      const snap = await snapshot(server.store)
      await assertRefused(server, await act(sub.id, action), NOT_ACTIVE, snap)
    }
  }
})

test('resume: paused false, actionable_date tomorrow by default, or the given date when later', async (t) => {
  const { server, make, act } = await setup(t)
  const a = (await act((await make()).id, 'pause')).body
  await assertChanged(server, await act(a.id, 'resume'), a, { paused: false, actionable_date: '2026-01-16' }, 'subscription.resumed', 2)
  const b = (await act((await make()).id, 'pause', { subscription: { actionable_date: '2026-05-01' } })).body
  await assertChanged(server, await act(b.id, 'resume', { subscription: { actionable_date: '2026-04-30' } }), b,
    { paused: false, actionable_date: '2026-04-30' }, 'subscription.resumed', 2)
  const c = (await act((await make()).id, 'pause')).body
  await assertChanged(server, await act(c.id, 'resume', { subscription: { actionable_date: '2026-01-10' } }), c,
    { paused: false, actionable_date: '2026-01-16' }, 'subscription.resumed', 2)
})

test('resume anchors the new date: resumed on the 31st, skips go → Feb 28 → Mar 31', async (t) => {
  const { server, make, act } = await setup(t)
  const paused = (await act((await make()).id, 'pause')).body
  const resumed = await act(paused.id, 'resume', { subscription: { actionable_date: '2026-01-31' } })
  await assertChanged(server, resumed, paused, { paused: false, actionable_date: '2026-01-31' }, 'subscription.resumed', 2)
  assert.equal((await act(paused.id, 'skip')).body.actionable_date, '2026-02-28')
  assert.equal((await act(paused.id, 'skip')).body.actionable_date, '2026-03-31')
})

test('resume of an active subscription that is not paused is a no-op 200', async (t) => {
  const { server, make, act } = await setup(t)
  const sub = await make()
  const snap = await snapshot(server.store)
  await assertNoop(server, await act(sub.id, 'resume', { subscription: { actionable_date: '2026-06-01' } }), sub, snap)
})

// ---- activate -------------------------------------------------------------------------------------

test('activate a canceled, pending_cancellation or inactive subscription → active on today + one interval', async (t) => {
  const { server, make, act } = await setup(t)
  const canceled = (await act((await make({ interval_units: 'week', interval_length: 2 })).id, 'cancel')).body
  await assertChanged(server, await act(canceled.id, 'activate'), canceled, { state: 'active', actionable_date: '2026-01-29' }, 'subscription.activated', 2)
  const pending = await force(server, (await make({ actionable_date: '2026-01-17' })).id, { state: 'pending_cancellation' })
  await assertChanged(server, await act(pending.id, 'activate'), pending, { state: 'active', actionable_date: '2026-02-15' }, 'subscription.activated', 1)
  const inactive = await force(server, (await make({ interval_units: 'year' })).id, { state: 'inactive', actionable_date: null })
  await assertChanged(server, await act(inactive.id, 'activate'), inactive, { state: 'active', actionable_date: '2027-01-15' }, 'subscription.activated', 1)
})

test('activate on the 31st: the new date is Feb 28 and its day (28) becomes the anchor', async (t) => {
  const { server, make, act } = await setup(t, { REPLENISH_TODAY: '2026-01-31' })
  const canceled = (await act((await make()).id, 'cancel')).body
  await assertChanged(server, await act(canceled.id, 'activate'), canceled, { state: 'active', actionable_date: '2026-02-28' }, 'subscription.activated', 2)
  assert.equal((await act(canceled.id, 'skip')).body.actionable_date, '2026-03-28')
})

test('activate an active subscription (paused or not) is a no-op 200', async (t) => {
  const { server, make, act } = await setup(t)
  const active = await make()
  let snap = await snapshot(server.store)
  await assertNoop(server, await act(active.id, 'activate'), active, snap)
  const paused = (await act((await make()).id, 'pause')).body
  snap = await snapshot(server.store)
  await assertNoop(server, await act(paused.id, 'activate'), paused, snap)
})

// ---- ownership and lookup come first (C2) ------------------------------------------------------------

test('every lifecycle route: 401 without a key, 404 for an unknown id, 401 for another user', async (t) => {
  const { server, make } = await setup(t)
  const sub = await make()
  const bob = await seedUser(server.store)
  const snap = await snapshot(server.store)
  for (const action of ['skip', 'cancel', 'pause', 'resume', 'activate']) {
    const none = await server.request('POST', `/api/v1/subscriptions/${sub.id}/${action}`)
    assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an API key.' }])
    const unknown = await server.request('POST', `/api/v1/subscriptions/${sub.id + 1000}/${action}`, { key: bob.key })
    assert.deepEqual([unknown.status, unknown.body], [404, { error: 'The resource you were looking for could not be found.' }])
    const foreign = await server.request('POST', `/api/v1/subscriptions/${sub.id}/${action}`, { key: bob.key })
    assert.deepEqual([foreign.status, foreign.body], [401, { error: 'You are not authorized to perform that action.' }])
  }
  assert.equal(await snapshot(server.store), snap)
})

// ---- end_date and dates set by create / update (C4) ----------------------------------------------------

test('end_date must be a real date after today; actionable_date today or later', async (t) => {
  const { server, alice } = await setup(t)
  const snap = await snapshot(server.store)
  const create = (attrs: Record<string, unknown>) => server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1, ...attrs } } })
  await assertRefused(server, await create({ end_date: TODAY }), { end_date: ['must be after today'] }, snap)
  await assertRefused(server, await create({ end_date: '2026-01-01' }), { end_date: ['must be after today'] }, snap)
  await assertRefused(server, await create({ end_date: '2026-02-30' }), { end_date: ['is not a valid date'] }, snap)
  await assertRefused(server, await create({ actionable_date: '2026-01-14' }), { actionable_date: ['must be today or later'] }, snap)
  await assertRefused(server, await create({ actionable_date: '15/01/2026' }), { actionable_date: ['is not a valid date'] }, snap)
  await assertRefused(server, await create({ actionable_date: '2026-01-14', end_date: TODAY }), { actionable_date: ['must be today or later'], end_date: ['must be after today'] }, snap)
  const ok = await create({ actionable_date: TODAY, end_date: '2026-01-16' })
  assert.equal(ok.status, 200, ok.text)
  assert.deepEqual([ok.body.actionable_date, ok.body.end_date], [TODAY, '2026-01-16'])
  assert.deepEqual(await stored(server, ok.body.id), ok.body)
})

test('update end_date: set (after today), refused when not after today, cleared with null; each change is subscription.updated', async (t) => {
  const { server, make, alice } = await setup(t)
  const sub = await make()
  const patch = (attrs: Record<string, unknown>) => server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: attrs } })
  const set = await patch({ end_date: '2026-12-31' })
  await assertChanged(server, set, sub, { end_date: '2026-12-31' }, 'subscription.updated', 1)
  const snap = await snapshot(server.store)
  await assertRefused(server, await patch({ end_date: TODAY }), { end_date: ['must be after today'] }, snap)
  await assertRefused(server, await patch({ actionable_date: '2026-01-01' }), { actionable_date: ['must be today or later'] }, snap)
  const cleared = await patch({ end_date: null })
  await assertChanged(server, cleared, set.body, { end_date: null }, 'subscription.updated', 2)
})

// ---- C7: the interval change rule ----------------------------------------------------------------------

test('C7: changing the interval moves actionable_date to the creation date + the new interval', async (t) => {
  const { server, make, alice } = await setup(t, { REPLENISH_TODAY: '2026-01-31' })
  const sub = await make()
  assert.equal(sub.actionable_date, '2026-02-28')
  const patch = (attrs: Record<string, unknown>) => server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: attrs } })
  const two = await patch({ interval_length: 2 })
  await assertChanged(server, two, sub, { interval_length: 2, actionable_date: '2026-03-31' }, 'subscription.frequency_changed', 1)
  const weekly = await patch({ interval_length: 3, interval_units: 'week' })
  await assertChanged(server, weekly, two.body, { interval_length: 3, interval_units: 'week', actionable_date: '2026-02-21' }, 'subscription.frequency_changed', 2)
  // The same interval again changes nothing.
  const snap = await snapshot(server.store)
  await assertNoop(server, await patch({ interval_length: '3', interval_units: 'week' }), weekly.body, snap)
})

test('C7: never before today; an actionable_date in the same request wins', async (t) => {
  const { server, make, alice } = await setup(t)
  const sub = await make()
  // Made long ago (in the service clock): creation + 1 week is in the past, so the date becomes today.
  await testSql(server.store).run('UPDATE subscriptions SET created_on = ? WHERE id = ?', '2025-06-15', sub.id)
  const patch = (attrs: Record<string, unknown>) => server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: attrs } })
  const weekly = await patch({ interval_units: 'week' })
  await assertChanged(server, weekly, sub, { interval_units: 'week', actionable_date: TODAY }, 'subscription.frequency_changed', 1)
  const both = await patch({ interval_length: 2, actionable_date: '2026-04-01' })
  assert.equal(both.status, 200, both.text)
  assert.deepEqual(both.body, { ...weekly.body, interval_length: 2, actionable_date: '2026-04-01', updated_at: both.body.updated_at })
  assert.deepEqual((await eventsOf(server, sub.id)).slice(0, 2).map((e) => e.type).sort(), ['subscription.frequency_changed', 'subscription.updated'])
  assert.deepEqual(await stored(server, sub.id), both.body)
})

test('C7: with an installment, the base is the last installment\'s due date', async (t) => {
  const { server, make, alice } = await setup(t)
  const sub = await make()
  const now = new Date().toISOString()
  const insert = (dueDate: string) => testSql(server.store).run(`INSERT INTO installments (subscription_id, due_date, state, line_items, currency, created_at, updated_at)
    VALUES (?, ?, 'fulfilled', '[]', 'USD', ?, ?)`, sub.id, dueDate, now, now)
  await insert('2025-12-20')
  await insert('2026-01-10')
  const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { interval_units: 'week', interval_length: 2 } } })
  await assertChanged(server, res, sub, { interval_units: 'week', interval_length: 2, actionable_date: '2026-01-24' }, 'subscription.frequency_changed', 1)
})
