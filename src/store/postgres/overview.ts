import type { EventRecord, State } from '../../domain/types.ts'
import { STATES } from '../../domain/types.ts'
import { OUTCOME_RESULTS, type OutcomeResult } from '../../domain/outcome.ts'
import type { IdRange, OverviewReads } from '../api.ts'
import type { Sql } from './sql.ts'
import { EVENT_COLUMNS, toEvent, type EventRow } from './events.ts'
import { columns } from './rows.ts'

// States, paused, and the date of every subscription that will make an installment on it up to
// `through` (C9: acting, with something to deliver; a paused one with a resume date is resumed
// and processed on that date). The line item probe runs only for rows that may deliver.
const TALLY = `SELECT s.state, s.paused,
    CASE WHEN s.state IN ('active', 'pending_cancellation') AND s.actionable_date <= $3
      AND EXISTS (SELECT 1 FROM line_items li WHERE li.subscription_id = s.id) THEN s.actionable_date END AS due,
    count(*) AS n
  FROM subscriptions s WHERE s.id > $1 AND s.id <= $2 GROUP BY 1, 2, 3`

// An attempt's local day: its time shifted by the zone's offset of the segment it falls in. In
// day order, as SQLite's grouping answers them (the caller keeps the first day seen first).
const OUTCOMES = `SELECT to_char((created_at::timestamptz AT TIME ZONE 'UTC') + make_interval(mins => $5::integer), 'YYYY-MM-DD') COLLATE "C" AS day,
    result, count(*) AS n
  FROM installment_attempts WHERE id > $1 AND id <= $2 AND created_at >= $3 AND created_at < $4 GROUP BY 1, 2 ORDER BY 1, 2`

// A subscription's events are a chain, newest first (the events_chain trigger): from its latest
// event, or from the one before `before`, for `limit` links.
const EVENTS_BEFORE = `WITH RECURSIVE chain(id, n) AS (
    SELECT CASE WHEN $2::bigint = 0 THEN s.last_event_id
      ELSE (SELECT e.prev_id FROM events e WHERE e.id = $2::bigint AND e.subscription_id = $1::bigint) END, 0
      FROM subscriptions s WHERE s.id = $1::bigint
    UNION ALL
    SELECT e.prev_id, chain.n + 1 FROM chain JOIN events e ON e.id = chain.id WHERE e.prev_id IS NOT NULL AND chain.n + 1 < $3::integer
  )
  SELECT ${columns(EVENT_COLUMNS, 'e')} FROM chain JOIN events e ON e.id = chain.id ORDER BY chain.n`

/** The ids (after, upto] of the rows made from `from` on: ids follow time, so a bisection finds the first. */
async function rangeFrom<T extends string | number>(last: number, at: (id: number) => Promise<T | undefined>, from: T): Promise<IdRange> {
  let lo = 1
  let hi = last + 1
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    const t = await at(mid)
    if (t !== undefined && t >= from) hi = mid
    else lo = mid + 1
  }
  return { after: lo - 1, upto: last }
}

/**
 * The reads only the staff dashboard makes (src/admin/overview.ts, docs/console.md): tallies over
 * whole tables, read a range of ids at a time, as the SQLite store reads them.
 */
export function overviewRepo(sql: Sql): OverviewReads {
  const one = async (text: string, values: readonly unknown[] = []): Promise<number> => (await sql.one<{ n: number }>(text, values))?.n ?? 0
  // Attempts and deliveries get ids in the order they are made: the first id of a period is
  // found by bisecting on the id (a few lookups), so the last 90 days are read, not the history.
  const attemptAt = async (id: number): Promise<string | undefined> =>
    (await sql.one<{ t: string }>('SELECT created_at AS t FROM installment_attempts WHERE id >= $1 ORDER BY id LIMIT 1', [id]))?.t
  const deliveryAt = async (id: number): Promise<number | undefined> =>
    (await sql.one<{ t: number }>('SELECT created_ms AS t FROM webhook_deliveries WHERE id >= $1 ORDER BY id LIMIT 1', [id]))?.t

  return {
    async subscriptionIds() {
      return { after: 0, upto: await one('SELECT coalesce(max(id), 0) AS n FROM subscriptions') }
    },
    async tallySubscriptions(after, upto, dueThrough) {
      const byState = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>
      let paused = 0
      const due: Record<string, number> = {}
      const rows = await sql.rows<{ state: State; paused: boolean; due: string | null; n: number }>(TALLY, [after, upto, dueThrough])
      for (const r of rows) {
        byState[r.state] += r.n
        // `paused` counts active ones (the API's word): paused is a flag, and a pending cancellation keeps it.
        if (r.paused && r.state === 'active') paused += r.n
        if (r.due !== null) due[r.due] = (due[r.due] ?? 0) + r.n
      }
      return { by_state: byState, paused, due }
    },
    async attemptIds(fromIso) {
      return rangeFrom(await one('SELECT coalesce(max(id), 0) AS n FROM installment_attempts'), attemptAt, fromIso)
    },
    async tallyOutcomes(after, upto, segments, toIso) {
      const days = new Map<string, Record<OutcomeResult, number>>()
      for (const [i, s] of segments.entries()) {
        const end = segments[i + 1]?.from ?? toIso
        const rows = await sql.rows<{ day: string; result: string; n: number }>(OUTCOMES, [after, upto, s.from, end, s.offset_minutes])
        for (const r of rows) {
          const day = days.get(r.day) ?? (Object.fromEntries(OUTCOME_RESULTS.map((o) => [o, 0])) as Record<OutcomeResult, number>)
          if (r.result in day) day[r.result as OutcomeResult] += r.n
          days.set(r.day, day)
        }
      }
      return [...days].map(([date, counts]) => ({ date, ...counts }))
    },
    async deliveryIds(sinceMs) {
      return rangeFrom(await one('SELECT coalesce(max(id), 0) AS n FROM webhook_deliveries'), deliveryAt, sinceMs)
    },
    countFailedDeliveries: (after, upto, sinceMs) =>
      one("SELECT count(*) AS n FROM webhook_deliveries WHERE id > $1 AND id <= $2 AND state = 'failed' AND created_ms >= $3", [after, upto, sinceMs]),
    // Pending deliveries are few and indexed; one with an attempt has failed at least once (a
    // success would have made it delivered).
    countRetryingDeliveries: () => one("SELECT count(*) AS n FROM webhook_deliveries WHERE state = 'pending' AND attempt_count > 0"),
    async eventsOfSubscription(subscriptionId, before, limit): Promise<EventRecord[]> {
      return (await sql.rows<EventRow>(EVENTS_BEFORE, [subscriptionId, before, limit])).map(toEvent)
    },
  }
}
