/** Installments (C9): filtered by state, each with its attempts, and recording an outcome. */
import { field as valueOf, h, type Child } from '../../lib/dom.ts'
import { get, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { day, label, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Installment } from '../types.ts'
import { actionButton, field, pager, section, select, table } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

const STATES = ['pending', 'retrying', 'fulfilled', 'abandoned'] as const
const RESULTS = ['fulfilled', 'failed', 'payment_failed', 'out_of_stock'] as const

/** The columns of installmentRows; the actions column only for a token that may write. */
export const installmentHeaders = (canWrite: boolean): string[] => [
  t('admin.id'), t('admin.inst.subscription'), t('admin.customer'), t('admin.inst.dueDate'), t('admin.state'), t('admin.inst.retryAt'), t('admin.inst.attempts'),
  ...(canWrite ? [t('admin.actions')] : []),
]

function attempts(i: Installment): Child {
  if (i.attempts.length === 0) return '0'
  return h('details', null, h('summary', null, String(i.attempts.length)),
    h('ul', { class: 'attempts' }, i.attempts.map((a) =>
      h('li', null, `${when(a.created_at)} · ${label('admin.result', a.result)}`, a.order_reference ? ` · ${a.order_reference}` : null, a.message ? ` · ${a.message}` : null))))
}

function recordOutcome(i: Installment, ctx: PageCtx): Promise<void> {
  const result = select('result', RESULTS.map((r): [string, string] => [r, label('admin.result', r)]))
  const reference = h('input', { type: 'text', name: 'order_reference', autocomplete: 'off' })
  const message = h('input', { type: 'text', name: 'message', autocomplete: 'off' })
  let state = ''
  return formDialog({
    title: t('admin.inst.recordTitle', { id: i.id }),
    fields: [field(t('admin.inst.result'), result), field(t('admin.inst.orderReference'), reference), field(t('admin.inst.message'), message)],
    submit: t('admin.inst.record'),
    onSubmit: async (form) => {
      const outcome = { result: valueOf(form, 'result'), order_reference: valueOf(form, 'order_reference') || undefined, message: valueOf(form, 'message') || undefined }
      state = (await post<Installment>(`/installments/${i.id}/outcome`, { outcome })).state
    },
  }).then((done) => {
    if (done) ctx.refresh(t('admin.inst.recorded', { id: i.id, state: label('admin.installment', state) }))
  })
}

export function installmentRows(rows: readonly Installment[], ctx: PageCtx): Child[][] {
  return rows.map((i) => [
    `#${i.id}`,
    h('a', { href: href('subscriptions', i.subscription_id) }, `#${i.subscription_id}`),
    h('a', { href: href('customers', i.user.id) }, i.user.email ?? t('admin.erased')),
    day(i.due_date),
    label('admin.installment', i.state),
    when(i.retry_at),
    attempts(i),
    ...(ctx.canWrite ? [actionButton(t('admin.inst.record'), () => recordOutcome(i, ctx), 'secondary')] : []),
  ])
}

export const installmentsPage: Page = async (ctx) => {
  const state = ctx.query.get('state') ?? ''
  const after = ctx.query.get('after')
  const page = await get<ListPage<'installments', Installment>>(`/installments${query({ state, after })}`)
  const filter = h('form', { class: 'row', role: 'search', 'aria-label': t('admin.inst.filter') },
    field(t('admin.state'), select('state', [['', t('admin.any')], ...STATES.map((s): [string, string] => [s, label('admin.installment', s)])], state)),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  filter.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(['installments'], { state: valueOf(filter, 'state') })
  })
  const title = t('admin.inst.title')
  return {
    title,
    content: [filter, section(title, table(title, installmentHeaders(ctx.canWrite), installmentRows(page.installments, ctx)),
      pager(page.next_after, after, (next) => withQuery(['installments'], { state, after: next })))],
  }
}
