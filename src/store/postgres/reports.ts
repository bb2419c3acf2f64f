import type { IntervalUnit } from '../../domain/dates.ts'
import type { ReportReads } from '../api.ts'
import { discountOf } from '../money-sql.ts'
import type { Sql } from './sql.ts'

// As SQLite's reports-store.ts: each acting, unpaused subscription of the currency with its total
// now, counted and summed by interval. Sums of bigint are numeric here, and come back as text.
const RECURRING = `SELECT interval_units, interval_length, count(*) AS n, count(*) - count(total) AS unpriced, coalesce(sum(total), 0)::text AS total
  FROM (SELECT s.interval_units, s.interval_length,
      CASE WHEN count(p.amount) = count(li.id) THEN coalesce(sum(li.quantity * p.amount - ${discountOf('li.quantity * p.amount', 'c.discount_bp')}), 0) END AS total
    FROM subscriptions s
      LEFT JOIN line_items li ON li.subscription_id = s.id LEFT JOIN subscribables c ON c.id = li.subscribable_id
      LEFT JOIN subscribable_prices p ON p.subscribable_id = li.subscribable_id AND p.currency = $1
    WHERE s.state IN ('active', 'pending_cancellation') AND NOT s.paused AND s.currency = $1 AND s.id > $2 AND s.id <= $3
    GROUP BY s.id) x
  GROUP BY 1, 2`

// report_months, every shard summed (migration 10).
const MONTHS = `SELECT month, sum(new_subscriptions) AS n_new, sum(canceled_subscriptions) AS n_canceled, sum(active_change) AS n_active,
    sum(installments_made) AS n_made, sum(installments_fulfilled) AS n_fulfilled, sum(fulfilled_total)::text AS total
  FROM report_months WHERE currency = $1 AND month >= $2 AND month <= $3 GROUP BY month ORDER BY month`

/** The shop's reports (C16). */
export function reportsRepo(sql: Sql): ReportReads {
  return {
    async subscriptionIds() {
      return { after: 0, upto: Number((await sql.one<{ m: number }>('SELECT coalesce(max(id), 0) AS m FROM subscriptions', []))?.m ?? 0) }
    },
    async recurring(currency, after, upto) {
      const rows = await sql.rows<{ interval_units: IntervalUnit; interval_length: number; n: number; unpriced: number; total: string }>(RECURRING, [currency, after, upto])
      return rows.map((r) => ({
        interval_units: r.interval_units, interval_length: r.interval_length, subscriptions: Number(r.n), unpriced: Number(r.unpriced), total_minor: r.total,
      }))
    },
    async months(currency, from, to) {
      const before = await sql.one<{ n: number }>('SELECT coalesce(sum(active_change), 0) AS n FROM report_months WHERE currency = $1 AND month < $2', [currency, from])
      const rows = await sql.rows<{ month: string; n_new: number; n_canceled: number; n_active: number; n_made: number; n_fulfilled: number; total: string }>(MONTHS, [currency, from, to])
      return {
        active_before: Number(before?.n ?? 0),
        months: rows.map((r) => ({
          month: r.month, new_subscriptions: Number(r.n_new), canceled_subscriptions: Number(r.n_canceled), active_change: Number(r.n_active),
          installments_made: Number(r.n_made), installments_fulfilled: Number(r.n_fulfilled), fulfilled_total_minor: r.total,
        })),
      }
    },
  }
}
