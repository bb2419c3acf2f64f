import { addDays } from './dates.ts'
import type { State } from './types.ts'

/**
 * C17's upcoming deliveries, as a pure rule: a subscription is told of its next date once, when
 * that date is at most `days` days away and the subscription will act on it (C9's conditions as
 * of that date: acting, with a line item, not past its end date; a paused one's date is its
 * resume date, so it acts then). Dates from tomorrow on: a date that has come is the processor's
 * own business the same run, and 0 days turns the rule off.
 */
export interface UpcomingFields {
  readonly state: State
  readonly actionable_date: string | null
  readonly end_date: string | null
  readonly has_items: boolean
  /** The date it was last told of. */
  readonly upcoming_for: string | null
}

/** The last date `days` days from `today` (the window is today < date ≤ horizon). */
export function upcomingHorizon(today: string, days: number): string {
  return addDays(today, days)
}

/** The date to tell the subscription of now, or undefined. */
export function upcomingDate(s: UpcomingFields, today: string, horizon: string): string | undefined {
  const date = s.actionable_date
  if (s.state !== 'active' && s.state !== 'pending_cancellation') return undefined
  if (date === null || date <= today || date > horizon || date === s.upcoming_for) return undefined
  if (s.end_date !== null && date > s.end_date) return undefined
  return s.has_items ? date : undefined
}
