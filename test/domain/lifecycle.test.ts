import { test } from 'node:test'
import assert from 'node:assert/strict'
import { activate, cancel, pause, resume, skip } from '../../src/domain/lifecycle.ts'
import { ValidationFailed } from '../../src/domain/field-errors.ts'
import type { Subscription } from '../../src/domain/types.ts'

const TODAY = '2026-01-15'
const NO_LIMITS = { maxSuccessiveSkips: undefined, maxTotalSkips: undefined }

function sub(overrides: Partial<Subscription> = {}): Subscription {
  return {
    id: 1, user_id: 1, state: 'active', paused: false, interval_length: 1, interval_units: 'month',
    actionable_date: '2026-01-31', anchor_day: 31, end_date: null, skip_count: 0, successive_skip_count: 0,
    payment_method_id: null, payment_source_id: null, currency: 'USD', processing_state: 'pending',
    shipping_address: null, billing_address: null, created_on: TODAY, created_at: '2026-01-15T00:00:00.000Z',
    updated_at: '2026-01-15T00:00:00.000Z', ...overrides,
  }
}

/** The rendered 422 body a refusal carries, in English. */
function refusal(fn: () => unknown): Record<string, string[]> {
  try {
    fn()
  } catch (err) {
    if (err instanceof ValidationFailed) return err.errors.render('en')
    throw err
  }
  assert.fail('expected a refusal')
}

test('skip moves the date by one interval keeping the anchor, and counts', () => {
  assert.deepEqual(skip(sub(), TODAY, NO_LIMITS), {
    patch: { actionable_date: '2026-02-28', skip_count: 1, successive_skip_count: 1 },
    event: 'subscription.skipped',
  })
  assert.deepEqual(skip(sub({ actionable_date: '2026-02-28', skip_count: 1, successive_skip_count: 1 }), TODAY, NO_LIMITS).patch,
    { actionable_date: '2026-03-31', skip_count: 2, successive_skip_count: 2 })
  assert.deepEqual(skip(sub({ state: 'pending_cancellation' }), TODAY, NO_LIMITS).patch.actionable_date, '2026-02-28')
  // No date: from today + one interval, and that day becomes the anchor.
  assert.deepEqual(skip(sub({ actionable_date: null, anchor_day: null, interval_units: 'week', interval_length: 2 }), TODAY, NO_LIMITS).patch,
    { actionable_date: '2026-01-29', anchor_day: 29, skip_count: 1, successive_skip_count: 1 })
})

test('skip refusals: paused, canceled or inactive, and the two limits (both reported at once)', () => {
  assert.deepEqual(refusal(() => skip(sub({ paused: true }), TODAY, NO_LIMITS)), { paused: ['cannot skip a subscription which is paused'] })
  for (const state of ['canceled', 'inactive'] as const) {
    assert.deepEqual(refusal(() => skip(sub({ state, actionable_date: null }), TODAY, NO_LIMITS)),
      { state: ['cannot skip a subscription which is canceled or inactive'] })
  }
  const limits = { maxSuccessiveSkips: 2, maxTotalSkips: 3 }
  assert.equal(skip(sub({ successive_skip_count: 1, skip_count: 2 }), TODAY, limits).patch.skip_count, 3)
  assert.deepEqual(Object.keys(refusal(() => skip(sub({ successive_skip_count: 2, skip_count: 2 }), TODAY, limits))), ['successive_skip_count'])
  assert.deepEqual(Object.keys(refusal(() => skip(sub({ successive_skip_count: 0, skip_count: 3 }), TODAY, limits))), ['skip_count'])
  assert.deepEqual(Object.keys(refusal(() => skip(sub({ successive_skip_count: 2, skip_count: 3 }), TODAY, limits))), ['successive_skip_count', 'skip_count'])
  assert.deepEqual(Object.keys(refusal(() => skip(sub({}), TODAY, { maxSuccessiveSkips: 0, maxTotalSkips: undefined }))), ['successive_skip_count'])
})

test('skip: a date past 9999-12-31 is refused, not written as a five-digit year', () => {
  assert.deepEqual(refusal(() => skip(sub({ actionable_date: '9999-12-31', anchor_day: 31 }), TODAY, NO_LIMITS)), { actionable_date: ['is not a valid date'] })
  assert.equal(skip(sub({ actionable_date: '9999-11-30', anchor_day: 30 }), TODAY, NO_LIMITS).patch.actionable_date, '9999-12-30')
})

test('cancel: any state → canceled; with notice, too late → pending_cancellation; canceled is a no-op', () => {
  const canceled = { patch: { state: 'canceled', actionable_date: null, paused: false }, event: 'subscription.canceled' }
  assert.deepEqual(cancel(sub(), TODAY, 0), canceled)
  assert.deepEqual(cancel(sub({ paused: true }), TODAY, 0), canceled)
  assert.deepEqual(cancel(sub({ state: 'inactive', actionable_date: null }), TODAY, 30), canceled)
  assert.equal(cancel(sub({ state: 'canceled', actionable_date: null }), TODAY, 0), null)
  // 2026-01-31 − 16 = 01-15, not before today: the notice is met.
  assert.deepEqual(cancel(sub(), TODAY, 16), canceled)
  assert.deepEqual(cancel(sub(), TODAY, 17), { patch: { state: 'pending_cancellation' }, event: 'subscription.cancellation_pending' })
  assert.equal(cancel(sub({ state: 'pending_cancellation' }), TODAY, 17), null)
  assert.deepEqual(cancel(sub({ state: 'pending_cancellation' }), TODAY, 16), canceled)
  assert.deepEqual(cancel(sub({ paused: true, actionable_date: null }), TODAY, 365), canceled)
  // Paused until a date inside the notice: pending, and still paused; the processor resumes it on
  // that date and makes the last delivery (C9: "or paused with a resume date that has arrived").
  assert.deepEqual(cancel(sub({ paused: true }), TODAY, 17), { patch: { state: 'pending_cancellation' }, event: 'subscription.cancellation_pending' })
})

test('pause and resume: active only, dates moved to tomorrow, no-ops', () => {
  assert.deepEqual(pause(sub(), undefined, TODAY), { patch: { paused: true, actionable_date: null }, event: 'subscription.paused' })
  assert.deepEqual(pause(sub(), '2026-03-31', TODAY)?.patch, { paused: true, actionable_date: '2026-03-31', anchor_day: 31 })
  assert.deepEqual(pause(sub(), TODAY, TODAY)?.patch, { paused: true, actionable_date: '2026-01-16', anchor_day: 16 })
  assert.equal(pause(sub({ paused: true }), '2026-03-31', TODAY), null)
  assert.deepEqual(refusal(() => pause(sub(), '2026-02-30', TODAY)), { actionable_date: ['is not a valid date'] })
  for (const state of ['canceled', 'inactive', 'pending_cancellation'] as const) {
    assert.deepEqual(refusal(() => pause(sub({ state }), undefined, TODAY)), { paused: ['cannot pause/resume a subscription which is not active'] })
    assert.deepEqual(refusal(() => resume(sub({ state }), undefined, TODAY)), { paused: ['cannot pause/resume a subscription which is not active'] })
  }
  const paused = sub({ paused: true, actionable_date: null })
  assert.deepEqual(resume(paused, undefined, TODAY), { patch: { paused: false, actionable_date: '2026-01-16', anchor_day: 16 }, event: 'subscription.resumed' })
  assert.deepEqual(resume(paused, '2026-01-01', TODAY)?.patch.actionable_date, '2026-01-16')
  assert.deepEqual(resume(paused, '2026-05-31', TODAY)?.patch, { paused: false, actionable_date: '2026-05-31', anchor_day: 31 })
  assert.equal(resume(sub(), '2026-05-31', TODAY), null)
})

test('activate: canceled, pending or inactive → active on today + one interval, anchored there; active is a no-op', () => {
  for (const state of ['canceled', 'inactive', 'pending_cancellation'] as const) {
    assert.deepEqual(activate(sub({ state, actionable_date: null, interval_units: 'week', interval_length: 3 }), TODAY), {
      patch: { state: 'active', paused: false, actionable_date: '2026-02-05', anchor_day: 5 },
      event: 'subscription.activated',
    })
  }
  assert.deepEqual(activate(sub({ state: 'canceled' }), '2026-01-31')?.patch, { state: 'active', paused: false, actionable_date: '2026-02-28', anchor_day: 28 })
  assert.equal(activate(sub({ paused: true }), TODAY), null)
})
