/**
 * One subscription: its items, dates, addresses, payment, history and installments, and the
 * lifecycle actions of C11, each confirmed in a dialog and decided by the API (its 422 is shown
 * in the dialog as it words it).
 */
import { h, type Child } from '../../lib/dom.ts'
import { ApiError, get, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { dash, day, interval, label, when } from '../format.ts'
import { href } from '../router.ts'
import { t, type AdminKey } from '../strings.ts'
import type { Address, EventRecord, Installment, PaymentMethod, PaymentSource, Subscribable, Subscription, User } from '../types.ts'
import { actionButton, facts, field, section, table } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'
import { installmentHeaders, installmentRows } from './installments.ts'
import { stateBadge } from './subscriptions.ts'

const orNull = <T>(p: Promise<T>): Promise<T | null> => p.catch((err: unknown) => {
  if (err instanceof ApiError && err.status === 404) return null
  throw err
})

function address(a: Address | null): Child {
  if (!a) return h('p', { class: 'muted' }, t('admin.sub.noAddress'))
  const lines = [[a.firstname, a.lastname].filter(Boolean).join(' '), a.company, a.address1, a.address2,
    [a.zipcode, a.city].filter(Boolean).join(' '), a.state_name, a.country_iso?.toUpperCase(), a.phone]
  return h('address', null, lines.filter((l): l is string => !!l).map((l) => h('div', null, l)))
}

/** A list read page after page: rows appended under a "Show more" button while more exist. */
function more<T>(load: (after: number) => Promise<{ rows: T[]; next: number | null }>, draw: (rows: T[]) => Node, moreText: string): HTMLElement {
  const box = h('div', null, h('p', { class: 'muted' }, t('common.loading')))
  const step = async (after: number, button?: HTMLButtonElement): Promise<void> => {
    const { rows, next } = await load(after)
    if (after === 0) box.replaceChildren()
    button?.remove()
    box.append(draw(rows))
    if (next === null) return
    const button2: HTMLButtonElement = actionButton(moreText, () => step(next, button2), 'secondary')
    box.append(button2)
  }
  void step(0).catch((err: unknown) => box.replaceChildren(h('p', { class: 'problem', role: 'alert' }, err instanceof Error ? err.message : String(err))))
  return box
}

function timeline(events: EventRecord[]): Node {
  if (events.length === 0) return h('p', { class: 'muted' }, t('admin.noResults'))
  return h('ol', { class: 'timeline' }, events.map((e) =>
    h('li', null, h('time', { datetime: e.created_at }, when(e.created_at)), h('span', null, label('event', e.type)), h('span', { class: 'muted' }, e.type))))
}

type Action = 'skip' | 'cancel' | 'pause' | 'resume' | 'activate'

function actionControls(sub: Subscription, ctx: PageCtx): HTMLElement {
  const act = (action: Action, dateLabel?: AdminKey): HTMLButtonElement => {
    const dateInput = dateLabel ? h('input', { type: 'date', name: 'actionable_date' }) : null
    return actionButton(t(`admin.action.${action}`), async () => {
      let after: Subscription | undefined
      await formDialog({
        title: t(`admin.action.${action}`),
        body: t(`admin.confirm.${action}`, { id: sub.id }),
        fields: dateInput && dateLabel ? [field(t(dateLabel), dateInput)] : [],
        submit: t(`admin.action.${action}`),
        danger: action === 'cancel',
        onSubmit: async () => {
          const date = dateInput?.value ?? ''
          after = await post<Subscription>(`/subscriptions/${sub.id}/${action}`, date ? { subscription: { actionable_date: date } } : undefined)
        },
      })
      if (after) ctx.refresh(t(`admin.done.${action}`, { date: day(after.actionable_date), state: label('state', after.state) }))
    }, action === 'cancel' ? 'danger' : 'secondary')
  }
  return h('div', { class: 'row actions-row' },
    act('skip'), act('pause', 'admin.action.pauseDate'), act('resume', 'admin.action.resumeDate'), act('cancel'), act('activate'))
}

export const subscriptionPage: Page = async (ctx) => {
  const id = Number(ctx.params[0])
  const sub = await get<Subscription>(`/subscriptions/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const itemIds = [...new Set(sub.line_items.map((li) => li.subscribable_id))]
  const [user, items, method, source] = await Promise.all([
    orNull(get<User>(`/users/${sub.user_id}`)),
    Promise.all(itemIds.map((i) => orNull(get<Subscribable>(`/subscribables/${i}`)))),
    sub.payment_method_id === null ? null : orNull(get<PaymentMethod>(`/payment_methods/${sub.payment_method_id}`)),
    sub.payment_source_id === null ? null : orNull(get<PaymentSource>(`/payment_sources/${sub.payment_source_id}`)),
  ])
  const itemName = (sid: number) => {
    const item = items.find((i) => i?.id === sid)
    return item ? `${item.name} (${item.sku})` : `#${sid}`
  }
  const customer = user ? `${user.email ?? t('admin.erased')}${user.external_id ? ` · ${user.external_id}` : ''}` : `#${sub.user_id}`
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
          [t('admin.sub.processing'), sub.processing_state],
          [t('admin.sub.currency'), sub.currency],
          [t('admin.created'), when(sub.created_at)],
          [t('admin.updated'), when(sub.updated_at)],
        ]),
        ctx.canWrite ? h('div', { role: 'group', 'aria-label': t('admin.sub.lifecycle') }, actionControls(sub, ctx)) : null),
      section(t('admin.sub.items'), table(t('admin.sub.items'), [t('admin.sub.item'), t('admin.sub.quantity')],
        sub.line_items.map((li) => [itemName(li.subscribable_id), String(li.quantity)]))),
      h('div', { class: 'grid' },
        section(t('admin.sub.shipping'), address(sub.shipping_address)),
        section(t('admin.sub.billing'), address(sub.billing_address)),
        section(t('admin.sub.payment'), method === null && source === null ? h('p', { class: 'muted' }, t('admin.sub.noPayment')) : facts([
          [t('admin.source.method'), method ? method.name : dash()],
          [t('admin.source.card'), source ? [source.brand, source.last_digits ? `•••• ${source.last_digits}` : null, source.month && source.year ? `${source.month}/${source.year}` : null].filter(Boolean).join(' ') : dash()],
        ]))),
      section(t('admin.sub.events'), more(async (after) => {
        const page = await get<ListPage<'events', EventRecord>>(`/subscriptions/${sub.id}/events${query({ after: after || null })}`)
        return { rows: page.events, next: page.next_after }
      }, timeline, t('admin.loadMore'))),
      section(t('admin.sub.installments'), more(async (after) => {
        const page = await get<ListPage<'installments', Installment>>(`/installments${query({ subscription_id: sub.id, after: after || null })}`)
        return { rows: page.installments, next: page.next_after }
      }, (rows) => table(t('admin.sub.installments'), installmentHeaders(ctx.canWrite), installmentRows(rows, ctx)), t('admin.nextPage'))),
    ],
  }
}
