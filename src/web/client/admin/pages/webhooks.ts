/**
 * Webhook endpoints (C10, C11): listed, registered (the signing secret is shown once, from the
 * create answer, and kept nowhere but this page's memory until it is drawn), deleted; and each
 * endpoint's deliveries with their attempts, any of which may be sent again.
 */
import { EVENT_TYPES } from '../../../../domain/events.ts'
import { h, uid, type Child } from '../../lib/dom.ts'
import { del, get, post, query, type ListPage } from '../api.ts'
import { formDialog } from '../dialog.ts'
import { label, num, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Delivery, WebhookEndpoint } from '../types.ts'
import { actionButton, checkbox, field, pager, problemBox, section, select, shownOnce, table } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

/** The secret of the endpoint just made: drawn once by the next page, then forgotten. */
let justMade: { id: number; secret: string } | undefined

function eventsFieldset(): HTMLElement {
  const legendId = uid('events')
  return h('fieldset', { class: 'events', 'aria-labelledby': legendId },
    h('legend', { id: legendId }, t('admin.hooks.events')),
    checkbox('all_events', t('admin.hooks.allEvents'), true),
    h('details', null, h('summary', null, t('admin.hooks.chooseEvents')),
      h('div', { class: 'event-types' }, EVENT_TYPES.map((type) => checkbox(`event:${type}`, type, false)))))
}

function createForm(ctx: PageCtx): HTMLElement {
  const problem = problemBox()
  const submit = h('button', { type: 'submit', class: 'button' }, t('admin.create'))
  const form = h('form', { class: 'create', 'aria-label': t('admin.hooks.new') }, h('h3', null, t('admin.hooks.new')), problem.el,
    h('div', { class: 'fields' },
      field(t('admin.hooks.url'), h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://', autocomplete: 'off' })),
      field(t('admin.hooks.description'), h('input', { name: 'description', type: 'text' }))),
    eventsFieldset(), submit)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const value = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).value.trim()
    const isChecked = (name: string) => (form.elements.namedItem(name) as HTMLInputElement).checked
    const events = isChecked('all_events') ? ['*'] : EVENT_TYPES.filter((type) => isChecked(`event:${type}`))
    submit.disabled = true
    problem.clear()
    post<WebhookEndpoint>('/webhook_endpoints', { webhook_endpoint: { url: value('url'), events, description: value('description') || undefined } }).then(
      (made) => {
        justMade = { id: made.id, secret: made.secret ?? '' }
        ctx.refresh(t('admin.saved'))
      },
      (err: unknown) => {
        problem.show(err)
        submit.disabled = false
      },
    )
  })
  return form
}

function deleteButton(e: WebhookEndpoint, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.hooks.delete'), async () => {
    const done = await formDialog({
      title: t('admin.hooks.delete'), body: t('admin.hooks.confirmDelete', { id: e.id, url: e.url }), submit: t('admin.hooks.delete'), danger: true,
      onSubmit: async () => void (await del(`/webhook_endpoints/${e.id}`)),
    })
    if (done) ctx.refresh(t('admin.hooks.deleted'))
  }, 'danger')
}

export const webhooksPage: Page = async (ctx) => {
  const after = ctx.query.get('after')
  const page = await get<ListPage<'webhook_endpoints', WebhookEndpoint>>(`/webhook_endpoints${query({ after })}`)
  const made = justMade
  justMade = undefined
  const title = t('admin.hooks.endpoints')
  return {
    title: t('admin.hooks.title'),
    content: [
      made ? h('section', { class: 'card' }, shownOnce(t('admin.hooks.secret', { id: made.id }), t('admin.hooks.secretLabel'), made.secret)) : null,
      section(title,
        table(title, [t('admin.id'), t('admin.hooks.url'), t('admin.hooks.events'), t('admin.hooks.description'), t('admin.created'), t('admin.actions')],
          page.webhook_endpoints.map((e) => [
            `#${e.id}`, h('span', { class: 'url' }, e.url), e.events.join(', '), e.description ?? t('common.none'), when(e.created_at),
            h('div', { class: 'row' }, h('a', { href: href('webhooks', e.id), class: 'button secondary' }, t('admin.hooks.deliveries')),
              ctx.canWrite ? deleteButton(e, ctx) : null),
          ])),
        pager(page.next_after, after, (next) => withQuery(['webhooks'], { after: next })),
        ctx.canWrite ? createForm(ctx) : null),
    ],
  }
}

const STATES = ['pending', 'delivered', 'failed', 'canceled'] as const

function attemptsOf(d: Delivery): Child {
  if (d.attempts.length === 0) return '0'
  return h('details', null, h('summary', null, t('admin.hooks.attempts', { n: d.attempts.length })),
    h('ul', { class: 'attempts' }, d.attempts.map((a) => h('li', null,
      `${when(a.created_at)} · ${t('admin.hooks.status')} ${a.status_code ?? t('admin.hooks.noAnswer')} · ${num(a.duration_ms)} ms`,
      a.error ? ` · ${a.error}` : null))))
}

function redeliverButton(d: Delivery, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.hooks.redeliver'), async () => {
    try {
      const after = await post<Delivery>(`/deliveries/${d.id}/redeliver`)
      const last = after.attempts[after.attempts.length - 1]
      ctx.refresh(t('admin.hooks.redelivered', { result: last?.status_code ? String(last.status_code) : (last?.error ?? t('admin.hooks.noAnswer')) }))
    } catch (err) {
      ctx.refresh(err instanceof Error ? err.message : String(err))
    }
  }, 'secondary')
}

export const deliveriesPage: Page = async (ctx) => {
  const id = Number(ctx.params[0])
  const endpoint = await get<WebhookEndpoint>(`/webhook_endpoints/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const state = ctx.query.get('state') ?? ''
  const after = ctx.query.get('after')
  const page = await get<ListPage<'deliveries', Delivery>>(`/webhook_endpoints/${endpoint.id}/deliveries${query({ state, after })}`)
  const filter = h('form', { class: 'row', role: 'search', 'aria-label': t('admin.hooks.deliveries') },
    field(t('admin.state'), select('state', [['', t('admin.any')], ...STATES.map((s): [string, string] => [s, label('admin.delivery', s)])], state)),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  filter.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(['webhooks', String(endpoint.id)], { state: (filter.elements.namedItem('state') as HTMLSelectElement).value })
  })
  const title = t('admin.hooks.deliveriesOf', { id: endpoint.id })
  return {
    title,
    content: [
      h('p', null, h('a', { href: href('webhooks') }, t('admin.hooks.endpoints')), ' · ', h('span', { class: 'url' }, endpoint.url)),
      filter,
      section(t('admin.hooks.deliveries'),
        table(title, [t('admin.id'), t('admin.hooks.event'), t('admin.state'), t('admin.hooks.nextAttempt'), t('admin.created'), t('admin.inst.attempts'), ...(ctx.canWrite ? [t('admin.actions')] : [])],
          page.deliveries.map((d) => [
            `#${d.id}`, `${d.event_type} (#${d.event_id})`, label('admin.delivery', d.state), when(d.next_attempt_at), when(d.created_at), attemptsOf(d),
            ...(ctx.canWrite ? [redeliverButton(d, ctx)] : []),
          ])),
        pager(page.next_after, after, (next) => withQuery(['webhooks', String(endpoint.id)], { state, after: next }))),
    ],
  }
}
