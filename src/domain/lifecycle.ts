import { addDays, addInterval, dayOf, isDate } from './dates.ts'
import { fail, FieldErrors, ValidationFailed } from './field-errors.ts'
import type { Subscription, SubscriptionPatch } from './types.ts'

/**
 * The customer-facing transitions of C8, as pure functions: each answers with the patch to
 * apply and the event to write, `null` for a no-op 200, or throws ValidationFailed (422).
 */
export interface Transition {
  readonly patch: SubscriptionPatch
  readonly event: string
}

export interface SkipLimits {
  readonly maxSuccessiveSkips: number | undefined
  readonly maxTotalSkips: number | undefined
}

const ended = (s: Subscription): boolean => s.state === 'canceled' || s.state === 'inactive'

/** The date after which the subscription next acts, moved on by one interval. */
export function nextDate(s: Subscription, from: string): string {
  return addInterval(from, s.interval_length, s.interval_units, s.anchor_day ?? dayOf(from))
}

export function skip(s: Subscription, today: string, limits: SkipLimits): Transition {
  if (ended(s)) fail('state', 'cannot_skip_ended')
  if (s.paused) fail('paused', 'cannot_skip_paused')
  const errors = new FieldErrors()
  if (limits.maxSuccessiveSkips !== undefined && s.successive_skip_count >= limits.maxSuccessiveSkips) {
    errors.add('successive_skip_count', 'successive_skips_exceeded')
  }
  if (limits.maxTotalSkips !== undefined && s.skip_count >= limits.maxTotalSkips) errors.add('skip_count', 'total_skips_exceeded')
  if (!errors.empty) throw new ValidationFailed(errors)
  // A subscription with no date skips "from today": today + interval (C8).
  const actionable = s.actionable_date === null ? addInterval(today, s.interval_length, s.interval_units) : nextDate(s, s.actionable_date)
  // Past 9999-12-31 a date no longer reads YYYY-MM-DD (C3): the skip is refused, not written.
  if (!isDate(actionable)) fail('actionable_date', 'invalid_date')
  return {
    patch: {
      actionable_date: actionable,
      ...(s.actionable_date === null ? { anchor_day: dayOf(actionable) } : {}),
      skip_count: s.skip_count + 1,
      successive_skip_count: s.successive_skip_count + 1,
    },
    event: 'subscription.skipped',
  }
}

/**
 * Cancel from any state. With N days of notice, a cancel that comes later than N days before
 * the next date leaves one more delivery: pending_cancellation until the processor makes it.
 */
export function cancel(s: Subscription, today: string, noticeDays: number): Transition | null {
  if (s.state === 'canceled') return null
  const tooLate = noticeDays > 0 && s.actionable_date !== null && !ended(s) && addDays(s.actionable_date, -noticeDays) < today
  if (tooLate) {
    if (s.state === 'pending_cancellation') return null
    return { patch: { state: 'pending_cancellation' }, event: 'subscription.cancellation_pending' }
  }
  return { patch: { state: 'canceled', actionable_date: null, paused: false }, event: 'subscription.canceled' }
}

/** Pause: active only; an earlier date is moved to tomorrow; no date pauses indefinitely. */
export function pause(s: Subscription, rawDate: unknown, today: string): Transition | null {
  if (s.state !== 'active') fail('paused', 'cannot_pause')
  const date = readOptionalDate(rawDate)
  if (s.paused) return null
  if (date === undefined) return { patch: { paused: true, actionable_date: null }, event: 'subscription.paused' }
  const tomorrow = addDays(today, 1)
  const resumeOn = date < tomorrow ? tomorrow : date
  return { patch: { paused: true, actionable_date: resumeOn, anchor_day: dayOf(resumeOn) }, event: 'subscription.paused' }
}

/** Resume: active only; on the given date or tomorrow, whichever is later. */
export function resume(s: Subscription, rawDate: unknown, today: string): Transition | null {
  if (s.state !== 'active') fail('paused', 'cannot_pause')
  const date = readOptionalDate(rawDate)
  if (!s.paused) return null
  const tomorrow = addDays(today, 1)
  const on = date === undefined || date < tomorrow ? tomorrow : date
  return { patch: { paused: false, actionable_date: on, anchor_day: dayOf(on) }, event: 'subscription.resumed' }
}

/** Activate a canceled, pending or inactive subscription: next date today + one interval. */
export function activate(s: Subscription, today: string): Transition | null {
  if (s.state === 'active') return null
  const on = addInterval(today, s.interval_length, s.interval_units)
  return { patch: { state: 'active', paused: false, actionable_date: on, anchor_day: dayOf(on) }, event: 'subscription.activated' }
}

function readOptionalDate(raw: unknown): string | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined
  if (!isDate(raw)) fail('actionable_date', 'invalid_date')
  return raw
}
