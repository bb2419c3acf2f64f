/** The overview (GET /admin/api/v1/overview): counts now, and the two 90-day charts. */
import { h, type Child } from '../../lib/dom.ts'
import { get } from '../api.ts'
import { barChart } from '../chart.ts'
import { day, label, num } from '../format.ts'
import { href } from '../router.ts'
import { t } from '../strings.ts'
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

const RESULTS = ['fulfilled', 'failed', 'payment_failed', 'out_of_stock'] as const

/** A card of figures; each figure may link to the list it counts. */
function card(title: string, rows: readonly [text: string, value: number, link?: string, note?: string][]): HTMLElement {
  return h('section', { class: 'card stat', 'aria-label': title },
    h('h2', null, title),
    h('dl', { class: 'stats' }, rows.map(([text, value, link, note]): Child => [
      h('dt', null, link ? h('a', { href: link }, text) : text),
      h('dd', null, h('span', { class: 'figure' }, num(value)), note ? h('span', { class: 'muted' }, ` ${note}`) : null),
    ])))
}

export const overviewPage: Page = async () => {
  const o = await get<Overview>('/overview')
  const s = o.subscriptions.by_state
  const subs = (state: string) => `${href('subscriptions')}?state=${state}`
  const insts = (state: string) => `${href('installments')}?state=${state}`
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
          [t('state.active'), s['active'] ?? 0, subs('active')],
          [t('state.paused'), o.subscriptions.paused],
          [t('state.pending_cancellation'), s['pending_cancellation'] ?? 0, subs('pending_cancellation')],
          [t('state.canceled'), s['canceled'] ?? 0, subs('canceled')],
          [t('state.inactive'), s['inactive'] ?? 0, subs('inactive')],
        ]),
        card(t('admin.overview.due'), [
          [t('admin.overview.dueToday'), o.due_today],
          [t('admin.overview.overdue'), o.overdue.count, `${href('subscriptions')}?due_before=${o.today}`,
            o.overdue.oldest_date ? t('admin.overview.oldestOverdue', { date: day(o.overdue.oldest_date) }) : undefined],
        ]),
        card(t('admin.overview.installments'), ['pending', 'retrying', 'abandoned', 'fulfilled'].map((state) =>
          [label('admin.installment', state), o.installments[state] ?? 0, insts(state)] as [string, number, string])),
        card(t('admin.overview.webhooks'), [
          [t('admin.overview.webhooksRetrying'), o.webhook_deliveries.retrying, href('webhooks')],
          [t('admin.overview.webhooksFailed'), o.webhook_deliveries.failed_last_30_days, href('webhooks')],
        ])),
      h('section', { class: 'card' }, barChart(
        t('admin.overview.dueChart'),
        t('admin.overview.dueChartSummary', { total: num(dueTotal), from: day(first(o.deliveries_due)), to: day(last(o.deliveries_due)), max: num(busiest) }),
        { kinds: [{ label: t('admin.overview.count'), className: 'bar-due' }], days: o.deliveries_due.map((d) => ({ date: d.date, values: [d.count] })) },
      )),
      h('section', { class: 'card' }, barChart(
        t('admin.overview.outcomesChart'),
        t('admin.overview.outcomesChartSummary', { total: num(outcomeTotal), from: day(first(o.installment_outcomes)), to: day(last(o.installment_outcomes)) }),
        {
          kinds: RESULTS.map((r) => ({ label: label('admin.result', r), className: `bar-${r}` })),
          days: o.installment_outcomes.map((d) => ({ date: d.date, values: RESULTS.map((r) => d[r]) })),
        },
      )),
    ],
  }
}
