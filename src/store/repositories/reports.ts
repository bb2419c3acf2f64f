/** The shop's reports (C16): the repository's records and interfaces, exported by ../api.ts. */
import type { IntervalUnit } from '../../domain/dates.ts'
import type { IdRange } from './overview.ts'

/** C16's recurring report: acting, unpaused subscriptions of one currency in a range of ids, by interval. */
export interface RecurringGroup {
  readonly interval_units: IntervalUnit
  readonly interval_length: number
  readonly subscriptions: number
  /** Those with a null total (a line without a price in the currency). */
  readonly unpriced: number
  /** Σ of the others' totals (C16: each line's discount rounded half-up), in minor units, as a decimal string. */
  readonly total_minor: string
}

/** C16's monthly report: one UTC month's counts (report_months, migration 10), every shard summed. */
export interface ReportMonth {
  readonly month: string
  readonly new_subscriptions: number
  readonly canceled_subscriptions: number
  /** Subscriptions that started acting less those that stopped, in the month. */
  readonly active_change: number
  readonly installments_made: number
  readonly installments_fulfilled: number
  /** Σ of the fulfilled installments' frozen totals, in minor units, as a decimal string. */
  readonly fulfilled_total_minor: string
}

/** The reads of the shop's reports (src/admin/reports.ts). */
export interface ReportReads {
  subscriptionIds(): Promise<IdRange>
  recurring(currency: string, after: number, upto: number): Promise<RecurringGroup[]>
  /** The months from `from` through `to` that have counts (others have none), in order, and the active change of every month before `from`. */
  months(currency: string, from: string, to: string): Promise<{ readonly active_before: number; readonly months: readonly ReportMonth[] }>
}
