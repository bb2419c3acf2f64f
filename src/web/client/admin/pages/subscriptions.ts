/**
 * Finding subscriptions: by the customer's email or external id (GET /users?email= or
 * ?external_id=, then the user_id filter), state, and due before a date (actionable_before),
 * in keyset pages.
 */
import { field as valueOf, h } from '../../lib/dom.ts'
import { get, query, type ListPage } from '../api.ts'
import { day, interval, label } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Subscription, User } from '../types.ts'
import { field, pager, section, select, table } from '../ui.ts'
import type { Page } from '../page.ts'

const STATES = ['active', 'pending_cancellation', 'canceled', 'inactive'] as const

export const stateBadge = (s: Pick<Subscription, 'state' | 'paused'>): HTMLElement =>
  h('span', null,
    h('span', { class: `badge ${s.state}` }, label('state', s.state)),
    s.paused ? [' ', h('span', { class: 'badge paused' }, t('state.paused'))] : null)

/** Subscriptions as a table, each linking to its page. */
export function subscriptionTable(caption: string, subs: readonly Subscription[]): HTMLElement {
  return table(caption, [t('admin.id'), t('admin.customer'), t('admin.state'), t('admin.subs.nextDate'), t('admin.subs.interval'), t('admin.subs.items')],
    subs.map((s) => [
      h('a', { href: href('subscriptions', s.id) }, `#${s.id}`),
      h('a', { href: href('customers', s.user_id) }, `#${s.user_id}`),
      stateBadge(s),
      day(s.actionable_date),
      interval(s.interval_length, s.interval_units),
      String(s.line_items.reduce((n, li) => n + li.quantity, 0)),
    ]))
}

function searchForm(q: URLSearchParams): HTMLFormElement {
  const input = (name: string, type: string) => h('input', { name, type, value: q.get(name) ?? '' })
  const form = h('form', { class: 'search', role: 'search', 'aria-label': t('admin.subs.search') },
    h('div', { class: 'fields' },
      field(t('admin.subs.email'), input('email', 'email')),
      field(t('admin.subs.externalId'), input('external_id', 'text')),
      field(t('admin.state'), select('state', [['', t('admin.any')], ...STATES.map((s): [string, string] => [s, label('state', s)])], q.get('state') ?? '')),
      field(t('admin.subs.dueBefore'), input('due_before', 'date'))),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(['subscriptions'], Object.fromEntries(['email', 'external_id', 'state', 'due_before'].map((n) => [n, valueOf(form, n)])))
  })
  return form
}

export const subscriptionsPage: Page = async ({ query: q }) => {
  const title = t('admin.subs.title')
  const form = section(t('admin.subs.search'), searchForm(q))
  const email = q.get('email') ?? ''
  const externalId = q.get('external_id') ?? ''
  let userId: number | undefined
  if (email || externalId) {
    const users = (await get<ListPage<'users', User>>(`/users${query({ email, external_id: externalId, limit: 10 })}`)).users
    if (users.length === 0) return { title, content: [form, h('p', { role: 'status' }, t('admin.subs.noCustomer'))] }
    if (users.length > 1) {
      return {
        title,
        content: [form, h('p', null, t('admin.subs.severalCustomers')),
          h('ul', null, users.map((u) => h('li', null, h('a', { href: href('customers', u.id) }, `#${u.id} ${u.email ?? t('admin.erased')}`))))],
      }
    }
    userId = users[0]?.id
  }
  const after = q.get('after')
  const filters = { state: q.get('state'), user_id: userId, actionable_before: q.get('due_before') }
  const page = await get<ListPage<'subscriptions', Subscription>>(`/subscriptions${query({ ...filters, after })}`)
  const link = (next: number | null) => withQuery(['subscriptions'], { email, external_id: externalId, state: q.get('state'), due_before: q.get('due_before'), after: next })
  return { title, content: [form, section(title, subscriptionTable(title, page.subscriptions), pager(page.next_after, after, link))] }
}
