/**
 * Finding subscriptions: by customer (the C18 search: email, external id or domain; several
 * matches: pick one), state, paused or not, due before a date, in keyset pages; sorted on the
 * page; exported as CSV with the same filters. A filter the API refuses (C13's 422) is shown
 * beside the form, which stays.
 */
import { field as valueOf, h } from '../../lib/dom.ts'
import { ApiError, all, get, query, type ListPage } from '../api.ts'
import { day, interval, label, money, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Subscribable, Subscription, User } from '../types.ts'
import { dataTable, exportButton, field, listProblem, pager, section, select, sortingOf, type Column, type Sorting } from '../ui.ts'
import type { Page } from '../page.ts'

const STATES = ['active', 'pending_cancellation', 'canceled', 'inactive'] as const
const FILTERS = ['q', 'user_id', 'state', 'paused', 'actionable_before'] as const

export const stateBadge = (s: Pick<Subscription, 'state' | 'paused'>): HTMLElement =>
  h('span', { class: 'badges' },
    h('span', { class: `badge ${s.state}` }, label('state', s.state)),
    s.paused ? [' ', h('span', { class: 'badge paused' }, t('state.paused'))] : null)

/** What names things in a list of subscriptions: customers' emails and items' names, read once per page. */
export interface Names {
  readonly user: (id: number) => User | undefined
  readonly item: (id: number) => Subscribable | undefined
}

export async function namesFor(subs: readonly Subscription[], catalog?: readonly Subscribable[]): Promise<Names> {
  const userIds = [...new Set(subs.map((s) => s.user_id))]
  const [users, items] = await Promise.all([
    Promise.all(userIds.map((id) => get<User>(`/users/${id}`).catch(() => undefined))),
    catalog ?? all<'subscribables', Subscribable>('subscribables', '/subscribables'),
  ])
  const byUser = new Map(users.filter((u): u is User => u !== undefined).map((u) => [u.id, u]))
  const byItem = new Map(items.map((i) => [i.id, i]))
  return { user: (id) => byUser.get(id), item: (id) => byItem.get(id) }
}

const itemsText = (s: Subscription, names: Names): string =>
  s.line_items.map((li) => `${names.item(li.subscribable_id)?.name ?? `#${li.subscribable_id}`} × ${li.quantity}`).join(', ') || t('common.none')

/** Subscriptions as a table, each linking to its page, named by customer and items. */
export function subscriptionTable(caption: string, subs: readonly Subscription[], names: Names, sorting?: Sorting): HTMLElement {
  const email = (s: Subscription) => names.user(s.user_id)?.email ?? (names.user(s.user_id) ? t('admin.erased') : `#${s.user_id}`)
  const columns: Column<Subscription>[] = [
    { label: t('admin.id'), cell: (s) => h('a', { href: href('subscriptions', s.id) }, `#${s.id}`), sortKey: 'id', sortValue: (s) => s.id },
    { label: t('admin.customer'), cell: (s) => h('a', { href: href('customers', s.user_id), class: 'wrap' }, email(s)), sortKey: 'customer', sortValue: email },
    { label: t('admin.state'), cell: stateBadge },
    { label: t('admin.subs.items'), cell: (s) => h('span', { class: 'wrap' }, itemsText(s, names)) },
    { label: t('admin.field.total'), cell: (s) => money(s.total, s.currency) },
    { label: t('admin.subs.nextDate'), cell: (s) => day(s.actionable_date), sortKey: 'next', sortValue: (s) => s.actionable_date ?? '' },
    { label: t('admin.subs.interval'), cell: (s) => interval(s.interval_length, s.interval_units) },
    { label: t('admin.created'), cell: (s) => when(s.created_at), sortKey: 'created', sortValue: (s) => s.created_at },
  ]
  return dataTable(caption, columns, subs, sorting)
}

function searchForm(q: URLSearchParams): HTMLFormElement {
  const input = (name: string, type: string) => h('input', { name, type, value: q.get(name) ?? '' })
  const form = h('form', { class: 'search', role: 'search', 'aria-label': t('admin.subs.search') },
    h('div', { class: 'fields' },
      field(t('admin.subs.customer'), input('q', 'search'), t('admin.subs.customerHint')),
      field(t('admin.state'), select('state', [['', t('admin.any')], ...STATES.map((s): [string, string] => [s, label('state', s)])], q.get('state') ?? '')),
      field(t('admin.field.paused'), select('paused', [['', t('admin.any')], ['true', t('admin.subs.pausedOnly')], ['false', t('admin.subs.notPaused')]], q.get('paused') ?? '')),
      field(t('admin.subs.dueBefore'), input('actionable_before', 'date'))),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const values = Object.fromEntries(FILTERS.map((n) => [n, n === 'user_id' ? q.get(n) : valueOf(form, n)]))
    // The customer picked from several matches stays picked while the text searched for does.
    if (values['q'] !== (q.get('q') ?? '')) values['user_id'] = null
    location.hash = withQuery(['subscriptions'], values)
  })
  return form
}

export const subscriptionsPage: Page = async ({ query: q }) => {
  const title = t('admin.subs.title')
  const form = searchForm(q)
  const search = (...extra: (HTMLElement | null)[]) => section(t('admin.subs.search'), ...extra, form)
  const customer = q.get('q') ?? ''
  let userId: number | string | undefined = q.get('user_id') ?? undefined
  try {
    if (customer && userId === undefined) {
      const users = (await get<ListPage<'users', User>>(`/users${query({ q: customer, limit: 10 })}`)).users
      if (users.length === 0) return { title, content: [search(), h('p', { role: 'status' }, t('admin.subs.noCustomer'))] }
      if (users.length > 1) {
        return {
          title,
          content: [search(), section(t('admin.subs.severalCustomers'),
            h('ul', null, users.map((u) => h('li', null, h('a', { href: withQuery(['subscriptions'], { ...current(q), user_id: u.id }) }, u.email ?? t('admin.erased')),
              u.external_id ? ` · ${u.external_id}` : null))))],
        }
      }
      userId = users[0]?.id
    }
    const after = q.get('after')
    const filters = { state: q.get('state'), paused: q.get('paused'), user_id: userId, actionable_before: q.get('actionable_before') }
    const page = await get<ListPage<'subscriptions', Subscription>>(`/subscriptions${query({ ...filters, after })}`)
    const names = await namesFor(page.subscriptions)
    const link = (next: number | null) => withQuery(['subscriptions'], { ...current(q), after: next })
    const sorting = sortingOf(q, (sort, dir) => withQuery(['subscriptions'], { ...current(q), after, sort, dir }))
    return {
      title,
      content: [search(), section(title, exportButton(`/exports/subscriptions.csv${query(filters)}`, 'subscriptions.csv'),
        subscriptionTable(title, page.subscriptions, names, sorting), pager(page.next_after, after, link))],
    }
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err
    return { title, content: [search(listProblem(form, err))] }
  }
}

/** The filters and order of the page now (for the links that keep them). */
function current(q: URLSearchParams): Record<string, string | null> {
  return Object.fromEntries([...FILTERS, 'sort', 'dir'].map((n) => [n, q.get(n)]))
}
