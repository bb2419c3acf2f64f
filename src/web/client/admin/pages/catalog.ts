/**
 * The catalog: items that may be subscribed to, with their prices per currency and their
 * subscribe-and-save discount (C16), and payment methods; each listed, created and edited. An
 * item's change is previewed from a dry run (C18) before it is saved: a new price shows at once
 * on every subscription that holds the item.
 */
import { h } from '../../lib/dom.ts'
import { all, dry, patch, post } from '../api.ts'
import { changeList, type Change } from '../changes.ts'
import { formDialog } from '../dialog.ts'
import { fieldLabel } from '../fields.ts'
import { discount, money } from '../format.ts'
import { t } from '../strings.ts'
import type { PaymentMethod, Subscribable } from '../types.ts'
import { actionButton, checkbox, createForm, dataTable, field, section, select } from '../ui.ts'
import type { Page } from '../page.ts'

const checked = (form: HTMLFormElement, name: string): boolean => (form.elements.namedItem(name) as HTMLInputElement | null)?.checked ?? false
const text = (form: HTMLFormElement, name: string): string => (form.elements.namedItem(name) as HTMLInputElement | null)?.value.trim() ?? ''

/** ISO 4217 codes the browser knows (C16 takes the same list). */
const currencies = (): string[] => Intl.supportedValuesOf('currency')

/** The item's prices: one field per currency it has (emptied: removed), and one more to add. */
function priceFields(item?: Subscribable): HTMLElement[] {
  const have = Object.entries(item?.prices ?? {})
  return [
    ...have.map(([code, amount]) => field(fieldLabel(`prices.${code}`), h('input', { type: 'text', name: `prices.${code}`, inputmode: 'decimal', value: amount }), t('admin.catalog.emptyRemoves'))),
    field(t('admin.catalog.newCurrency'), select('new_currency', [['', t('common.none')], ...currencies().filter((c) => !have.some(([k]) => k === c)).map((c): [string, string] => [c, c])])),
    field(t('admin.catalog.newAmount'), h('input', { type: 'text', name: 'new_amount', inputmode: 'decimal' })),
    field(fieldLabel('discount_percent'), h('input', { type: 'text', name: 'discount_percent', inputmode: 'decimal', value: item?.discount_percent ?? '0' }), t('admin.catalog.discountHint')),
  ]
}

function itemFields(item?: Subscribable): HTMLElement[] {
  return [
    field(t('admin.catalog.sku'), h('input', { name: 'sku', type: 'text', required: true, value: item?.sku ?? '' })),
    field(t('admin.catalog.name'), h('input', { name: 'name', type: 'text', required: true, value: item?.name ?? '' })),
    checkbox('subscribable', t('admin.catalog.subscribable'), item?.subscribable ?? true),
    ...priceFields(item),
  ]
}

function itemBody(form: HTMLFormElement, item?: Subscribable) {
  const prices: Record<string, string | null> = {}
  for (const code of Object.keys(item?.prices ?? {})) {
    const amount = text(form, `prices.${code}`)
    if (amount !== item?.prices?.[code]) prices[code] = amount === '' ? null : amount
  }
  const added = text(form, 'new_currency')
  if (added) prices[added] = text(form, 'new_amount')
  const body: Record<string, unknown> = { sku: text(form, 'sku'), name: text(form, 'name'), subscribable: checked(form, 'subscribable') }
  if (Object.keys(prices).length > 0) body['prices'] = prices
  const percent = text(form, 'discount_percent')
  if (percent !== (item?.discount_percent ?? '0')) body['discount_percent'] = percent === '' ? '0' : percent
  return { subscribable: body }
}

const pricesText = (i: Subscribable): string => {
  const entries = Object.entries(i.prices ?? {})
  return entries.length === 0 ? t('admin.catalog.noPrices') : entries.map(([code, amount]) => money(amount, code)).join(', ')
}

function itemChanges(before: Subscribable, after: Subscribable): Change[] {
  const out: Change[] = []
  const add = (field: string, b: string, a: string) => { if (a !== b) out.push({ field, before: b, after: a }) }
  add(t('admin.catalog.sku'), before.sku, after.sku)
  add(t('admin.catalog.name'), before.name, after.name)
  add(t('admin.catalog.subscribable'), before.subscribable ? t('admin.yes') : t('admin.no'), after.subscribable ? t('admin.yes') : t('admin.no'))
  for (const code of new Set([...Object.keys(before.prices ?? {}), ...Object.keys(after.prices ?? {})])) {
    const b = before.prices?.[code]
    const a = after.prices?.[code]
    add(fieldLabel(`prices.${code}`), b === undefined ? t('common.none') : money(b, code), a === undefined ? t('common.none') : money(a, code))
  }
  add(fieldLabel('discount_percent'), discount(before.discount_percent), discount(after.discount_percent))
  return out
}

function methodFields(method?: PaymentMethod): HTMLElement[] {
  return [
    field(t('admin.catalog.name'), h('input', { name: 'name', type: 'text', required: true, value: method?.name ?? '' })),
    checkbox('active', t('admin.catalog.active'), method?.active ?? true),
  ]
}
const methodBody = (form: HTMLFormElement) => ({ payment_method: { name: text(form, 'name'), active: checked(form, 'active') } })

export const catalogPage: Page = async (ctx) => {
  const [items, methods] = await Promise.all([
    all<'subscribables', Subscribable>('subscribables', '/subscribables'),
    all<'payment_methods', PaymentMethod>('payment_methods', '/payment_methods'),
  ])
  const yesNo = (b: boolean) => (b ? t('admin.yes') : t('admin.no'))
  const priced = items.some((i) => i.prices !== undefined)
  const itemsTitle = t('admin.catalog.subscribables')
  const methodsTitle = t('admin.catalog.paymentMethods')
  const editItem = (i: Subscribable) => actionButton(t('admin.edit'), async () => {
    const done = await formDialog({
      title: t('admin.catalog.editItem', { id: i.id }), fields: itemFields(i), submit: t('common.save'),
      preview: async (form) => h('div', null, changeList(itemChanges(i, await dry.patch<Subscribable>(`/subscribables/${i.id}`, itemBody(form, i)))),
        h('p', { class: 'muted' }, t('admin.catalog.followsAtOnce'))),
      onSubmit: async (form) => void (await patch(`/subscribables/${i.id}`, itemBody(form, i))),
    })
    if (done) ctx.refresh(t('admin.saved'))
  }, 'secondary')
  const editMethod = (m: PaymentMethod) => actionButton(t('admin.edit'), async () => {
    const done = await formDialog({
      title: t('admin.catalog.editMethod', { id: m.id }), fields: methodFields(m), submit: t('common.save'),
      onSubmit: async (form) => void (await patch(`/payment_methods/${m.id}`, methodBody(form))),
    })
    if (done) ctx.refresh(t('admin.saved'))
  }, 'secondary')
  return {
    title: t('admin.catalog.title'),
    content: [
      section(itemsTitle,
        dataTable<Subscribable>(itemsTitle, [
          { label: t('admin.id'), cell: (i) => `#${i.id}` },
          { label: t('admin.catalog.sku'), cell: (i) => i.sku },
          { label: t('admin.catalog.name'), cell: (i) => h('span', { class: 'wrap' }, i.name) },
          ...(priced ? [
            { label: t('admin.catalog.prices'), cell: (i: Subscribable) => pricesText(i) },
            { label: fieldLabel('discount_percent'), cell: (i: Subscribable) => discount(i.discount_percent) },
          ] : []),
          { label: t('admin.catalog.subscribable'), cell: (i) => yesNo(i.subscribable) },
          ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: editItem }] : []),
        ], items),
        ctx.canWrite ? createForm(t('admin.catalog.newItem'), h('div', { class: 'fields' }, itemFields()), (f) => post('/subscribables', itemBody(f)), ctx) : null),
      section(methodsTitle,
        dataTable<PaymentMethod>(methodsTitle, [
          { label: t('admin.id'), cell: (m) => `#${m.id}` },
          { label: t('admin.catalog.name'), cell: (m) => m.name },
          { label: t('admin.catalog.active'), cell: (m) => yesNo(m.active) },
          ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: editMethod }] : []),
        ], methods),
        ctx.canWrite ? createForm(t('admin.catalog.newMethod'), h('div', { class: 'fields' }, methodFields()), (f) => post('/payment_methods', methodBody(f)), ctx) : null),
    ],
  }
}

