/**
 * The mail log (C17 `GET /emails`): every mail to customers with its state and SMTP attempts,
 * overall and per customer. A server without customer e-mail answers 404 there: the customer's
 * page then leaves the section out.
 */
import { h, replace } from '../../lib/dom.ts'
import { ApiError, get, problemLines, query, type ListPage } from '../api.ts'
import { label, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Email } from '../types.ts'
import { dataTable, listProblem, pager, section, stateFilter, type Column } from '../ui.ts'
import type { Page } from '../page.ts'

const STATES = ['pending', 'sent', 'failed'] as const

function attemptsOf(e: Email): HTMLElement | string {
  if (e.attempts.length === 0) return '0'
  return h('details', null, h('summary', null, String(e.attempts.length)),
    h('ul', { class: 'attempts' }, e.attempts.map((a) => h('li', null, when(a.created_at), a.smtp_reply ? ` · ${a.smtp_reply}` : null, a.error ? ` · ${a.error}` : null))))
}

function columns(withCustomer: boolean): Column<Email>[] {
  return [
    { label: t('admin.id'), cell: (e) => `#${e.id}`, sortKey: 'id', sortValue: (e) => e.id },
    ...(withCustomer ? [{ label: t('admin.customer'), cell: (e: Email) => h('a', { href: href('customers', e.user_id), class: 'wrap' }, e.to ?? `#${e.user_id}`) }] : []),
    { label: t('admin.mail.kind'), cell: (e) => label('admin.mail.kinds', e.kind) },
    { label: t('admin.mail.subject'), cell: (e) => h('span', { class: 'wrap' }, e.subject ?? t('common.none')) },
    { label: t('admin.state'), cell: (e) => label('admin.mail.states', e.state) },
    { label: t('admin.inst.attempts'), cell: attemptsOf },
    { label: t('admin.created'), cell: (e) => when(e.created_at), sortKey: 'created', sortValue: (e) => e.created_at },
  ]
}

/** One customer's mails, newest pages first as the API gives them; nothing when the server has no mail log. */
export function emailsSection(filter: { user_id: number }, title: string): HTMLElement {
  const box = section(title, h('p', { class: 'muted' }, t('common.loading')))
  get<ListPage<'emails', Email>>(`/emails${query({ ...filter, limit: 25 })}`).then(
    (page) => replace(box, h('h2', null, title), dataTable(title, columns(false), page.emails),
      page.next_after === null ? null : h('p', null, h('a', { href: withQuery(['emails'], { user_id: filter.user_id }) }, t('admin.mail.all')))),
    (err: unknown) => {
      if (err instanceof ApiError && err.status === 404) box.remove()
      else box.replaceChildren(h('h2', null, title), h('p', { class: 'problem', role: 'alert' }, problemLines(err).join(' ')))
    })
  return box
}

export const emailsPage: Page = async (ctx) => {
  const state = ctx.query.get('state') ?? ''
  const userId = ctx.query.get('user_id')
  const after = ctx.query.get('after')
  const filter = stateFilter(t('admin.mail.filter'), ['emails'], STATES.map((s): [string, string] => [s, label('admin.mail.states', s)]), state, { user_id: userId })
  const title = t('admin.mail.title')
  let page: ListPage<'emails', Email>
  try {
    page = await get<ListPage<'emails', Email>>(`/emails${query({ state, user_id: userId, after })}`)
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err
    return { title, content: [listProblem(filter, err), filter] }
  }
  return {
    title,
    content: [filter, section(title, dataTable(title, columns(true), page.emails),
      pager(page.next_after, after, (next) => withQuery(['emails'], { state, user_id: userId, after: next })))],
  }
}
