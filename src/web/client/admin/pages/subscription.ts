/**
 * One subscription: its items with prices and totals, dates, addresses, payment, history and
 * installments, and every change a person makes to it (C18): the lifecycle actions the state
 * allows, the schedule, line items (quantity, swap, add, remove, one-time), addresses and payment.
 * Each change is tried first as a dry run and its effect shown; it is made when confirmed, and
 * decided by the API (its 422 is shown in the dialog as it words it).
 */
import { field as valueOf, h, type Child } from '../../lib/dom.ts'
import { ApiError, all, dry, get, patch, post, problemLines, query, type ListPage } from '../api.ts'
import { addressLines, changeList, subscriptionChanges, type Naming } from '../changes.ts'
import { countryOptions } from '../countries.ts'
import { formDialog } from '../dialog.ts'
import { fieldLabel } from '../fields.ts'
import { dash, day, discount, interval, label, money, when } from '../format.ts'
import { historyView } from '../history.ts'
import { href } from '../router.ts'
import { lang, t, type AdminKey } from '../strings.ts'
import { ADDRESS_FIELDS, type Address, type Installment, type LineItem, type PaymentMethod, type PaymentSource, type Subscribable, type Subscription, type User } from '../types.ts'
import { actionButton, checkbox, dataTable, facts, field, section, select } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'
import { installmentColumns } from './installments.ts'
import { sourceText } from './customer.ts'
import { stateBadge } from './subscriptions.ts'

const orNull = <T>(p: Promise<T>): Promise<T | null> => p.catch((err: unknown) => {
  if (err instanceof ApiError && err.status === 404) return null
  throw err
})

const UNITS = ['day', 'week', 'month', 'year'] as const

/** What the page knows around the subscription. */
interface Around {
  readonly sub: Subscription
  readonly user: User | null
  readonly catalog: readonly Subscribable[]
  readonly methods: readonly PaymentMethod[]
  readonly sources: readonly PaymentSource[]
  readonly naming: Naming
  readonly ctx: PageCtx
}

type Action = 'skip' | 'cancel' | 'pause' | 'resume' | 'activate'

/** C8: what each state allows. Offering only these, the page never shows a button the API would refuse now. */
export function allowedActions(s: Pick<Subscription, 'state' | 'paused'>): Action[] {
  const acting = s.state === 'active' || s.state === 'pending_cancellation'
  return [
    ...(acting && !s.paused ? ['skip' as const] : []),
    ...(s.state === 'active' && !s.paused ? ['pause' as const] : []),
    ...(s.state === 'active' && s.paused ? ['resume' as const] : []),
    ...(s.state !== 'canceled' ? ['cancel' as const] : []),
    ...(s.state !== 'active' ? ['activate' as const] : []),
  ]
}

/**
 * A change of the subscription in a dialog: `body` builds the request from the form; the dry run
 * of it shows what would change; confirmed, it is made and the page drawn again with `done`.
 */
interface Writer {
  post<T>(path: string, body?: unknown): Promise<T>
  patch<T>(path: string, body: unknown): Promise<T>
}

function changeDialog(a: Around, spec: {
  title: string; submit: string; body?: string; danger?: boolean; fields?: HTMLElement[]
  send: (api: Writer, form: HTMLFormElement) => Promise<Subscription>
  done: (after: Subscription) => string
}): Promise<void> {
  let after: Subscription | undefined
  return formDialog({
    title: spec.title,
    ...(spec.body === undefined ? {} : { body: spec.body }),
    fields: spec.fields ?? [],
    submit: spec.submit,
    danger: spec.danger ?? false,
    preview: async (form) => changeList(subscriptionChanges(a.sub, await spec.send(dry, form), a.naming)),
    onSubmit: async (form) => { after = await spec.send({ post, patch }, form) },
  }).then(() => {
    if (after) a.ctx.refresh(spec.done(after))
  })
}

function actionControls(a: Around): HTMLElement {
  const act = (action: Action, dateLabel?: AdminKey): HTMLButtonElement => {
    const dateInput = dateLabel ? h('input', { type: 'date', name: 'actionable_date' }) : null
    return actionButton(t(`admin.action.${action}`), () => changeDialog(a, {
      title: t(`admin.action.${action}`),
      body: t(`admin.confirm.${action}`, { id: a.sub.id }),
      fields: dateInput && dateLabel ? [field(t(dateLabel), dateInput)] : [],
      submit: t(`admin.action.${action}`),
      danger: action === 'cancel',
      send: (api, form) => {
        const date = valueOf(form, 'actionable_date')
        return api.post<Subscription>(`/subscriptions/${a.sub.id}/${action}`, date ? { subscription: { actionable_date: date } } : undefined)
      },
      done: (after) => t(`admin.done.${action}`, { date: day(after.actionable_date), state: label('state', after.state) }),
    }), action === 'cancel' ? 'danger' : 'secondary')
  }
  const allowed = allowedActions(a.sub)
  const acting = a.sub.state === 'active' || a.sub.state === 'pending_cancellation'
  return h('div', { class: 'row actions-row' },
    allowed.map((action) => act(action, action === 'pause' ? 'admin.action.pauseDate' : action === 'resume' ? 'admin.action.resumeDate' : undefined)),
    acting ? actionButton(t('admin.sub.editSchedule'), () => scheduleDialog(a), 'secondary') : null)
}

/** Next date, interval and end date: only what was changed is sent (C7: a new interval alone moves the next date). */
function scheduleDialog(a: Around): Promise<void> {
  const s = a.sub
  const fields = [
    field(t('admin.subs.nextDate'), h('input', { type: 'date', name: 'actionable_date', value: s.actionable_date ?? '' }), t('admin.sub.nextDateHint')),
    h('div', { class: 'row' },
      field(t('admin.field.interval_length'), h('input', { type: 'number', name: 'interval_length', min: '1', step: '1', value: String(s.interval_length) })),
      field(t('admin.field.interval_units'), select('interval_units', UNITS.map((u): [string, string] => [u, t(`unit.${u}`)]), s.interval_units))),
    field(t('admin.sub.endDate'), h('input', { type: 'date', name: 'end_date', value: s.end_date ?? '' }), t('admin.sub.endDateHint')),
  ]
  return changeDialog(a, {
    title: t('admin.sub.editSchedule'), submit: t('common.save'), fields,
    send: (api, form) => {
      const body: Record<string, unknown> = {}
      const date = valueOf(form, 'actionable_date')
      if (date !== (s.actionable_date ?? '')) body['actionable_date'] = date || null
      const length = valueOf(form, 'interval_length')
      const units = valueOf(form, 'interval_units')
      if (length !== String(s.interval_length) || units !== s.interval_units) {
        body['interval_length'] = length
        body['interval_units'] = units
      }
      const end = valueOf(form, 'end_date')
      if (end !== (s.end_date ?? '')) body['end_date'] = end || null
      return api.patch<Subscription>(`/subscriptions/${s.id}`, { subscription: body })
    },
    done: () => t('admin.saved'),
  })
}

const itemOptions = (a: Around, selected?: number): [string, string][] =>
  a.catalog.filter((i) => i.subscribable || i.id === selected).map((i) => {
    const price = i.prices?.[a.sub.currency]
    return [String(i.id), `${i.name} (${i.sku})${price === undefined ? '' : ` · ${money(price, a.sub.currency)}`}`]
  })

const lineItems = (attrs: Record<string, unknown>[]) => ({ subscription: { line_items_attributes: attrs } })

function addItemDialog(a: Around): Promise<void> {
  return changeDialog(a, {
    title: t('admin.sub.addItem'), submit: t('admin.sub.addItem'),
    fields: [
      field(t('admin.sub.item'), select('line_items.subscribable', itemOptions(a))),
      field(t('admin.sub.quantity'), h('input', { type: 'number', name: 'line_items.quantity', min: '1', step: '1', value: '1' })),
      // C17: a one-time add-on rides on the next delivery only.
      checkbox('line_items.one_time', t('admin.sub.oneTimeAdd'), false),
    ],
    send: (api, form) => api.patch<Subscription>(`/subscriptions/${a.sub.id}`, lineItems([{
      subscribable_id: valueOf(form, 'line_items.subscribable'), quantity: valueOf(form, 'line_items.quantity'),
      one_time: (form.elements.namedItem('line_items.one_time') as HTMLInputElement).checked,
    }])),
    done: () => t('admin.sub.itemAdded'),
  })
}

function changeItemDialog(a: Around, li: LineItem): Promise<void> {
  return changeDialog(a, {
    title: t('admin.sub.changeItem', { name: a.naming.item?.(li.subscribable_id) ?? `#${li.subscribable_id}` }), submit: t('common.save'),
    fields: [
      field(t('admin.sub.item'), select('line_items.subscribable', itemOptions(a, li.subscribable_id), String(li.subscribable_id)), t('admin.sub.swapHint')),
      field(t('admin.sub.quantity'), h('input', { type: 'number', name: 'line_items.quantity', min: '1', step: '1', value: String(li.quantity) })),
    ],
    send: (api, form) => {
      const entry: Record<string, unknown> = { id: li.id, quantity: valueOf(form, 'line_items.quantity') }
      const item = valueOf(form, 'line_items.subscribable')
      if (item !== String(li.subscribable_id)) entry['subscribable_id'] = item
      return api.patch<Subscription>(`/subscriptions/${a.sub.id}`, lineItems([entry]))
    },
    done: () => t('admin.saved'),
  })
}

function removeItemDialog(a: Around, li: LineItem): Promise<void> {
  const name = a.naming.item?.(li.subscribable_id) ?? `#${li.subscribable_id}`
  return changeDialog(a, {
    title: t('admin.sub.removeItem'), body: t('admin.sub.confirmRemove', { name }), submit: t('admin.sub.removeItem'), danger: true,
    send: (api) => api.patch<Subscription>(`/subscriptions/${a.sub.id}`, lineItems([{ id: li.id, _destroy: true }])),
    done: () => t('admin.sub.itemRemoved', { name }),
  })
}

function itemsSection(a: Around): HTMLElement {
  const s = a.sub
  const priced = s.total !== undefined
  const name = (li: LineItem) => {
    const item = a.catalog.find((i) => i.id === li.subscribable_id)
    return [item ? `${item.name} (${item.sku})` : `#${li.subscribable_id}`, li.one_time ? [' ', h('span', { class: 'badge paused' }, t('admin.sub.oneTime'))] : null]
  }
  const table = dataTable<LineItem>(t('admin.sub.items'), [
    { label: t('admin.sub.item'), cell: name },
    { label: t('admin.sub.quantity'), cell: (li) => String(li.quantity) },
    ...(priced ? [
      { label: t('admin.field.price'), cell: (li: LineItem) => (li.price === null ? t('admin.sub.noPrice') : money(li.price, s.currency)) },
      { label: t('admin.field.discount_percent'), cell: (li: LineItem) => discount(li.discount_percent) },
      { label: t('admin.field.total'), cell: (li: LineItem) => money(li.total, s.currency) },
    ] : []),
    ...(a.ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: (li: LineItem) => h('div', { class: 'row' },
      actionButton(t('admin.edit'), () => changeItemDialog(a, li), 'secondary'),
      actionButton(t('admin.sub.removeItem'), () => removeItemDialog(a, li), 'secondary')) }] : []),
  ], s.line_items)
  return section(t('admin.sub.items'), table,
    priced ? facts([
      [t('admin.field.subtotal'), money(s.subtotal, s.currency)],
      [t('admin.field.discount_total'), money(s.discount_total, s.currency)],
      [t('admin.sub.nextTotal'), h('strong', null, s.total === null ? t('admin.sub.noTotal') : money(s.total, s.currency))],
    ]) : null,
    a.ctx.canWrite ? h('div', { class: 'row' }, actionButton(t('admin.sub.addItem'), () => addItemDialog(a), 'secondary')) : null)
}

function addressDialog(a: Around, which: 'shipping' | 'billing'): Promise<void> {
  const now: Address | null = which === 'shipping' ? a.sub.shipping_address : a.sub.billing_address
  const control = (name: (typeof ADDRESS_FIELDS)[number]) => name === 'country_iso'
    ? select(`${which}_address.${name}`, [['', t('admin.sub.chooseCountry')], ...countryOptions(lang(), now?.country_iso)], now?.country_iso ?? '')
    : h('input', { type: name === 'phone' ? 'tel' : 'text', name: `${which}_address.${name}`, value: now?.[name] ?? '', autocomplete: 'off' })
  return changeDialog(a, {
    title: t(which === 'shipping' ? 'admin.sub.editShipping' : 'admin.sub.editBilling'), submit: t('common.save'),
    fields: [h('div', { class: 'fields address-fields' }, ADDRESS_FIELDS.map((name) => field(fieldLabel(name), control(name))))],
    send: (api, form) => {
      const address = Object.fromEntries(ADDRESS_FIELDS.map((name) => [name, valueOf(form, `${which}_address.${name}`) || null]))
      return api.patch<Subscription>(`/subscriptions/${a.sub.id}`, { subscription: { [`${which}_address_attributes`]: address } })
    },
    done: () => t('admin.saved'),
  })
}

function addressCard(a: Around, which: 'shipping' | 'billing'): HTMLElement {
  const address = which === 'shipping' ? a.sub.shipping_address : a.sub.billing_address
  const title = t(which === 'shipping' ? 'admin.sub.shipping' : 'admin.sub.billing')
  return section(title,
    address ? h('address', null, addressLines(address).map((l) => h('div', null, l))) : h('p', { class: 'muted' }, t('admin.sub.noAddress')),
    a.ctx.canWrite ? actionButton(t('admin.edit'), () => addressDialog(a, which), 'secondary') : null)
}

function paymentDialog(a: Around): Promise<void> {
  const methodName = (id: number) => a.methods.find((m) => m.id === id)?.name ?? `#${id}`
  const options: [string, string][] = [['', t('admin.sub.noPaymentChoice')],
    ...a.sources.map((src): [string, string] => [String(src.id), `${methodName(src.payment_method_id)} · ${sourceText(src)}`])]
  return changeDialog(a, {
    title: t('admin.sub.editPayment'), submit: t('common.save'),
    fields: [field(t('admin.sub.paymentSource'), select('payment_source_type', options, String(a.sub.payment_source_id ?? '')),
      a.sources.length === 0 ? t('admin.sub.noSources') : undefined)],
    send: (api, form) => {
      const source = a.sources.find((src) => String(src.id) === valueOf(form, 'payment_source_type'))
      return api.patch<Subscription>(`/subscriptions/${a.sub.id}`, {
        subscription: { payment_method_id: source?.payment_method_id ?? null, payment_source_id: source?.id ?? null },
      })
    },
    done: () => t('admin.saved'),
  })
}

function paymentCard(a: Around): HTMLElement {
  const s = a.sub
  const method = a.methods.find((m) => m.id === s.payment_method_id)
  const source = a.sources.find((src) => src.id === s.payment_source_id)
  return section(t('admin.sub.payment'),
    s.payment_method_id === null && s.payment_source_id === null ? h('p', { class: 'muted' }, t('admin.sub.noPayment')) : facts([
      [t('admin.source.method'), method ? method.name : s.payment_method_id === null ? dash() : `#${s.payment_method_id}`],
      [t('admin.source.details'), source ? sourceText(source) : s.payment_source_id === null ? dash() : `#${s.payment_source_id}`],
    ]),
    a.ctx.canWrite ? actionButton(t('admin.edit'), () => paymentDialog(a), 'secondary') : null)
}

function installmentsSection(a: Around): HTMLElement {
  const box = h('div', null, h('p', { class: 'muted' }, t('common.loading')))
  const rows: Installment[] = []
  const step = async (after: number | null): Promise<void> => {
    const page = await get<ListPage<'installments', Installment>>(`/installments${query({ subscription_id: a.sub.id, after })}`)
    rows.push(...page.installments)
    box.replaceChildren(dataTable(t('admin.sub.installments'), installmentColumns(a.ctx, { subscription: false }), rows))
    if (page.next_after !== null) {
      const next = page.next_after
      box.append(actionButton(t('admin.nextPage'), () => step(next), 'secondary'))
    }
  }
  void step(null).catch((err: unknown) => box.replaceChildren(h('p', { class: 'problem', role: 'alert' }, problemLines(err).join(' '))))
  return section(t('admin.sub.installments'), box)
}

export const subscriptionPage: Page = async (ctx) => {
  const id = Number(ctx.params[0])
  const sub = await get<Subscription>(`/subscriptions/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const [user, catalog, methods, sources] = await Promise.all([
    orNull(get<User>(`/users/${sub.user_id}`)),
    all<'subscribables', Subscribable>('subscribables', '/subscribables'),
    all<'payment_methods', PaymentMethod>('payment_methods', '/payment_methods'),
    all<'payment_sources', PaymentSource>('payment_sources', `/payment_sources?user_id=${sub.user_id}`),
  ])
  const naming: Naming = {
    item: (sid) => catalog.find((i) => i.id === sid)?.name,
    payment: (m, s) => (m === null && s === null ? dash()
      : [methods.find((x) => x.id === m)?.name ?? `#${m ?? ''}`, sources.find((x) => x.id === s) ? sourceText(sources.find((x) => x.id === s) as PaymentSource) : `#${s ?? ''}`].join(' · ')),
  }
  const a: Around = { sub, user, catalog, methods, sources, naming, ctx }
  const customer: Child = user ? [user.email ?? t('admin.erased'), user.external_id ? ` · ${user.external_id}` : null] : `#${sub.user_id}`
  return {
    title: t('admin.sub.title', { id: sub.id }),
    content: [
      section(t('admin.sub.details'),
        facts([
          [t('admin.state'), stateBadge(sub)],
          [t('admin.customer'), h('a', { href: href('customers', sub.user_id) }, customer)],
          [t('admin.subs.nextDate'), day(sub.actionable_date)],
          [t('admin.subs.interval'), interval(sub.interval_length, sub.interval_units)],
          [t('admin.sub.endDate'), day(sub.end_date)],
          [t('admin.sub.skips'), `${sub.successive_skip_count} / ${sub.skip_count}`],
          [t('admin.sub.processing'), label('admin.processing', sub.processing_state)],
          [t('admin.sub.currency'), sub.currency],
          ...(sub.total === undefined ? [] : [[t('admin.sub.nextTotal'), money(sub.total, sub.currency)] as [string, Child]]),
          [t('admin.created'), when(sub.created_at)],
          [t('admin.updated'), when(sub.updated_at)],
        ]),
        ctx.canWrite ? h('div', { role: 'group', 'aria-label': t('admin.sub.lifecycle') }, actionControls(a)) : null),
      itemsSection(a),
      h('div', { class: 'grid' }, addressCard(a, 'shipping'), addressCard(a, 'billing'), paymentCard(a)),
      section(t('admin.sub.events'), historyView(sub, naming)),
      installmentsSection(a),
    ],
  }
}
