import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { currencyCode } from '../domain/currency.ts'
import { FieldErrors } from '../domain/field-errors.ts'
import { formatAmount } from '../domain/money.ts'
import { MAX_REPORT_MONTHS, addMonths, churnRate, monthlyRecurringValue, monthsBetween, readMonth } from '../domain/reports.ts'
import type { IntervalUnit } from '../domain/dates.ts'
import type { ReportMonth } from '../store/api.ts'
import { check } from './input.ts'
import { inSteps } from './overview.ts'

/**
 * Subscriptions read at a time by the recurring report: a step reads only the acting, unpaused
 * ones of the currency (an index of just those), about 1 µs each on SQLite, so a step holds the
 * event loop for tens of ms.
 */
const RECURRING_STEP_IDS = 100_000

/** A query parameter as the admin lists read them (C13): an empty value is absent. */
const given = (query: URLSearchParams, name: string): string | undefined => {
  const raw = query.get(name)
  return raw === null || raw === '' ? undefined : raw
}

/** `currency` (C16: default REPLENISH_CURRENCY), or a 422 in C13's shape. */
function readCurrency(app: App, query: URLSearchParams, errors: FieldErrors): string {
  const raw = given(query, 'currency')
  if (raw === undefined) return app.config.currency
  return currencyCode(raw) ?? errors.add('currency', 'invalid_currency') ?? app.config.currency
}

/**
 * GET /admin/api/v1/reports/recurring (C16): what the acting, unpaused subscriptions of a currency
 * bring each month at today's catalog prices. Read in steps of ids (SQLite answers on the event
 * loop), so the figures are not one snapshot: a change made meanwhile may or may not count.
 */
export const showRecurringReport = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const errors = new FieldErrors()
  const currency = readCurrency(app, ctx.query, errors)
  check(errors)
  const reports = app.store.reports
  const groups = new Map<string, { units: IntervalUnit; length: number; total_minor: bigint }>()
  let active = 0
  let unpriced = 0
  await inSteps(await reports.subscriptionIds(), async (after, upto) => {
    for (const g of await reports.recurring(currency, after, upto)) {
      active += g.subscriptions
      unpriced += g.unpriced
      const key = `${g.interval_units}/${g.interval_length}`
      const sum = groups.get(key) ?? { units: g.interval_units, length: g.interval_length, total_minor: 0n }
      sum.total_minor += BigInt(g.total_minor)
      groups.set(key, sum)
    }
  }, RECURRING_STEP_IDS)
  return ok({
    currency,
    as_of: app.clock.now().toISOString(),
    active_subscriptions: active,
    monthly_recurring_value: monthlyRecurringValue([...groups.values()], currency),
    unpriced_subscriptions: unpriced,
  })
}

/**
 * GET /admin/api/v1/reports/monthly (C16): per UTC month, subscriptions made and canceled, those
 * acting at its start and end (paused ones included), churn, installments made and fulfilled, and
 * what the fulfilled ones were to charge. `to` defaults to the service clock's month, `from` to
 * eleven months before `to` (a year); `to` before `from`, or more than 36 months, is a 422.
 */
export const showMonthlyReport = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const errors = new FieldErrors()
  const month = (name: string): string | undefined | null => {
    const raw = given(ctx.query, name)
    if (raw === undefined) return undefined
    return readMonth(raw) ?? errors.add(name, 'invalid_month') ?? null
  }
  const fromGiven = month('from')
  const toGiven = month('to')
  const currency = readCurrency(app, ctx.query, errors)
  check(errors)
  const to = toGiven ?? thisMonth(app)
  const from = fromGiven ?? addMonths(to, -11)
  if (to < from) errors.add('to', 'not_before_from')
  else if (monthsBetween(from, to) > MAX_REPORT_MONTHS) errors.add('to', 'months_from', MAX_REPORT_MONTHS)
  check(errors)

  const { active_before, months } = await app.store.reports.months(currency, from, to)
  const byMonth = new Map<string, ReportMonth>(months.map((m) => [m.month, m]))
  let active = active_before
  const out = []
  for (let m = from; m <= to; m = addMonths(m, 1)) {
    const row = byMonth.get(m)
    const start = active
    active += row?.active_change ?? 0
    const canceled = row?.canceled_subscriptions ?? 0
    out.push({
      month: m,
      new_subscriptions: row?.new_subscriptions ?? 0,
      canceled_subscriptions: canceled,
      active_at_start: start,
      active_at_end: active,
      churn_rate: churnRate(canceled, start),
      installments_made: row?.installments_made ?? 0,
      installments_fulfilled: row?.installments_fulfilled ?? 0,
      fulfilled_total: formatAmount(BigInt(row?.fulfilled_total_minor ?? '0'), currency),
    })
  }
  return ok({ currency, months: out })
}

/** The service clock's month, UTC (C8: the service's "now"). */
const thisMonth = (app: App): string => app.clock.now().toISOString().slice(0, 7)
