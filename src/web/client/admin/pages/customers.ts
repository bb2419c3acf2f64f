/** Customers: a list searched by email or external id, and one customer's subscriptions and payment sources. */
import { field as valueOf, h } from '../../lib/dom.ts'
import { get, query, type ListPage } from '../api.ts'
import { when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { PaymentMethod, PaymentSource, Subscription, User } from '../types.ts'
import { facts, field, pager, section, table } from '../ui.ts'
import type { Page } from '../page.ts'
import { subscriptionTable } from './subscriptions.ts'

const email = (u: User): string => u.email ?? t('admin.erased')

export const customersPage: Page = async ({ query: q }) => {
  const filters = { email: q.get('email') ?? '', external_id: q.get('external_id') ?? '' }
  const after = q.get('after')
  const page = await get<ListPage<'users', User>>(`/users${query({ ...filters, after })}`)
  const input = (name: 'email' | 'external_id', type: string) => h('input', { name, type, value: filters[name] })
  const form = h('form', { class: 'search', role: 'search', 'aria-label': t('admin.customers.search') },
    h('div', { class: 'fields' }, field(t('admin.email'), input('email', 'email')), field(t('admin.externalId'), input('external_id', 'text'))),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(['customers'], { email: valueOf(form, 'email'), external_id: valueOf(form, 'external_id') })
  })
  const title = t('admin.customers.title')
  return {
    title,
    content: [
      section(t('admin.customers.search'), form),
      section(title, table(title, [t('admin.id'), t('admin.email'), t('admin.externalId'), t('admin.created')], page.users.map((u) => [
        h('a', { href: href('customers', u.id) }, `#${u.id}`), h('a', { href: href('customers', u.id) }, email(u)), u.external_id ?? t('common.none'), when(u.created_at),
      ])), pager(page.next_after, after, (next) => withQuery(['customers'], { ...filters, after: next }))),
    ],
  }
}

export const customerPage: Page = async ({ params, query: q }) => {
  const id = Number(params[0])
  const user = await get<User>(`/users/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const after = q.get('after')
  const [subs, sources, methods] = await Promise.all([
    get<ListPage<'subscriptions', Subscription>>(`/subscriptions${query({ user_id: user.id, after })}`),
    get<ListPage<'payment_sources', PaymentSource>>(`/payment_sources${query({ user_id: user.id, limit: 100 })}`),
    get<ListPage<'payment_methods', PaymentMethod>>('/payment_methods?limit=100'),
  ])
  const methodName = (mid: number) => methods.payment_methods.find((m) => m.id === mid)?.name ?? `#${mid}`
  return {
    title: t('admin.customer.title', { id: user.id }),
    content: [
      section(t('admin.sub.details'), facts([
        [t('admin.email'), email(user)],
        [t('admin.externalId'), user.external_id ?? t('common.none')],
        [t('admin.created'), when(user.created_at)],
      ])),
      section(t('admin.customer.subscriptions'), subscriptionTable(t('admin.customer.subscriptions'), subs.subscriptions),
        pager(subs.next_after, after, (next) => withQuery(['customers', String(user.id)], { after: next }))),
      section(t('admin.customer.paymentSources'), table(t('admin.customer.paymentSources'), [t('admin.id'), t('admin.source.method'), t('admin.source.card')],
        sources.payment_sources.map((s) => [`#${s.id}`, methodName(s.payment_method_id),
          [s.kind, s.brand, s.last_digits ? `•••• ${s.last_digits}` : null, s.month && s.year ? `${s.month}/${s.year}` : null].filter(Boolean).join(' ')]))),
    ],
  }
}
