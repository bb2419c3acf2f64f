import { test } from 'node:test'
import assert from 'node:assert/strict'
import { decideDue, decideEnded, type DueFields } from '../../src/domain/processing.ts'
import { decideOutcome, readOutcome, type OutcomeInput } from '../../src/domain/outcome.ts'
import { ValidationFailed } from '../../src/domain/field-errors.ts'
import type { Attempt, Installment } from '../../src/domain/installment.ts'

/** C9's decisions as pure functions: every rule, no clock, no database. */
const monthly: DueFields = {
  state: 'active', paused: false, interval_length: 1, interval_units: 'month',
  actionable_date: '2026-01-31', anchor_day: 31, end_date: null,
}

test('a due monthly subscription gets one installment on its date and moves to the next anchor day after today', () => {
  assert.deepEqual(decideDue(monthly, true, '2026-01-31'), { kind: 'install', dueDate: '2026-01-31', nextDate: '2026-02-28', state: 'active', events: [] })
})

test('missed periods collapse into one installment and the first anchor-aligned date after today', () => {
  // Due Jan 31, processed Apr 30 (three periods late): one installment for Jan 31, next is May 31.
  assert.deepEqual(decideDue(monthly, true, '2026-04-30'), { kind: 'install', dueDate: '2026-01-31', nextDate: '2026-05-31', state: 'active', events: [] })
  const weekly: DueFields = { ...monthly, interval_units: 'week', actionable_date: '2026-01-01', anchor_day: 1 }
  assert.deepEqual(decideDue(weekly, true, '2026-01-22'), { kind: 'install', dueDate: '2026-01-01', nextDate: '2026-01-29', state: 'active', events: [] })
})

test('not due yet, not acting, or nothing to deliver: wait', () => {
  assert.deepEqual(decideDue(monthly, true, '2026-01-30'), { kind: 'wait' })
  assert.deepEqual(decideDue({ ...monthly, state: 'canceled' }, true, '2026-02-01'), { kind: 'wait' })
  assert.deepEqual(decideDue({ ...monthly, state: 'inactive' }, true, '2026-02-01'), { kind: 'wait' })
  assert.deepEqual(decideDue({ ...monthly, actionable_date: null }, true, '2026-02-01'), { kind: 'wait' })
  assert.deepEqual(decideDue(monthly, false, '2026-02-01'), { kind: 'wait' })
})

test('a paused subscription whose resume date arrived is resumed and processed; without line items it is only resumed', () => {
  const paused = { ...monthly, paused: true }
  assert.deepEqual(decideDue(paused, true, '2026-01-31'), {
    kind: 'install', dueDate: '2026-01-31', nextDate: '2026-02-28', state: 'active', events: ['subscription.resumed'],
  })
  assert.deepEqual(decideDue(paused, false, '2026-01-31'), { kind: 'resume', patch: { paused: false }, event: 'subscription.resumed' })
})

test('a pending cancellation gets its last installment and becomes canceled', () => {
  assert.deepEqual(decideDue({ ...monthly, state: 'pending_cancellation' }, true, '2026-01-31'), {
    kind: 'install', dueDate: '2026-01-31', nextDate: null, state: 'canceled', events: ['subscription.canceled'],
  })
})

test('end date: equal to the due date still gets that installment, then inactive; already past: inactive without one', () => {
  assert.deepEqual(decideDue({ ...monthly, end_date: '2026-01-31' }, true, '2026-01-31'), {
    kind: 'install', dueDate: '2026-01-31', nextDate: null, state: 'inactive', events: ['subscription.ended'],
  })
  assert.deepEqual(decideDue({ ...monthly, end_date: '2026-02-28' }, true, '2026-01-31'), {
    kind: 'install', dueDate: '2026-01-31', nextDate: '2026-02-28', state: 'active', events: [],
  })
  assert.deepEqual(decideDue({ ...monthly, end_date: '2026-01-30' }, true, '2026-01-31'), {
    kind: 'end', patch: { state: 'inactive', actionable_date: null, paused: false }, event: 'subscription.ended',
  })
  assert.deepEqual(decideDue({ ...monthly, state: 'pending_cancellation', end_date: '2026-01-30' }, true, '2026-01-31'), {
    kind: 'end', patch: { state: 'canceled', actionable_date: null, paused: false }, event: 'subscription.canceled',
  })
})

test('a subscription not yet due ends once its end date has passed with its next date beyond it', () => {
  const later = { ...monthly, actionable_date: '2026-03-31', end_date: '2026-02-15' }
  assert.deepEqual(decideEnded(later, '2026-02-15'), { kind: 'wait' })
  assert.deepEqual(decideEnded(later, '2026-02-16'), { kind: 'end', patch: { state: 'inactive', actionable_date: null, paused: false }, event: 'subscription.ended' })
  assert.deepEqual(decideEnded({ ...later, end_date: '2026-03-31' }, '2026-04-01'), { kind: 'wait' })
})

// ---- outcomes ----------------------------------------------------------------------------------

const installment: Installment = {
  id: 7, subscription_id: 3, user: { id: 2, email: 'a@example.com', external_id: null }, due_date: '2026-01-31', state: 'pending', retry_at: null, first_failed_at: null, replayable_attempt_id: null,
  line_items: [], shipping_address: null, billing_address: null, payment_method_id: null, payment_source_id: null, currency: 'USD', subtotal: '0.00', discount_total: '0.00', total: '0.00',
  created_at: '2026-01-31T00:00:00.000Z', updated_at: '2026-01-31T00:00:00.000Z',
}
const attempt = (result: string, order_reference: string | null = null): Attempt => ({
  id: 11, installment_id: 7, result, order_reference, message: null, created_at: '2026-01-31T01:00:00.000Z',
})
const input = (result: OutcomeInput['result'], order_reference: string | null = null): OutcomeInput => ({ result, order_reference, message: null })
const ctx = { now: new Date('2026-02-01T10:00:00.000Z'), reprocessingIntervalHours: 24, maxReprocessingDays: 3, subscriptionCanceled: false }

test('readOutcome accepts the four results and refuses anything else with the inclusion message', () => {
  assert.deepEqual(readOutcome({ result: 'fulfilled', order_reference: ' R-1 ', message: 'ok' }), { result: 'fulfilled', order_reference: 'R-1', message: 'ok' })
  for (const result of ['failed', 'payment_failed', 'out_of_stock'] as const) assert.equal(readOutcome({ result }).result, result)
  for (const bad of [{}, { result: 'shipped' }, { result: 1 }, { result: null }]) {
    assert.throws(() => readOutcome(bad), (e: unknown) => e instanceof ValidationFailed && JSON.stringify(e.errors.render('en')) === '{"result":["is not included in the list"]}')
  }
  assert.throws(() => readOutcome({ result: 'failed', order_reference: 'x'.repeat(256) }),
    (e: unknown) => e instanceof ValidationFailed && JSON.stringify(e.errors.render('en')) === '{"order_reference":["is too long (maximum is 255 characters)"]}')
})

test('a failure schedules a retry after the reprocessing interval and keeps the first failure time', () => {
  assert.deepEqual(decideOutcome(installment, undefined, input('payment_failed'), ctx), {
    kind: 'retry', retryAt: '2026-02-02T10:00:00.000Z', firstFailedAt: '2026-02-01T10:00:00.000Z',
  })
  const failedBefore = { ...installment, state: 'pending' as const, first_failed_at: '2026-01-31T10:00:00.000Z' }
  assert.deepEqual(decideOutcome(failedBefore, attempt('failed'), input('failed'), ctx), {
    kind: 'retry', retryAt: '2026-02-02T10:00:00.000Z', firstFailedAt: '2026-01-31T10:00:00.000Z',
  })
})

test('once the reprocessing window has run out, a further failure abandons and cancels', () => {
  const firstFailed = { ...installment, first_failed_at: '2026-01-29T10:00:00.000Z' }
  assert.deepEqual(decideOutcome(firstFailed, attempt('failed'), input('out_of_stock'), ctx), {
    kind: 'abandon', firstFailedAt: '2026-01-29T10:00:00.000Z', cancelSubscription: true,
  })
  // One millisecond short of three days: still a retry.
  const almost = { ...installment, first_failed_at: '2026-01-29T10:00:00.001Z' }
  assert.equal(decideOutcome(almost, attempt('failed'), input('failed'), ctx).kind, 'retry')
  // Unset: retries never run out.
  assert.equal(decideOutcome(firstFailed, attempt('failed'), input('failed'), { ...ctx, maxReprocessingDays: undefined }).kind, 'retry')
})

test('a canceled subscription is never retried: a failure abandons the installment', () => {
  assert.deepEqual(decideOutcome(installment, undefined, input('failed'), { ...ctx, subscriptionCanceled: true }), {
    kind: 'abandon', firstFailedAt: '2026-02-01T10:00:00.000Z', cancelSubscription: false,
  })
})

test('an identical repeat of the last outcome replays; anything else on a closed installment is refused', () => {
  const fulfilled = { ...installment, state: 'fulfilled' as const, replayable_attempt_id: 11 }
  assert.deepEqual(decideOutcome(fulfilled, attempt('fulfilled', 'R-1'), input('fulfilled', 'R-1'), ctx), { kind: 'replay' })
  const refusal = (i: Installment, a: Attempt, o: OutcomeInput, state: string) =>
    assert.throws(() => decideOutcome(i, a, o, ctx),
      (e: unknown) => e instanceof ValidationFailed && JSON.stringify(e.errors.render('en')) === JSON.stringify({ state: [`cannot record an outcome for an installment which is ${state}`] }))
  refusal(fulfilled, attempt('fulfilled', 'R-1'), input('fulfilled', 'R-2'), 'fulfilled')
  refusal(fulfilled, attempt('fulfilled', 'R-1'), input('failed'), 'fulfilled')
  // Abandoned by a cancel after the failure: something else happened, so even the same outcome is refused.
  refusal({ ...installment, state: 'abandoned', replayable_attempt_id: null }, attempt('failed'), input('failed'), 'abandoned')
  // Retrying: the same failure again is a replay; after retry_due (replayable cleared) it is a new attempt.
  const retrying = { ...installment, state: 'retrying' as const, replayable_attempt_id: 11, first_failed_at: '2026-02-01T09:00:00.000Z' }
  assert.deepEqual(decideOutcome(retrying, attempt('failed'), input('failed'), ctx), { kind: 'replay' })
  assert.equal(decideOutcome({ ...retrying, state: 'pending', replayable_attempt_id: null }, attempt('failed'), input('failed'), ctx).kind, 'retry')
})
