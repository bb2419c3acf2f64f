/** The console's overview (C18): the repository's records and interfaces, exported by ../api.ts. */
import type { EventRecord, State } from '../../domain/types.ts'

/** Ids `after` < id <= `upto`: a range of rows the dashboard's tallies read at a time. */
export interface IdRange {
  readonly after: number
  readonly upto: number
}

/**
 * The staff dashboard's count of a range of subscriptions (src/admin/overview.ts): by state;
 * `paused` among them (active ones); and per actionable date, those that will make an installment
 * on it (C9: acting, with a line item), dates up to the one asked for.
 */
export interface SubscriptionTally {
  readonly by_state: Record<State, number>
  readonly paused: number
  readonly due: Readonly<Record<string, number>>
}

/** Outcomes recorded on one day (installment attempts, C9), by result. */
export interface OutcomeDay {
  readonly date: string
  readonly fulfilled: number
  readonly failed: number
  readonly payment_failed: number
  readonly out_of_stock: number
}

/** From instant `from` (ISO) on, until the next segment, local time is UTC + `offset_minutes`. */
export interface OffsetSegment {
  readonly from: string
  readonly offset_minutes: number
}

/**
 * Reads only the staff dashboard makes: tallies over whole tables, each over a range of ids, so
 * the caller reads a large table in steps and lets other requests run in between.
 */
export interface OverviewReads {
  subscriptionIds(): Promise<IdRange>
  tallySubscriptions(after: number, upto: number, dueThrough: string): Promise<SubscriptionTally>
  /** The installment attempts recorded from `fromIso` on (ids follow time). */
  attemptIds(fromIso: string): Promise<IdRange>
  /** Outcomes of the attempts in the range, per local day (`segments`: the zone's offsets up to `toIso`). */
  tallyOutcomes(after: number, upto: number, segments: readonly OffsetSegment[], toIso: string): Promise<OutcomeDay[]>
  /** The webhook deliveries made from `sinceMs` on. */
  deliveryIds(sinceMs: number): Promise<IdRange>
  /** Deliveries in the range, made from `sinceMs` on, given up on (C10: failed). */
  countFailedDeliveries(after: number, upto: number, sinceMs: number): Promise<number>
  /** Deliveries pending after at least one failed attempt. */
  countRetryingDeliveries(): Promise<number>
  /** A subscription's events, newest first, older than the event `before` (0: from the newest). */
  eventsOfSubscription(subscriptionId: number, before: number, limit: number): Promise<EventRecord[]>
}
