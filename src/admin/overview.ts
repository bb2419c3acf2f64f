import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { addDays, dateIn } from '../domain/dates.ts'
import { STATES, type State } from '../domain/types.ts'
import { OUTCOME_RESULTS, type OutcomeResult } from '../domain/outcome.ts'
import type { IdRange } from '../store/api.ts'
import { offsetSegments } from './zone-offsets.ts'

/** Both charts cover 90 days: the next 90 (today first) and the last 90 (today last). */
export const OVERVIEW_DAYS = 90
/** Failed deliveries are counted over the deliveries made in the last 30 days (a bounded read). */
export const FAILED_DELIVERY_DAYS = 30
/**
 * Rows read at a time. SQLite answers on the event loop: a million subscriptions read at once
 * would hold every other request for seconds; in steps of this many ids, for tens of ms at a time.
 */
export const STEP_IDS = 20_000
const DAY_MS = 86_400_000

/** Reads `range` a step at a time, letting other requests run between steps. */
export async function inSteps(range: IdRange, read: (after: number, upto: number) => Promise<void>, step = STEP_IDS): Promise<void> {
  for (let after = range.after; after < range.upto; after += step) {
    await read(after, Math.min(after + step, range.upto))
    await new Promise<void>((resolve) => setImmediate(resolve))
  }
}

/**
 * GET /admin/api/v1/overview: what the staff dashboard opens on (docs/console.md). Due dates are
 * the service clock's (C8: the processor's "today"); outcomes are placed on the day they were
 * recorded, in real time and REPLENISH_TIME_ZONE, as attempts' timestamps are real time. Read in
 * steps, the counts are not one snapshot: a change made meanwhile may show in one and not another.
 */
export const showOverview = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const store = app.store.overview
  const today = app.clock.today()
  const lastDue = addDays(today, OVERVIEW_DAYS - 1)

  const byState = Object.fromEntries(STATES.map((s) => [s, 0])) as Record<State, number>
  let paused = 0
  const due = new Map<string, number>()
  await inSteps(await store.subscriptionIds(), async (after, upto) => {
    const tally = await store.tallySubscriptions(after, upto, lastDue)
    for (const s of STATES) byState[s] += tally.by_state[s]
    paused += tally.paused
    for (const [date, n] of Object.entries(tally.due)) due.set(date, (due.get(date) ?? 0) + n)
  })

  const nowMs = Date.now()
  const recordedToday = dateIn(app.config.timeZone, new Date(nowMs))
  const firstOutcomeDay = addDays(recordedToday, 1 - OVERVIEW_DAYS)
  // No offset is a day: from UTC midnight the day before, every attempt of the first local day is
  // read; the local dates decide which days they fall on.
  const readFrom = new Date(Date.parse(`${addDays(firstOutcomeDay, -1)}T00:00:00.000Z`)).toISOString()
  const segments = offsetSegments(app.config.timeZone, Date.parse(readFrom), nowMs)
  const outcomes = new Map<string, Record<OutcomeResult, number>>()
  await inSteps(await store.attemptIds(readFrom), async (after, upto) => {
    for (const day of await store.tallyOutcomes(after, upto, segments, new Date(nowMs + DAY_MS).toISOString())) {
      const sum = outcomes.get(day.date) ?? (Object.fromEntries(OUTCOME_RESULTS.map((r) => [r, 0])) as Record<OutcomeResult, number>)
      for (const r of OUTCOME_RESULTS) sum[r] += day[r]
      outcomes.set(day.date, sum)
    }
  })

  const sinceMs = nowMs - FAILED_DELIVERY_DAYS * DAY_MS
  let failed = 0
  await inSteps(await store.deliveryIds(sinceMs), async (after, upto) => {
    failed += await store.countFailedDeliveries(after, upto, sinceMs)
  })

  const overdue = [...due].filter(([date]) => date < today).sort(([a], [b]) => (a < b ? -1 : 1))
  return ok({
    today,
    subscriptions: { by_state: byState, paused },
    due_today: due.get(today) ?? 0,
    overdue: { count: overdue.reduce((n, [, c]) => n + c, 0), oldest_date: overdue[0]?.[0] ?? null },
    installments: await app.store.installments.countByState(),
    webhook_deliveries: { retrying: await store.countRetryingDeliveries(), failed_last_30_days: failed },
    deliveries_due: days(today).map((date) => ({ date, count: due.get(date) ?? 0 })),
    installment_outcomes: days(firstOutcomeDay).map((date) => ({ date, ...(outcomes.get(date) ?? { fulfilled: 0, failed: 0, payment_failed: 0, out_of_stock: 0 }) })),
  })
}

const days = (first: string): string[] => Array.from({ length: OVERVIEW_DAYS }, (_, i) => addDays(first, i))
