import { field, h, type Child } from '../lib/dom.ts'
import { addDays, formatDate } from '../lib/format.ts'
import { slot } from './feedback.ts'
import { asking, preview } from './preview.ts'
import type { Key } from './portal.ts'
import { card, type Change, type SubscriptionView } from './view.ts'

/**
 * The "Delivery" card: only what the subscription's state allows (C8), each previewed by a dry
 * run before the customer confirms (C18): skip and pause while it runs, resume while paused,
 * cancel; undo a pending cancellation; reactivate a canceled or ended one (activate).
 */
export function deliveryCard(view: SubscriptionView): HTMLElement {
  const { t } = view.portal
  const sub = view.sub
  const ended = sub.state === 'canceled' || sub.state === 'inactive'
  const parts: Child[] = []
  const ask = (title: Key, confirm: Key): Change['confirm'] => asking(view.portal, t(title), t(confirm))

  if (sub.state === 'pending_cancellation') {
    const date = sub.actionable_date === null ? null : formatDate(sub.actionable_date, view.portal.page.language)
    if (date !== null) parts.push(h('p', { class: 'note' }, t('portal.pending_note', { date })))
    parts.push(button(view, 'undo-cancel', t('portal.undo_cancel'), 'primary', {
      done: 'portal.done.undo_cancel',
      confirm: ask('portal.undo_cancel_title', 'portal.undo_cancel_confirm'),
      send: (api) => api.post(view.path('/activate')),
    }))
  }
  if (!ended && !sub.paused) {
    parts.push(button(view, 'skip', t('portal.skip'), 'primary', {
      done: 'portal.done.skip',
      confirm: ask('portal.skip_title', 'portal.skip_confirm'),
      send: (api) => api.post(view.path('/skip')),
    }))
  }
  if (sub.state === 'active' && !sub.paused) parts.push(pauseForm(view, ask('portal.pause_title', 'portal.pause_confirm')))
  if (sub.paused) {
    parts.push(button(view, 'resume', t('portal.resume'), 'primary', {
      done: 'portal.done.resume',
      confirm: ask('portal.resume_title', 'portal.resume_confirm'),
      send: (api) => api.post(view.path('/resume')),
    }))
  }
  if (ended) {
    parts.push(button(view, 'reactivate', t('portal.reactivate'), 'primary', {
      done: 'portal.done.reactivate',
      confirm: ask('portal.reactivate_title', 'portal.reactivate_confirm'),
      send: (api) => api.post(view.path('/activate')),
    }))
  }
  if (sub.state === 'active') {
    parts.push(button(view, 'cancel', t('portal.cancel'), 'secondary', {
      done: (after) => (after.state === 'pending_cancellation' ? 'portal.done.cancellation_pending' : 'portal.done.cancel'),
      // The dry run tells whether the shop's notice keeps the next delivery (pending_cancellation).
      confirm: (before, after) => ({
        title: t('portal.cancel_title'),
        body: after.state === 'pending_cancellation' && after.actionable_date !== null
          ? t('portal.cancel_body_notice', { date: formatDate(after.actionable_date, view.portal.page.language) })
          : t('portal.cancel_body'),
        details: preview(view.portal, before, after),
        confirm: t('portal.cancel_confirm'),
        dismiss: t('portal.cancel_keep'),
        danger: true,
      }),
      send: (api) => api.post(view.path('/cancel')),
    }))
  }
  return card('delivery', t('portal.actions'), parts)
}

type ButtonChange = Omit<Change, 'at' | 'card'>

/** One action's button, with its own place for the message about it. */
function button(view: SubscriptionView, id: string, text: string, kind: 'primary' | 'secondary', change: ButtonChange): HTMLElement {
  return h('div', { class: 'action' },
    h('button', { type: 'button', id, class: kind === 'secondary' ? 'secondary' : null, onclick: () => view.change({ at: id, card: 'delivery', ...change }) }, text),
    slot(id))
}

function pauseForm(view: SubscriptionView, confirm: Change['confirm']): HTMLElement {
  const { t, session } = view.portal
  const fields = { actionable_date: { input: 'pause-date', label: t('portal.pause_until') } }
  const submit = (e: Event): void => {
    e.preventDefault()
    const date = field(e.target as HTMLFormElement, 'date')
    view.change({
      at: 'pause', card: 'delivery', fields, done: 'portal.done.pause', ...(confirm ? { confirm } : {}),
      send: (api) => api.post(view.path('/pause'), date === '' ? {} : { subscription: { actionable_date: date } }),
    })
  }
  return h('div', { class: 'action' },
    h('form', { class: 'row', id: 'pause-form', novalidate: true, onsubmit: submit },
      h('div', null, h('label', { for: 'pause-date' }, t('portal.pause_until')), h('input', { id: 'pause-date', name: 'date', type: 'date', min: addDays(session.today, 1) })),
      h('button', { type: 'submit', id: 'pause', class: 'secondary' }, t('portal.pause'))),
    slot('pause'))
}
