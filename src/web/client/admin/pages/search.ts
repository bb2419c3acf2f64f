/**
 * The search box on every page and its results: a subscription or a customer by id (`123`,
 * `#123`), and customers whose email, external id or email domain starts with what was typed
 * (C18 `GET /users?q=`).
 */
import { field as valueOf, h, uid } from '../../lib/dom.ts'
import { ApiError, get, query, type ListPage } from '../api.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Subscription, User } from '../types.ts'
import { section } from '../ui.ts'
import type { Page } from '../page.ts'
import { customerTable } from './customers.ts'
import { stateBadge } from './subscriptions.ts'

export function searchForm(): HTMLFormElement {
  const id = uid('search')
  const input = h('input', { id, type: 'search', name: 'q', autocomplete: 'off', placeholder: t('admin.search.placeholder') })
  const form = h('form', { class: 'global-search', role: 'search', 'aria-label': t('admin.search.title') },
    h('label', { for: id, class: 'visually-hidden' }, t('admin.search.label')),
    input,
    h('button', { type: 'submit', class: 'button secondary' }, t('admin.search')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const q = valueOf(form, 'q')
    if (q === '') return input.focus()
    location.hash = withQuery(['search'], { q })
  })
  return form
}

const orNull = <T>(p: Promise<T>): Promise<T | null> => p.catch((err: unknown) => {
  if (err instanceof ApiError && err.status === 404) return null
  throw err
})

export const searchPage: Page = async ({ query: q }) => {
  const text = (q.get('q') ?? '').trim()
  const title = t('admin.search.title')
  if (text === '') return { title, content: h('p', null, t('admin.search.empty')) }
  const id = /^#?\d{1,15}$/.test(text) ? Number(text.replace('#', '')) : null
  const [sub, user, users] = await Promise.all([
    id === null ? null : orNull(get<Subscription>(`/subscriptions/${id}`)),
    id === null ? null : orNull(get<User>(`/users/${id}`)),
    text.startsWith('#') ? null : get<ListPage<'users', User>>(`/users${query({ q: text, limit: 25 })}`),
  ])
  const byId = [
    sub ? h('li', null, h('a', { href: href('subscriptions', sub.id) }, t('admin.sub.title', { id: sub.id })), ' ', stateBadge(sub)) : null,
    user ? h('li', null, h('a', { href: href('customers', user.id) }, t('admin.customer.title', { id: user.id })), ` · ${user.email ?? t('admin.erased')}`) : null,
  ].filter((x) => x !== null)
  const customers = users?.users ?? []
  return {
    title,
    content: [
      h('p', { role: 'status' }, t('admin.search.for', { q: text })),
      byId.length > 0 ? section(t('admin.search.byId'), h('ul', null, byId)) : null,
      // `#999` looks up ids alone: when neither is found, say so rather than show nothing.
      byId.length === 0 && users === null ? h('p', null, t('admin.noResults')) : null,
      users === null ? null : section(t('admin.customers.title'), customerTable(t('admin.customers.title'), customers),
        users.next_after === null ? null : h('p', null, h('a', { href: withQuery(['customers'], { q: text }) }, t('admin.search.allCustomers')))),
    ],
  }
}
