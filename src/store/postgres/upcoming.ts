import type { UpcomingRow, UpcomingTx } from '../api.ts'
import type { Sql } from './sql.ts'

const ACTING = "state IN ('active', 'pending_cancellation')"

/**
 * The processor's walk for upcoming deliveries (C17), as the SQLite store's (upcoming-store.ts):
 * read without locks, then marked by a compare-and-set that locks only the rows it marks and
 * steps over rows another unit holds (SKIP LOCKED): a customer's request is never waited for, and
 * the next run tells of a row stepped over. A row another run marked since it was read fails the
 * set: `upcoming_for` is read again under the lock (READ COMMITTED re-reads a row it locks).
 */
const SCAN = `SELECT s.id, s.state, s.actionable_date, s.end_date,
    CASE WHEN s.actionable_date > $1 AND s.actionable_date <= $2 AND s.upcoming_for IS DISTINCT FROM s.actionable_date
      THEN EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = s.id) ELSE false END AS has_items,
    s.upcoming_for, s.due_floor
  FROM subscriptions s
  WHERE s.${ACTING} AND s.due_floor >= $3 AND s.due_floor <= $2 AND (s.due_floor > $3 OR s.id > $4)
  ORDER BY s.due_floor, s.id LIMIT $5`

const MARK = `WITH plan AS (SELECT * FROM unnest($1::bigint[], $2::text[]) AS p(id, date)),
  held AS (
    SELECT s.id FROM subscriptions s JOIN plan p ON p.id = s.id
    WHERE s.actionable_date = p.date AND s.upcoming_for IS DISTINCT FROM p.date AND s.${ACTING}
      AND (s.end_date IS NULL OR s.end_date >= p.date)
      AND EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = s.id)
    ORDER BY s.id FOR UPDATE OF s SKIP LOCKED)
  UPDATE subscriptions s SET upcoming_for = s.actionable_date FROM held WHERE s.id = held.id RETURNING s.id`

export function upcomingRepo(sql: Sql): UpcomingTx {
  return {
    scan: (today, horizon, afterFloor, afterId, limit) => sql.rows<UpcomingRow>(SCAN, [today, horizon, afterFloor, afterId, limit]),
    async mark(plans) {
      if (plans.length === 0) return []
      const rows = await sql.rows<{ id: number }>(MARK, [plans.map((p) => p.id), plans.map((p) => p.date)])
      return rows.map((r) => r.id).sort((a, b) => a - b)
    },
  }
}
