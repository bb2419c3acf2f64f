/**
 * Installments (C9): filtered by state, each with what it is to charge (C16's frozen totals) and
 * its attempts, and recording an outcome where one may still be recorded (pending or retrying:
 * C9 refuses another outcome for a fulfilled or abandoned one). Exported as CSV with the filter.
 */
import { field as valueOf, h, type Child } from '../../lib/dom.ts'
import { ApiError, get, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { day, label, money, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Installment } from '../types.ts'
import { actionButton, dataTable, exportButton, field, listProblem, pager, section, select, sortingOf, stateFilter, type Column } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

const STATES = ['pending', 'retrying', 'fulfilled', 'abandoned'] as const
const RESULTS = ['fulfilled', 'failed', 'payment_failed', 'out_of_stock'] as const

/** C9: an outcome may be recorded while the installment awaits one. */
export const awaitsOutcome = (i: Pick<Installment, 'state'>): boolean => i.state === 'pending' || i.state === 'retrying'

function attempts(i: Installment): Child {
  if (i.attempts.length === 0) return '0'
  return h('details', null, h('summary', null, String(i.attempts.length)),
    h('ul', { class: 'attempts' }, i.attempts.map((a) =>
      h('li', null, `${when(a.created_at)} · ${label('admin.result', a.result)}`, a.order_reference ? ` · ${a.order_reference}` : null, a.message ? ` · ${a.message}` : null))))
}

/** The items it delivers, each with its frozen price when it has one. */
function lines(i: Installment): Child {
  return h('ul', { class: 'plain' }, i.line_items.map((li) => h('li', null, `${li.name} × ${li.quantity}`,
    li.total === undefined || li.total === null ? null : h('span', { class: 'muted' }, ` · ${money(li.total, i.currency)}`))))
}

function recordOutcome(i: Installment, ctx: PageCtx): Promise<void> {
  const result = select('result', RESULTS.map((r): [string, string] => [r, label('admin.result', r)]))
  const reference = h('input', { type: 'text', name: 'order_reference', autocomplete: 'off' })
  const message = h('input', { type: 'text', name: 'message', autocomplete: 'off' })
  let state = ''
  return formDialog({
    title: t('admin.inst.recordTitle', { id: i.id }),
    body: i.total ? t('admin.inst.toCharge', { total: money(i.total, i.currency) }) : undefined,
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

/** The columns of an installments table; the subscription's own page leaves out its id. */
export function installmentColumns(ctx: PageCtx, options: { subscription: boolean }): Column<Installment>[] {
  return [
    { label: t('admin.id'), cell: (i) => `#${i.id}`, sortKey: 'id', sortValue: (i) => i.id },
    ...(options.subscription ? [{ label: t('admin.inst.subscription'), cell: (i: Installment) => h('a', { href: href('subscriptions', i.subscription_id) }, `#${i.subscription_id}`) }] : []),
    { label: t('admin.customer'), cell: (i) => h('a', { href: href('customers', i.user.id), class: 'wrap' }, i.user.email ?? t('admin.erased')) },
    { label: t('admin.inst.dueDate'), cell: (i) => day(i.due_date), sortKey: 'due', sortValue: (i) => i.due_date },
    { label: t('admin.state'), cell: (i) => label('admin.installment', i.state) },
    { label: t('admin.subs.items'), cell: lines },
    { label: t('admin.field.total'), cell: (i) => (i.total === undefined ? t('common.none') : money(i.total, i.currency)) },
    { label: t('admin.inst.retryAt'), cell: (i) => when(i.retry_at) },
    { label: t('admin.inst.attempts'), cell: attempts },
    ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: (i: Installment) => awaitsOutcome(i)
      ? actionButton(t('admin.inst.record'), () => recordOutcome(i, ctx), 'secondary') : null }] : []),
  ]
}

export const installmentsPage: Page = async (ctx) => {
  const state = ctx.query.get('state') ?? ''
  const after = ctx.query.get('after')
  const filter = stateFilter(t('admin.inst.filter'), ['installments'], STATES.map((s): [string, string] => [s, label('admin.installment', s)]), state)
  const title = t('admin.inst.title')
  let page: ListPage<'installments', Installment>
  try {
    page = await get<ListPage<'installments', Installment>>(`/installments${query({ state, after })}`)
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err
    return { title, content: [listProblem(filter, err), filter] }
  }
  const sorting = sortingOf(ctx.query, (sort, dir) => withQuery(['installments'], { state, after, sort, dir }))
  const keep = { state, sort: sorting.key, dir: sorting.key ? sorting.dir : null }
  return {
    title,
    content: [filter, section(title, exportButton(`/exports/installments.csv${query({ state })}`, 'installments.csv'),
      dataTable(title, installmentColumns(ctx, { subscription: true }), page.installments, sorting),
      pager(page.next_after, after, (next) => withQuery(['installments'], { ...keep, after: next })))],
  }
}
