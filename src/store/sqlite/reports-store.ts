import type { DatabaseSync } from 'node:sqlite'
import type { IntervalUnit } from '../../domain/dates.ts'
import type { IdRange, RecurringGroup, ReportMonth } from '../api.ts'
import { discountOf } from '../money-sql.ts'
import { prepareValues } from './rows.ts'

/**
 * The shop's reports (C16, src/admin/reports.ts). The recurring one reads the subscriptions a
 * range of ids at a time (the caller lets other requests run between ranges); the monthly one
 * reads report_months (migration 10), a few rows per month whatever the history holds.
 */
export function reportsStore(db: DatabaseSync) {
  const maxId = prepareValues(db, 'SELECT coalesce(max(id), 0) FROM subscriptions')
  // Each acting, unpaused subscription of the currency in the range (through its partial index,
  // migration 10) with its total now (C16: Σ per line of quantity × price less the discount
  // rounded half-up; null when a line has no price there), counted and summed by interval; the
  // caller applies the months-per-interval factors exactly. Grouped by subscription first, in the
  // index's order (no sort), then by interval.
  const recurring = prepareValues(db, `SELECT interval_units, interval_length, count(*), count(*) - count(total), coalesce(sum(total), 0)
    FROM (SELECT s.interval_units, s.interval_length,
        CASE WHEN count(p.amount) = count(li.id) THEN coalesce(sum(li.quantity * p.amount - ${discountOf('li.quantity * p.amount', 'c.discount_bp')}), 0) END AS total
      FROM subscriptions s INDEXED BY subscriptions_recurring
        LEFT JOIN line_items li ON li.subscription_id = s.id LEFT JOIN subscribables c ON c.id = li.subscribable_id
        LEFT JOIN subscribable_prices p ON p.subscribable_id = li.subscribable_id AND p.currency = ?1
      WHERE s.state IN ('active', 'pending_cancellation') AND s.paused = 0 AND s.currency = ?1 AND s.id > ?2 AND s.id <= ?3
      GROUP BY s.id)
    GROUP BY 1, 2`)
  const months = prepareValues(db, `SELECT month, sum(new_subscriptions), sum(canceled_subscriptions), sum(active_change),
      sum(installments_made), sum(installments_fulfilled), sum(fulfilled_total)
    FROM report_months WHERE currency = ?1 AND month >= ?2 AND month <= ?3 GROUP BY month ORDER BY month`)
  const activeBefore = prepareValues(db, 'SELECT coalesce(sum(active_change), 0) FROM report_months WHERE currency = ?1 AND month < ?2')

  return {
    subscriptionIds(): IdRange {
      return { after: 0, upto: (maxId.get() as unknown as [number])[0] }
    },
    recurring(currency: string, after: number, upto: number): RecurringGroup[] {
      return (recurring.all(currency, after, upto) as unknown as [IntervalUnit, number, number, number, number | bigint][]).map((r) => ({
        interval_units: r[0], interval_length: r[1], subscriptions: r[2], unpriced: r[3], total_minor: String(r[4]),
      }))
    },
    months(currency: string, from: string, to: string): { active_before: number; months: ReportMonth[] } {
      const rows = months.all(currency, from, to) as unknown as [string, number, number, number, number, number, number | bigint][]
      return {
        active_before: (activeBefore.get(currency, from) as unknown as [number])[0],
        months: rows.map((r) => ({
          month: r[0], new_subscriptions: r[1], canceled_subscriptions: r[2], active_change: r[3],
          installments_made: r[4], installments_fulfilled: r[5], fulfilled_total_minor: String(r[6]),
        })),
      }
    },
  }
}
export type ReportsStore = ReturnType<typeof reportsStore>
