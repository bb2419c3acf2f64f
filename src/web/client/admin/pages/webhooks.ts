/**
 * Webhook endpoints (C10, C11, C18): listed, registered (the signing secret is shown once, from
 * the create answer, and kept nowhere but this page's memory until it is drawn), edited (URL,
 * events, disabled), sent a test event, deleted; deliveries, per endpoint and across all of them
 * by state, with every attempt and what the endpoint answered, any of which may be sent again.
 * A delivery sent again that the endpoint refused is said so, as a failure.
 */
import { EVENT_TYPES } from '../../../../domain/events.ts'
import { field as valueOf, h, uid, type Child } from '../../lib/dom.ts'
import { ApiError, all, del, dry, get, patch, post, problemLines, query, type ListPage } from '../api.ts'
import { changeList, type Change } from '../changes.ts'
import { formDialog } from '../dialog.ts'
import { fieldLabel } from '../fields.ts'
import { eventName, label, num, when } from '../format.ts'
import { href, withQuery } from '../router.ts'
import { t } from '../strings.ts'
import type { Delivery, DeliveryAttempt, WebhookEndpoint } from '../types.ts'
import { actionButton, checkbox, createForm, dataTable, field, listProblem, pager, section, shownOnce, stateFilter, type Column } from '../ui.ts'
import type { Page, PageCtx } from '../page.ts'

/** The secret of the endpoint just made: drawn once by the next page, then forgotten. */
let justMade: { id: number; secret: string } | undefined

function eventsFieldset(chosen: readonly string[] = ['*']): HTMLElement {
  const legendId = uid('events')
  const all = chosen.includes('*')
  return h('fieldset', { class: 'events', 'aria-labelledby': legendId },
    h('legend', { id: legendId }, t('admin.hooks.events')),
    checkbox('all_events', t('admin.hooks.allEvents'), all),
    h('details', { open: !all }, h('summary', null, t('admin.hooks.chooseEvents')),
      h('div', { class: 'event-types' }, EVENT_TYPES.map((type) => checkbox(`event:${type}`, `${eventName(type)} (${type})`, chosen.includes(type))))))
}

function eventsOf(form: HTMLFormElement): string[] {
  const isChecked = (name: string) => (form.elements.namedItem(name) as HTMLInputElement | null)?.checked ?? false
  return isChecked('all_events') ? ['*'] : EVENT_TYPES.filter((type) => isChecked(`event:${type}`))
}

const eventsText = (events: readonly string[]): string => (events.includes('*') ? t('admin.hooks.allEvents') : events.map((e) => eventName(e)).join(', '))

function endpointForm(ctx: PageCtx): HTMLElement {
  return createForm(t('admin.hooks.new'), [
    h('div', { class: 'fields' },
      field(t('admin.hooks.url'), h('input', { name: 'url', type: 'url', required: true, placeholder: 'https://', autocomplete: 'off' })),
      field(t('admin.hooks.description'), h('input', { name: 'description', type: 'text' }))),
    eventsFieldset(),
  ], async (form) => {
    const made = await post<WebhookEndpoint>('/webhook_endpoints', { webhook_endpoint: { url: valueOf(form, 'url'), events: eventsOf(form), description: valueOf(form, 'description') || undefined } })
    justMade = { id: made.id, secret: made.secret ?? '' }
  }, ctx)
}

function endpointChanges(before: WebhookEndpoint, after: WebhookEndpoint): Change[] {
  const out: Change[] = []
  const add = (field: string, b: string, a: string) => { if (a !== b) out.push({ field: fieldLabel(field), before: b, after: a }) }
  add('url', before.url, after.url)
  add('description', before.description ?? t('common.none'), after.description ?? t('common.none'))
  add('events', eventsText(before.events), eventsText(after.events))
  add('disabled', before.disabled ? t('admin.yes') : t('admin.no'), after.disabled ? t('admin.yes') : t('admin.no'))
  return out
}

function editButton(e: WebhookEndpoint, ctx: PageCtx): HTMLButtonElement {
  const body = (form: HTMLFormElement) => ({ webhook_endpoint: {
    url: valueOf(form, 'url'), events: eventsOf(form), description: valueOf(form, 'description') || null,
    disabled: (form.elements.namedItem('disabled') as HTMLInputElement).checked,
  } })
  return actionButton(t('admin.edit'), async () => {
    const done = await formDialog({
      title: t('admin.hooks.edit', { id: e.id }),
      fields: [
        field(t('admin.hooks.url'), h('input', { name: 'url', type: 'url', value: e.url, autocomplete: 'off' })),
        field(t('admin.hooks.description'), h('input', { name: 'description', type: 'text', value: e.description ?? '' })),
        eventsFieldset(e.events),
        checkbox('disabled', t('admin.hooks.disabled'), e.disabled ?? false),
      ],
      submit: t('common.save'),
      preview: async (form) => changeList(endpointChanges(e, await dry.patch<WebhookEndpoint>(`/webhook_endpoints/${e.id}`, body(form)))),
      onSubmit: async (form) => void (await patch(`/webhook_endpoints/${e.id}`, body(form))),
    })
    if (done) ctx.refresh(t('admin.saved'))
  }, 'secondary')
}

/** What a delivery's last attempt says: the endpoint's 2xx is a success, anything else a failure. */
export function lastAttempt(d: Delivery): { ok: boolean; text: string } {
  const last: DeliveryAttempt | undefined = d.attempts[d.attempts.length - 1]
  if (!last) return { ok: false, text: label('admin.delivery', d.state) }
  const ok = last.status_code !== null && last.status_code >= 200 && last.status_code < 300
  return { ok, text: last.status_code !== null ? String(last.status_code) : (last.error ?? t('admin.hooks.noAnswer')) }
}

function testButton(e: WebhookEndpoint, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.hooks.test'), async () => {
    try {
      const d = await post<Delivery>(`/webhook_endpoints/${e.id}/test`)
      const last = lastAttempt(d)
      if (d.attempts.length === 0) ctx.refresh(t('admin.hooks.testQueued', { id: d.id }))
      else if (last.ok) ctx.refresh(t('admin.hooks.testSent', { result: last.text }))
      else ctx.refresh(t('admin.hooks.testFailed', { result: last.text }), true)
    } catch (err) {
      ctx.refresh(problemLines(err).join(' '), true)
    }
  }, 'secondary')
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
      h('p', null, h('a', { href: href('webhooks', 'deliveries') }, t('admin.hooks.allDeliveries')), ' · ',
        h('a', { href: withQuery(['webhooks', 'deliveries'], { state: 'failed' }) }, t('admin.hooks.failedDeliveries'))),
      section(title,
        dataTable<WebhookEndpoint>(title, [
          { label: t('admin.id'), cell: (e) => `#${e.id}` },
          { label: t('admin.hooks.url'), cell: (e) => h('span', { class: 'url' }, e.url) },
          { label: t('admin.hooks.events'), cell: (e) => h('span', { class: 'wrap' }, eventsText(e.events)) },
          { label: t('admin.hooks.description'), cell: (e) => e.description ?? t('common.none') },
          { label: t('admin.state'), cell: (e) => (e.disabled ? t('admin.hooks.isDisabled') : t('admin.hooks.isEnabled')) },
          { label: t('admin.created'), cell: (e) => when(e.created_at) },
          { label: t('admin.actions'), actions: true, cell: (e) => h('div', { class: 'row' }, h('a', { href: href('webhooks', e.id), class: 'button secondary' }, t('admin.hooks.deliveries')),
            // A disabled endpoint sends nothing (C18): no test is offered for it.
            ctx.canWrite ? [editButton(e, ctx), e.disabled ? null : testButton(e, ctx), deleteButton(e, ctx)] : null) },
        ], page.webhook_endpoints),
        pager(page.next_after, after, (next) => withQuery(['webhooks'], { after: next })),
        ctx.canWrite ? endpointForm(ctx) : null),
    ],
  }
}

const STATES = ['pending', 'delivered', 'failed'] as const

function attemptsOf(d: Delivery): Child {
  if (d.attempts.length === 0) return '0'
  return h('details', null, h('summary', null, t('admin.hooks.attempts', { n: d.attempts.length })),
    h('ul', { class: 'attempts' }, d.attempts.map((a) => h('li', null,
      `${when(a.created_at)} · ${t('admin.hooks.status')} ${a.status_code ?? t('admin.hooks.noAnswer')} · ${num(a.duration_ms)} ms`,
      a.error ? ` · ${a.error}` : null,
      // Focusable: a long answer scrolls inside its box, and a keyboard must be able to scroll it.
      a.response_body ? h('pre', { class: 'response-body', tabindex: 0 }, a.response_body) : null))))
}

function redeliverButton(d: Delivery, ctx: PageCtx): HTMLButtonElement {
  return actionButton(t('admin.hooks.redeliver'), async () => {
    try {
      const last = lastAttempt(await post<Delivery>(`/deliveries/${d.id}/redeliver`))
      if (last.ok) ctx.refresh(t('admin.hooks.redelivered', { result: last.text }))
      else ctx.refresh(t('admin.hooks.redeliveryFailed', { result: last.text }), true)
    } catch (err) {
      ctx.refresh(problemLines(err).join(' '), true)
    }
  }, 'secondary')
}

/** `sends(d)`: whether the delivery's endpoint sends (a disabled one is sent nothing again, C18). */
function deliveryColumns(ctx: PageCtx, endpoint: boolean, sends: (d: Delivery) => boolean): Column<Delivery>[] {
  return [
    { label: t('admin.id'), cell: (d) => `#${d.id}`, sortKey: 'id', sortValue: (d) => d.id },
    ...(endpoint ? [{ label: t('admin.hooks.endpoint'), cell: (d: Delivery) => h('a', { href: href('webhooks', d.webhook_endpoint_id) }, `#${d.webhook_endpoint_id}`) }] : []),
    { label: t('admin.hooks.event'), cell: (d) => [eventName(d.event_type), h('span', { class: 'muted' }, ` #${d.event_id}`)] },
    { label: t('admin.state'), cell: (d) => label('admin.delivery', d.state) },
    { label: t('admin.hooks.nextAttempt'), cell: (d) => when(d.next_attempt_at) },
    { label: t('admin.created'), cell: (d) => when(d.created_at), sortKey: 'created', sortValue: (d) => d.created_at },
    { label: t('admin.inst.attempts'), cell: attemptsOf },
    ...(ctx.canWrite ? [{ label: t('admin.actions'), actions: true, cell: (d: Delivery) => (sends(d) ? redeliverButton(d, ctx) : t('admin.hooks.isDisabled')) }] : []),
  ]
}

/** `#/webhooks/:id`: one endpoint's deliveries; `#/webhooks/deliveries`: every endpoint's (C18 GET /deliveries). */
export const deliveriesPage: Page = async (ctx) => {
  const across = ctx.params[0] === 'deliveries'
  const id = Number(ctx.params[0])
  const endpoint = across ? null : await get<WebhookEndpoint>(`/webhook_endpoints/${Number.isInteger(id) && id > 0 ? id : 0}`)
  const state = ctx.query.get('state') ?? ''
  const after = ctx.query.get('after')
  const parts = ['webhooks', endpoint ? String(endpoint.id) : 'deliveries']
  const filter = stateFilter(t('admin.hooks.deliveries'), parts, STATES.map((s): [string, string] => [s, label('admin.delivery', s)]), state)
  const title = endpoint ? t('admin.hooks.deliveriesOf', { id: endpoint.id }) : t('admin.hooks.allDeliveries')
  let page: ListPage<'deliveries', Delivery>
  let endpoints: WebhookEndpoint[]
  try {
    ;[page, endpoints] = await Promise.all([
      get<ListPage<'deliveries', Delivery>>(`${endpoint ? `/webhook_endpoints/${endpoint.id}/deliveries` : '/deliveries'}${query({ state, after })}`),
      endpoint ? [endpoint] : all<'webhook_endpoints', WebhookEndpoint>('webhook_endpoints', '/webhook_endpoints'),
    ])
  } catch (err) {
    if (!(err instanceof ApiError) || err.status !== 422) throw err
    return { title, content: [listProblem(filter, err), filter] }
  }
  return {
    title,
    content: [
      h('p', null, h('a', { href: href('webhooks') }, t('admin.hooks.endpoints')), endpoint ? [' · ', h('span', { class: 'url' }, endpoint.url)] : null),
      filter,
      section(t('admin.hooks.deliveries'),
        dataTable(title, deliveryColumns(ctx, !endpoint, (d) => endpoints.find((e) => e.id === d.webhook_endpoint_id)?.disabled !== true), page.deliveries),
        pager(page.next_after, after, (next) => withQuery(parts, { state, after: next }))),
    ],
  }
}
