import type { DatabaseSync } from 'node:sqlite'
import type { State } from '../../domain/types.ts'
import type { UpcomingRow } from '../api.ts'
import { prepareValues, type Values } from './rows.ts'

const ACTING = "state IN ('active', 'pending_cancellation')"

/**
 * The processor's walk for upcoming deliveries (C17), through the due index: a row's floor is never
 * after its date (migration 4), so every subscription dated up to the horizon is in the range
 * read. Whether it has a line item is looked up only for a row dated inside the window and not
 * told of that date yet (the rest are read to move the cursor, and cost an index entry each).
 */
export function upcomingStore(db: DatabaseSync) {
  const scan = prepareValues(db, `SELECT s.id, s.state, s.actionable_date, s.end_date,
      CASE WHEN s.actionable_date > ?1 AND s.actionable_date <= ?2 AND s.upcoming_for IS NOT s.actionable_date
        THEN EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = s.id) ELSE 0 END,
      s.upcoming_for, s.due_floor
    FROM subscriptions s INDEXED BY subscriptions_due
    WHERE s.${ACTING} AND s.due_floor >= ?3 AND s.due_floor <= ?2 AND (s.due_floor > ?3 OR s.id > ?4)
    ORDER BY s.due_floor, s.id LIMIT ?5`)
  // Every plan of a unit in one statement (?1: [[id, date], …] as JSON).
  const mark = prepareValues(db, `UPDATE subscriptions SET upcoming_for = p.value ->> 1 FROM json_each(?1) p
    WHERE subscriptions.id = p.value ->> 0 AND actionable_date = p.value ->> 1 AND upcoming_for IS NOT p.value ->> 1
      AND ${ACTING} AND (end_date IS NULL OR end_date >= p.value ->> 1)
      AND EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = subscriptions.id)
    RETURNING subscriptions.id`)

  return {
    scan(today: string, horizon: string, afterFloor: string, afterId: number, limit: number): UpcomingRow[] {
      return (scan.all(today, horizon, afterFloor, afterId, limit) as unknown as Values[]).map((r) => ({
        id: r[0] as number,
        state: r[1] as State,
        actionable_date: r[2] as string | null,
        end_date: r[3] as string | null,
        has_items: r[4] === 1,
        upcoming_for: r[5] as string | null,
        due_floor: r[6] as string | null,
      }))
    },
    mark(plans: readonly { readonly id: number; readonly date: string }[]): number[] {
      if (plans.length === 0) return []
      return (mark.all(JSON.stringify(plans.map((p) => [p.id, p.date]))) as unknown as [number][]).map((r) => r[0]).sort((a, b) => a - b)
    },
  }
}
