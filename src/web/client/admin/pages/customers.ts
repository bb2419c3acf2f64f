/** Customers: a list searched by email, external id or domain (C18 `q=`), sorted on the page, exported as CSV. */
import { field as valueOf, h } from '../../lib/dom.ts'
import { ApiError, get, query, type ListPage } from '../api.ts'
import { when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { User } from '../types.ts'
import { dataTable, exportButton, field, listProblem, pager, section, sortingOf, type Sorting } from '../ui.ts'
import type { Page } from '../page.ts'

const email = (u: User): string => u.email ?? t('admin.erased')

export function customerTable(caption: string, users: readonly User[], sorting?: Sorting): HTMLElement {
  return dataTable<User>(caption, [
    { label: t('admin.id'), cell: (u) => h('a', { href: href('customers', u.id) }, `#${u.id}`), sortKey: 'id', sortValue: (u) => u.id },
    { label: t('admin.email'), cell: (u) => h('a', { href: href('customers', u.id), class: 'wrap' }, email(u)), sortKey: 'email', sortValue: email },
    { label: t('admin.externalId'), cell: (u) => u.external_id ?? t('common.none') },
    { label: t('admin.created'), cell: (u) => when(u.created_at), sortKey: 'created', sortValue: (u) => u.created_at },
  ], users, sorting)
}

export const customersPage: Page = async ({ query: q }) => {
  const text = q.get('q') ?? ''
  const after = q.get('after')
  const input = h('input', { name: 'q', type: 'search', value: text, autocomplete: 'off' })
  const form = h('form', { class: 'search', role: 'search', 'aria-label': t('admin.customers.search') },
    h('div', { class: 'fields' }, field(t('admin.customers.q'), input, t('admin.customers.qHint'))),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(['customers'], { q: valueOf(form, 'q') })
  })
  const title = t('admin.customers.title')
  const search = section(t('admin.customers.search'), form)
  let page: ListPage<'users', User>
  try {
    page = await get<ListPage<'users', User>>(`/users${query({ q: text, after })}`)
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err
    form.prepend(listProblem(form, err))
    return { title, content: search }
  }
  const sorting = sortingOf(q, (sort, dir) => withQuery(['customers'], { q: text, after, sort, dir }))
  return {
    title,
    content: [
      search,
      section(title, exportButton(`/exports/users.csv${query({ q: text })}`, 'customers.csv'), customerTable(title, page.users, sorting),
        pager(page.next_after, after, (next) => withQuery(['customers'], { q: text, sort: sorting.key, dir: sorting.key ? sorting.dir : null, after: next }))),
    ],
  }
}
