/**
 * The overview: counts now (GET /overview), the monthly recurring value (C16
 * /reports/recurring), and charts: deliveries due and outcomes over 90 days, fulfilled revenue
 * and churn per month over a year (/reports/monthly). "Active" counts the subscriptions that run:
 * paused ones are counted apart (issue 28).
 */
import { field as valueOf, h, type Child } from '../../lib/dom.ts'
import { ApiError, get, query } from '../api.ts'
import { barChart } from '../chart.ts'
import { day, label, money, month, num, percentOf, shortDay } from '../format.ts'
import { withQuery } from '../router.ts'
import { t } from '../strings.ts'
import { field, select } from '../ui.ts'
import type { Page } from '../page.ts'

interface Overview {
  today: string
  subscriptions: { by_state: Record<string, number>; paused: number }
  due_today: number
  overdue: { count: number; oldest_date: string | null }
  installments: Record<string, number>
  webhook_deliveries: { retrying: number; failed_last_30_days: number }
  deliveries_due: { date: string; count: number }[]
  installment_outcomes: { date: string; fulfilled: number; failed: number; payment_failed: number; out_of_stock: number }[]
}

interface Recurring { currency: string; as_of: string; active_subscriptions: number; monthly_recurring_value: string; unpriced_subscriptions: number }
interface MonthRow {
  month: string; new_subscriptions: number; canceled_subscriptions: number; active_at_start: number; active_at_end: number
  churn_rate: string | null; installments_made: number; installments_fulfilled: number; fulfilled_total: string
}
interface Monthly { currency: string; months: MonthRow[] }

const RESULTS = ['fulfilled', 'failed', 'payment_failed', 'out_of_stock'] as const

/** A card of figures; each figure may link to the list it counts. */
function card(title: string, rows: readonly [text: string, value: Child, link?: string, note?: string][], ...more: Child[]): HTMLElement {
  return h('section', { class: 'card stat', 'aria-label': title },
    h('h2', null, title),
    h('dl', { class: 'stats' }, rows.map(([text, value, link, note]): Child => [
      h('dt', null, link ? h('a', { href: link }, text) : text),
      h('dd', null, h('span', { class: 'figure' }, typeof value === 'number' ? num(value) : value), note ? h('span', { class: 'muted' }, ` ${note}`) : null),
    ])), ...more)
}

/** Reports of a server without C16 answer 404: the page then shows what it has. */
const unlessMissing = <T>(p: Promise<T>): Promise<T | null> => p.catch((err: unknown) => {
  if (err instanceof ApiError && err.status === 404) return null
  throw err
})

function currencyForm(current: string): HTMLFormElement {
  const form = h('form', { class: 'row currency-form', 'aria-label': t('admin.overview.currency') },
    field(t('admin.overview.currency'), select('currency', Intl.supportedValuesOf('currency').map((c): [string, string] => [c, c]), current)),
    h('button', { type: 'submit', class: 'button secondary' }, t('admin.overview.show')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery([], { currency: valueOf(form, 'currency') })
  })
  return form
}

/**
 * A money figure as a bar's height. Display only: the bar is drawn to scale, and every figure
 * written on the page is the API's exact string, formatted.
 */
const height = (amount: string): number => Number(amount)

function moneyCharts(monthly: Monthly): HTMLElement[] {
  const { currency, months } = monthly
  const first = months[0]?.month ?? ''
  const last = months[months.length - 1]?.month ?? ''
  const axisMoney = (v: number) => new Intl.NumberFormat(document.documentElement.lang || 'en', { style: 'currency', currency, notation: 'compact' }).format(v)
  const busiest = months.reduce<MonthRow | undefined>((best, m) => (best === undefined || height(m.fulfilled_total) > height(best.fulfilled_total) ? m : best), undefined)
  const range = { from: month(first, 'long'), to: month(last, 'long') }
  const revenue = barChart(
    t('admin.overview.revenueChart', { currency }),
    busiest === undefined || height(busiest.fulfilled_total) === 0
      ? t('admin.overview.revenueChartEmpty', range)
      : t('admin.overview.revenueChartSummary', { ...range, best: `${month(busiest.month, 'long')} (${money(busiest.fulfilled_total, currency)})` }),
    {
      kinds: [{ label: t('admin.overview.fulfilledRevenue'), className: 'bar-fulfilled' }],
      points: months.map((m) => ({ axis: month(m.month), name: month(m.month, 'long'), values: [height(m.fulfilled_total)], shown: [money(m.fulfilled_total, currency)] })),
      axis: axisMoney, fractional: true, pointName: t('admin.overview.month'),
    })
  const churn = barChart(
    t('admin.overview.churnChart'),
    t('admin.overview.churnChartSummary', { from: month(first, 'long'), to: month(last, 'long'), canceled: num(months.reduce((n, m) => n + m.canceled_subscriptions, 0)) }),
    {
      kinds: [{ label: t('admin.overview.churn'), className: 'bar-failed' }],
      points: months.map((m) => ({ axis: month(m.month), name: month(m.month, 'long'), values: [m.churn_rate === null ? 0 : height(m.churn_rate)], shown: [percentOf(m.churn_rate)] })),
      axis: (v) => new Intl.NumberFormat(document.documentElement.lang || 'en', { style: 'percent', maximumFractionDigits: 1 }).format(v),
      fractional: true, pointName: t('admin.overview.month'),
    })
  return [h('section', { class: 'card' }, revenue), h('section', { class: 'card' }, churn)]
}

export const overviewPage: Page = async ({ query: q }) => {
  const currency = q.get('currency')
  const [o, recurring, monthly] = await Promise.all([
    get<Overview>('/overview'),
    unlessMissing(get<Recurring>(`/reports/recurring${query({ currency })}`)),
    unlessMissing(get<Monthly>(`/reports/monthly${query({ currency })}`)),
  ])
  const s = o.subscriptions.by_state
  // Paused is a flag on an active subscription, not a state: "Active" counts the ones that run.
  const pausedActive = o.subscriptions.paused
  const subs = (values: Record<string, string>) => withQuery(['subscriptions'], values)
  const insts = (state: string) => withQuery(['installments'], { state })
  const dueTotal = o.deliveries_due.reduce((n, d) => n + d.count, 0)
  const busiest = Math.max(0, ...o.deliveries_due.map((d) => d.count))
  const outcomeTotal = o.installment_outcomes.reduce((n, d) => n + RESULTS.reduce((m, r) => m + d[r], 0), 0)
  const first = (xs: readonly { date: string }[]) => xs[0]?.date ?? o.today
  const last = (xs: readonly { date: string }[]) => xs[xs.length - 1]?.date ?? o.today
  return {
    title: t('admin.nav.overview'),
    content: [
      h('div', { class: 'grid' },
        card(t('admin.overview.subscriptions'), [
          [t('admin.overview.running'), (s['active'] ?? 0) - pausedActive, subs({ state: 'active', paused: 'false' })],
          [t('state.paused'), o.subscriptions.paused, subs({ paused: 'true' })],
          [t('state.pending_cancellation'), s['pending_cancellation'] ?? 0, subs({ state: 'pending_cancellation' })],
          [t('state.canceled'), s['canceled'] ?? 0, subs({ state: 'canceled' })],
          [t('state.inactive'), s['inactive'] ?? 0, subs({ state: 'inactive' })],
        ]),
        recurring ? card(t('admin.overview.money'), [
          [t('admin.overview.mrv'), money(recurring.monthly_recurring_value, recurring.currency)],
          [t('admin.overview.counted'), recurring.active_subscriptions],
          [t('admin.overview.unpriced'), recurring.unpriced_subscriptions],
        ], currencyForm(recurring.currency)) : null,
        card(t('admin.overview.due'), [
          [t('admin.overview.dueToday'), o.due_today],
          [t('admin.overview.overdue'), o.overdue.count, subs({ actionable_before: o.today }),
            o.overdue.oldest_date ? t('admin.overview.oldestOverdue', { date: day(o.overdue.oldest_date) }) : undefined],
        ]),
        card(t('admin.overview.installments'), ['pending', 'retrying', 'abandoned', 'fulfilled'].map((state) =>
          [label('admin.installment', state), o.installments[state] ?? 0, insts(state)] as [string, number, string])),
        card(t('admin.overview.webhooks'), [
          [t('admin.overview.webhooksRetrying'), o.webhook_deliveries.retrying, withQuery(['webhooks', 'deliveries'], { state: 'pending' })],
          [t('admin.overview.webhooksFailed'), o.webhook_deliveries.failed_last_30_days, withQuery(['webhooks', 'deliveries'], { state: 'failed' })],
        ])),
      monthly ? moneyCharts(monthly) : null,
      h('section', { class: 'card' }, barChart(
        t('admin.overview.dueChart'),
        t('admin.overview.dueChartSummary', { total: num(dueTotal), from: day(first(o.deliveries_due)), to: day(last(o.deliveries_due)), max: num(busiest) }),
        { kinds: [{ label: t('admin.overview.count'), className: 'bar-due' }], points: o.deliveries_due.map((d) => ({ axis: shortDay(d.date), name: day(d.date), values: [d.count] })) },
      )),
      h('section', { class: 'card' }, barChart(
        t('admin.overview.outcomesChart'),
        t('admin.overview.outcomesChartSummary', { total: num(outcomeTotal), from: day(first(o.installment_outcomes)), to: day(last(o.installment_outcomes)) }),
        {
          kinds: RESULTS.map((r) => ({ label: label('admin.result', r), className: `bar-${r}` })),
          points: o.installment_outcomes.map((d) => ({ axis: shortDay(d.date), name: day(d.date), values: RESULTS.map((r) => d[r]) })),
        },
      )),
    ],
  }
}

