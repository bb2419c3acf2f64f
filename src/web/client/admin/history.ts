/**
 * A subscription's history (C18): each event with who made it (`actor`), the request it came
 * from, and what changed, from its object compared with the same object's previous
 * representation in the events (the subscription, a line item, an installment). Read newest
 * first in pages; an entry whose previous representation is on an older page shows its changes
 * once that page is read.
 */
import { h } from '../lib/dom.ts'
import { get, query, type ListPage } from './api.ts'
import { PROCESSED_FIELDS, changeList, installmentChanges, lineItemChanges, linesText, subscriptionChanges, type Change, type Naming } from './changes.ts'
import { eventName, money, when } from './format.ts'
import { t } from './strings.ts'
import type { Actor, EventRecord, Installment, LineItem, Subscription } from './types.ts'
import { actionButton, problemBox } from './ui.ts'

const PAGE = 50

type Kind = 'subscription' | 'line_item' | 'installment'

const kindOf = (type: string): Kind | undefined => {
  const head = type.split('.')[0]
  return head === 'subscription' || head === 'line_item' || head === 'installment' ? head : undefined
}

const idOf = (e: EventRecord): number | undefined => {
  const o = e.data?.object
  return typeof o === 'object' && o !== null && typeof (o as { id?: unknown }).id === 'number' ? (o as { id: number }).id : undefined
}

export function actorText(actor: Actor | null | undefined): string {
  if (!actor) return t('admin.actor.unknown')
  switch (actor.type) {
    case 'customer': return actor.id === null ? t('admin.actor.customerAny') : t('admin.actor.customer', { id: actor.id })
    case 'staff': return actor.id === null ? t('admin.actor.staffConfigured') : t('admin.actor.staff', { id: actor.id })
    case 'portal': return t('admin.actor.portal')
    case 'processor': return t('admin.actor.processor')
    case 'system': return t('admin.actor.system')
    default: return String((actor as { type: unknown }).type)
  }
}

/**
 * What one event changed. `older` are the events before it (newest first); `complete` says
 * whether they are all of them (no older page left to read).
 */
function changesOf(e: EventRecord, older: readonly EventRecord[], complete: boolean, sub: Subscription, naming: Naming): Change[] | null {
  const kind = kindOf(e.type)
  const id = idOf(e)
  if (kind === undefined || id === undefined) return null
  const object = e.data?.object
  if (e.type === 'line_item.created') {
    const li = object as LineItem
    return [{ field: t('admin.changes.added'), before: '', after: linesText([li], naming) }]
  }
  if (e.type === 'line_item.deleted') {
    const li = object as LineItem
    return [{ field: t('admin.changes.removed'), before: linesText([li], naming), after: '' }]
  }
  const at = older.findIndex((o) => kindOf(o.type) === kind && idOf(o) === id)
  const previous = at < 0 ? undefined : older[at]
  if (!previous) {
    if (e.type === 'subscription.created' || e.type === 'installment.created' || complete) return []
    return null
  }
  if (kind === 'subscription') {
    // An installment made in between moved what the processor moves, without a subscription event.
    const processed = older.slice(0, at).some((o) => o.type === 'installment.created')
    return subscriptionChanges(previous.data?.object as Subscription, object as Subscription, naming, processed ? PROCESSED_FIELDS : [])
  }
  if (kind === 'line_item') return lineItemChanges(previous.data?.object as LineItem, object as LineItem, sub.currency, naming)
  return installmentChanges(previous.data?.object as Installment, object as Installment)
}

function entry(e: EventRecord, changes: Change[] | null): HTMLElement {
  const object = e.data?.object
  const installment = kindOf(e.type) === 'installment' ? (object as Installment) : undefined
  return h('li', null,
    h('div', { class: 'event-head' },
      h('time', { datetime: e.created_at }, when(e.created_at)),
      h('strong', null, eventName(e.type)),
      installment ? h('span', null, t('admin.changes.installment', { id: installment.id }), installment.total ? ` · ${money(installment.total, installment.currency)}` : null) : null,
      h('span', { class: 'actor' }, t('admin.changes.by', { actor: actorText(e.actor) })),
      e.request_id ? h('span', { class: 'muted request-id' }, t('admin.changes.request', { id: e.request_id })) : null),
    changes === null ? null : changes.length === 0 ? null : changeList(changes))
}

/** The history, a page of events at a time under "Show older". */
export function historyView(sub: Subscription, naming: Naming): HTMLElement {
  const events: EventRecord[] = []
  let next: number | null = 0
  const list = h('ol', { class: 'timeline' })
  const problem = problemBox()
  const box = h('div', null, problem.el, h('p', { class: 'muted' }, t('common.loading')))
  const draw = (): void => {
    const complete = next === null
    list.replaceChildren(...events.map((e, i) => entry(e, changesOf(e, events.slice(i + 1), complete, sub, naming))))
  }
  const load = async (): Promise<void> => {
    problem.clear()
    try {
      const page: ListPage<'events', EventRecord> = await get(`/subscriptions/${sub.id}/events${query({ after: next || null, limit: PAGE })}`)
      const first = events.length
      events.push(...page.events)
      next = page.next_after
      draw()
      box.replaceChildren(problem.el, events.length === 0 ? h('p', { class: 'muted' }, t('admin.noResults')) : list)
      if (next !== null) box.append(more)
      // Reading goes on where the new entries start.
      if (first > 0) (list.children[first] as HTMLElement | undefined)?.setAttribute('tabindex', '-1')
      if (first > 0) (list.children[first] as HTMLElement | undefined)?.focus()
    } catch (err) {
      problem.show(err)
    }
  }
  const more = actionButton(t('admin.loadMore'), load, 'secondary')
  void load()
  return box
}

