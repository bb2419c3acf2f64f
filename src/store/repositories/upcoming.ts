/** The processor's walk for upcoming deliveries (C17): the repository's records and interfaces, exported by ../api.ts. */
import type { State } from '../../domain/types.ts'

/** What the processor reads of a subscription to tell whether it is upcoming (C17), in the due index's order. */
export interface UpcomingRow {
  readonly id: number
  readonly state: State
  readonly actionable_date: string | null
  readonly end_date: string | null
  /** Read only for a row dated inside the window and not told of that date yet; false for the others. */
  readonly has_items: boolean
  /** The date a `subscription.upcoming` event was last written for. */
  readonly upcoming_for: string | null
  readonly due_floor: string | null
}

/** The processor's walk for C17's upcoming deliveries, through the due index (floor, id). */
export interface UpcomingTx {
  /** At most `limit` acting subscriptions after the cursor, with floors up to `horizon`. */
  scan(today: string, horizon: string, afterFloor: string, afterId: number, limit: number): Promise<UpcomingRow[]>
  /**
   * Marks each subscription as told of `date`, only while it still acts on that date, has an item
   * and was not told of it yet (a compare-and-set; PostgreSQL steps over rows others hold);
   * answers the ids marked, each of which gets its event.
   */
  mark(plans: readonly { readonly id: number; readonly date: string }[]): Promise<number[]>
}
