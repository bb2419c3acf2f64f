/** The catalog: items that may be subscribed to and payment methods, each listed, created and edited. */
import { h } from '../../lib/dom.ts'
import { get, patch, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { PaymentMethod, Subscribable } from '../types.ts'
import { actionButton, checkbox, field, pager, problemBox, section, table } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

const checked = (form: HTMLFormElement, name: string): boolean => (form.elements.namedItem(name) as HTMLInputElement | null)?.checked ?? false
const text = (form: HTMLFormElement, name: string): string => (form.elements.namedItem(name) as HTMLInputElement | null)?.value.trim() ?? ''

/** An inline form that creates a record and draws the page again; a refusal stays on the form. */
function createForm(title: string, controls: HTMLElement[], send: (form: HTMLFormElement) => Promise<unknown>, ctx: PageCtx): HTMLElement {
  const problem = problemBox()
  const submit = h('button', { type: 'submit', class: 'button' }, t('admin.create'))
  const form = h('form', { class: 'create', 'aria-label': title }, h('h3', null, title), problem.el, h('div', { class: 'fields' }, controls), submit)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    submit.disabled = true
    problem.clear()
    send(form).then(() => ctx.refresh(t('admin.saved')), (err: unknown) => {
      problem.show(err)
      submit.disabled = false
    })
  })
  return form
}

function itemFields(item?: Subscribable): HTMLElement[] {
  return [
    field(t('admin.catalog.sku'), h('input', { name: 'sku', type: 'text', required: true, value: item?.sku ?? '' })),
    field(t('admin.catalog.name'), h('input', { name: 'name', type: 'text', required: true, value: item?.name ?? '' })),
    checkbox('subscribable', t('admin.catalog.subscribable'), item?.subscribable ?? true),
  ]
}
const itemBody = (form: HTMLFormElement) => ({ subscribable: { sku: text(form, 'sku'), name: text(form, 'name'), subscribable: checked(form, 'subscribable') } })

function methodFields(method?: PaymentMethod): HTMLElement[] {
  return [
    field(t('admin.catalog.name'), h('input', { name: 'name', type: 'text', required: true, value: method?.name ?? '' })),
    checkbox('active', t('admin.catalog.active'), method?.active ?? true),
  ]
}
const methodBody = (form: HTMLFormElement) => ({ payment_method: { name: text(form, 'name'), active: checked(form, 'active') } })

function editButton(title: string, fields: HTMLElement[], send: (form: HTMLFormElement) => Promise<unknown>, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.edit'), async () => {
    const done = await formDialog({ title, fields, submit: t('common.save'), onSubmit: async (form) => void (await send(form)) })
    if (done) ctx.refresh(t('admin.saved'))
  }, 'secondary')
}

export const catalogPage: Page = async (ctx) => {
  const itemsAfter = ctx.query.get('items_after')
  const methodsAfter = ctx.query.get('methods_after')
  const [items, methods] = await Promise.all([
    get<ListPage<'subscribables', Subscribable>>(`/subscribables${query({ after: itemsAfter })}`),
    get<ListPage<'payment_methods', PaymentMethod>>(`/payment_methods${query({ after: methodsAfter })}`),
  ])
  const yesNo = (b: boolean) => (b ? t('admin.yes') : t('admin.no'))
  const actions = ctx.canWrite ? [t('admin.actions')] : []
  const itemsTitle = t('admin.catalog.subscribables')
  const methodsTitle = t('admin.catalog.paymentMethods')
  return {
    title: t('admin.catalog.title'),
    content: [
      section(itemsTitle,
        table(itemsTitle, [t('admin.id'), t('admin.catalog.sku'), t('admin.catalog.name'), t('admin.catalog.subscribable'), ...actions], items.subscribables.map((i) => [
          `#${i.id}`, i.sku, i.name, yesNo(i.subscribable),
          ...(ctx.canWrite ? [editButton(t('admin.catalog.editItem', { id: i.id }), itemFields(i), (f) => patch(`/subscribables/${i.id}`, itemBody(f)), ctx)] : []),
        ])),
        pager(items.next_after, itemsAfter, (next) => withQuery(['catalog'], { items_after: next, methods_after: methodsAfter })),
        ctx.canWrite ? createForm(t('admin.catalog.newItem'), itemFields(), (f) => post('/subscribables', itemBody(f)), ctx) : null),
      section(methodsTitle,
        table(methodsTitle, [t('admin.id'), t('admin.catalog.name'), t('admin.catalog.active'), ...actions], methods.payment_methods.map((m) => [
          `#${m.id}`, m.name, yesNo(m.active),
          ...(ctx.canWrite ? [editButton(t('admin.catalog.editMethod', { id: m.id }), methodFields(m), (f) => patch(`/payment_methods/${m.id}`, methodBody(f)), ctx)] : []),
        ])),
        pager(methods.next_after, methodsAfter, (next) => withQuery(['catalog'], { items_after: itemsAfter, methods_after: next })),
        ctx.canWrite ? createForm(t('admin.catalog.newMethod'), methodFields(), (f) => post('/payment_methods', methodBody(f)), ctx) : null),
    ],
  }
}
