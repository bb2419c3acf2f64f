import { dayOf, firstOccurrenceAfter } from './dates.ts'
import type { State, Subscription, SubscriptionPatch } from './types.ts'

/**
 * What the processor does with one subscription on `today` (C9), as a pure decision; the store
 * applies it in the batch's unit of writes, events included.
 *
 * - `wait`: nothing to do (no line items, or not due after all).
 * - `end`: the date is already past the end date: inactive (canceled when a cancellation was
 *   pending), and no installment.
 * - `resume`: a paused subscription whose resume date arrived, with nothing to deliver.
 * - `install`: an installment due on `dueDate`; then the subscription takes `state` and
 *   `nextDate`, is unpaused, and its successive skips reset. `events` are the subscription's
 *   own events, written after `installment.created`.
 */
export type DueDecision =
  | { readonly kind: 'wait' }
  | { readonly kind: 'end'; readonly patch: SubscriptionPatch; readonly event: string }
  | { readonly kind: 'resume'; readonly patch: SubscriptionPatch; readonly event: string }
  | {
      readonly kind: 'install'
      readonly dueDate: string
      readonly nextDate: string | null
      readonly state: State
      readonly events: readonly string[]
    }

/** What a decision reads of a subscription. */
export type DueFields = Pick<Subscription, 'state' | 'paused' | 'interval_length' | 'interval_units' | 'actionable_date' | 'anchor_day' | 'end_date'>

const WAIT = { kind: 'wait' } as const

const acts = (s: DueFields): boolean => s.state === 'active' || s.state === 'pending_cancellation'

function ending(s: DueFields): DueDecision {
  // A pending cancellation is the customer's own wish to stop: it wins over "ran out of dates".
  if (s.state === 'pending_cancellation') {
    return { kind: 'end', patch: { state: 'canceled', actionable_date: null, paused: false }, event: 'subscription.canceled' }
  }
  return { kind: 'end', patch: { state: 'inactive', actionable_date: null, paused: false }, event: 'subscription.ended' }
}

/** A due subscription: `actionable_date` ≤ today (a paused one's date is its resume date). */
export function decideDue(s: DueFields, hasLineItems: boolean, today: string): DueDecision {
  const due = s.actionable_date
  if (!acts(s) || due === null || due > today) return WAIT
  if (s.end_date !== null && due > s.end_date) return ending(s)
  if (!hasLineItems) {
    return s.paused ? { kind: 'resume', patch: { paused: false }, event: 'subscription.resumed' } : WAIT
  }
  const resumed = s.paused ? ['subscription.resumed'] : []
  // The next delivery after a pending cancellation never comes.
  if (s.state === 'pending_cancellation') {
    return { kind: 'install', dueDate: due, nextDate: null, state: 'canceled', events: [...resumed, 'subscription.canceled'] }
  }
  // Missed periods collapse: one installment for the due date, then the first date after today.
  const next = firstOccurrenceAfter(due, today, s.interval_length, s.interval_units, s.anchor_day ?? dayOf(due))
  if (s.end_date !== null && next > s.end_date) {
    return { kind: 'install', dueDate: due, nextDate: null, state: 'inactive', events: [...resumed, 'subscription.ended'] }
  }
  return { kind: 'install', dueDate: due, nextDate: next, state: 'active', events: resumed }
}

/**
 * A subscription that is not due yet but whose end date has passed while its next date lies
 * beyond it: no delivery will ever come, so it ends now rather than on that later date (C8).
 */
export function decideEnded(s: DueFields, today: string): DueDecision {
  if (!acts(s) || s.end_date === null || s.actionable_date === null) return WAIT
  return s.end_date < today && s.actionable_date > s.end_date ? ending(s) : WAIT
}
