import type { DatabaseSync } from 'node:sqlite'
import type { EventRecord, State } from '../../domain/types.ts'
import { STATES } from '../../domain/types.ts'
import { OUTCOME_RESULTS, type OutcomeResult } from '../../domain/outcome.ts'
import { columns, prepareValues, type Values } from './rows.ts'
import { EVENT_COLUMNS, toEvent } from './events-store.ts'
import type { IdRange, OffsetSegment, OutcomeDay, SubscriptionTally } from '../api.ts'

/**
 * The reads only the staff dashboard makes (src/admin/overview.ts, docs/console.md): tallies over
 * whole tables, read a range of ids at a time so that the caller can let other requests run in
 * between (a read here runs on the event loop, and a million rows take seconds).
 */
export function overviewStore(db: DatabaseSync) {
  const subscriptionIds = prepareValues(db, 'SELECT coalesce(max(id), 0) FROM subscriptions')
  // States, paused, and the date of every subscription that will make an installment on it up to
  // `through` (C9: acting, with something to deliver; a paused one with a resume date is resumed
  // and processed on that date). The line item probe runs only for rows that may deliver.
  const tally = prepareValues(db, `SELECT s.state, s.paused,
      CASE WHEN s.state IN ('active', 'pending_cancellation') AND s.actionable_date <= ?3
        AND EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = s.id) THEN s.actionable_date END AS due,
      count(*)
    FROM subscriptions s WHERE s.id > ?1 AND s.id <= ?2 GROUP BY 1, 2, 3`)
  // Attempts and deliveries get ids in the order they are made: the first id of a period is
  // found by bisecting on the rowid (a few lookups), so the last 90 days are read, not the history.
  const attemptAt = prepareValues(db, 'SELECT created_at FROM installment_attempts WHERE id >= ? ORDER BY id LIMIT 1')
  const attemptIds = prepareValues(db, 'SELECT coalesce(max(id), 0) FROM installment_attempts')
  // An attempt's local day: its time shifted by the zone's offset of the segment it falls in.
  const outcomes = prepareValues(db, `SELECT date(created_at, ?5) AS day, result, count(*) FROM installment_attempts
    WHERE id > ?1 AND id <= ?2 AND created_at >= ?3 AND created_at < ?4 GROUP BY 1, 2`)
  const deliveryAt = prepareValues(db, 'SELECT created_ms FROM webhook_deliveries WHERE id >= ? ORDER BY id LIMIT 1')
  const deliveryIds = prepareValues(db, 'SELECT coalesce(max(id), 0) FROM webhook_deliveries')
  const failed = prepareValues(db, "SELECT count(*) FROM webhook_deliveries WHERE id > ?1 AND id <= ?2 AND state = 'failed' AND created_ms >= ?3")
  // Pending deliveries are few and indexed; one with an attempt has failed at least once (a
  // success would have made it delivered).
  const retrying = prepareValues(db, `SELECT count(*) FROM webhook_deliveries INDEXED BY webhook_deliveries_pending
    WHERE state = 'pending' AND attempt_count > 0`)
  // A subscription's events are a chain, newest first (migration 2): from its latest event, or
  // from the one before `before`, for `limit` links.
  const eventsBefore = prepareValues(db, `WITH RECURSIVE chain(id, n) AS (
      SELECT CASE WHEN ?2 = 0 THEN s.last_event_id ELSE (SELECT e.prev_id FROM events e WHERE e.id = ?2 AND e.subscription_id = ?1) END, 0
        FROM subscriptions s WHERE s.id = ?1
      UNION ALL
      SELECT e.prev_id, chain.n + 1 FROM chain JOIN events e ON e.id = chain.id WHERE e.prev_id IS NOT NULL AND chain.n + 1 < ?3
    )
    SELECT ${columns(EVENT_COLUMNS, 'e')} FROM chain JOIN events e ON e.id = chain.id ORDER BY chain.n`)

  const one = (stmt: ReturnType<typeof prepareValues>, ...args: (number | string)[]): number => (stmt.get(...args) as unknown as [number])[0]

  /** The ids (after, upto] of the rows made from `from` on; ids follow time (see above). */
  function rangeFrom<T extends string | number>(last: number, at: (id: number) => T | undefined, from: T): IdRange {
    let lo = 1
    let hi = last + 1
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2)
      const t = at(mid)
      if (t !== undefined && t >= from) hi = mid
      else lo = mid + 1
    }
    return { after: lo - 1, upto: last }
  }

  return {
    subscriptionIds(): IdRange {
      return { after: 0, upto: one(subscriptionIds) }
    },
    tallySubscriptions(after: number, upto: number, dueThrough: string): SubscriptionTally {
      const byState = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>
      let paused = 0
      const due: Record<string, number> = {}
      for (const [state, isPaused, date, n] of tally.all(after, upto, dueThrough) as unknown as [State, number, string | null, number][]) {
        byState[state] += n
        // `paused` counts active ones (the API's word): paused is a flag, and a pending cancellation keeps it.
        if (isPaused === 1 && state === 'active') paused += n
        if (date !== null) due[date] = (due[date] ?? 0) + n
      }
      return { by_state: byState, paused, due }
    },
    attemptIds(fromIso: string): IdRange {
      return rangeFrom(one(attemptIds), (id) => (attemptAt.get(id) as Values | undefined)?.[0] as string | undefined, fromIso)
    },
    tallyOutcomes(after: number, upto: number, segments: readonly OffsetSegment[], toIso: string): OutcomeDay[] {
      const days = new Map<string, Record<OutcomeResult, number>>()
      segments.forEach((s, i) => {
        const end = segments[i + 1]?.from ?? toIso
        const shift = `${s.offset_minutes >= 0 ? '+' : ''}${s.offset_minutes} minutes`
        for (const [date, result, n] of outcomes.all(after, upto, s.from, end, shift) as unknown as [string, OutcomeResult, number][]) {
          const day = days.get(date) ?? (Object.fromEntries(OUTCOME_RESULTS.map((r) => [r, 0])) as Record<OutcomeResult, number>)
          if (result in day) day[result] += n
          days.set(date, day)
        }
      })
      return [...days].map(([date, counts]) => ({ date, ...counts }))
    },
    deliveryIds(sinceMs: number): IdRange {
      return rangeFrom(one(deliveryIds), (id) => (deliveryAt.get(id) as Values | undefined)?.[0] as number | undefined, sinceMs)
    },
    countFailedDeliveries(after: number, upto: number, sinceMs: number): number {
      return one(failed, after, upto, sinceMs)
    },
    countRetryingDeliveries(): number {
      return one(retrying)
    },
    eventsOfSubscription(subscriptionId: number, before: number, limit: number): EventRecord[] {
      return (eventsBefore.all(subscriptionId, before, limit) as unknown as Values[]).map(toEvent)
    },
  }
}
export type OverviewStore = ReturnType<typeof overviewStore>
