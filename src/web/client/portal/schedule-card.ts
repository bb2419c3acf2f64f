import { field, h } from '../lib/dom.ts'
import { slot } from './feedback.ts'
import { asking } from './preview.ts'
import { card, type SubscriptionView } from './view.ts'

const UNITS = ['day', 'week', 'month', 'year'] as const

/**
 * The "Schedule" card: the frequency (previewed: C7 moves the next date with it) and, while the
 * subscription will act, the next delivery's date. An empty date is asked for here: the API
 * takes a blank date as none given, so sending it would change nothing.
 */
export function scheduleCard(view: SubscriptionView): HTMLElement {
  const { t } = view.portal
  const sub = view.sub
  const saveFrequency = (e: Event): void => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const change = { interval_length: field(form, 'interval_length'), interval_units: field(form, 'interval_units') }
    view.change({
      at: 'save-frequency', card: 'schedule', done: 'portal.done.frequency',
      fields: { interval_length: { input: 'interval-length' }, interval_units: { input: 'interval-units' } },
      confirm: asking(view.portal, t('portal.frequency_title'), t('portal.frequency_confirm')),
      send: (api) => api.patch(view.path(), { subscription: change }),
    })
  }
  const saveDate = (e: Event): void => {
    e.preventDefault()
    const date = field(e.target as HTMLFormElement, 'actionable_date')
    const fields = { actionable_date: { input: 'next-date' } }
    if (date === '') return view.refuse({ at: 'save-next-date', card: 'schedule', fields }, [t('portal.choose_date')])
    view.change({ at: 'save-next-date', card: 'schedule', fields, done: 'portal.done.next_date', send: (api) => api.patch(view.path(), { subscription: { actionable_date: date } }) })
  }
  const ended = sub.state === 'canceled' || sub.state === 'inactive'
  return card('schedule', t('portal.schedule'), [
    h('form', { class: 'row', novalidate: true, onsubmit: saveFrequency },
      h('div', null, h('label', { for: 'interval-length' }, t('field.interval_length')),
        h('input', { id: 'interval-length', name: 'interval_length', type: 'number', inputmode: 'numeric', value: sub.interval_length })),
      h('div', null, h('label', { for: 'interval-units' }, t('field.interval_units')),
        h('select', { id: 'interval-units', name: 'interval_units' }, UNITS.map((u) => h('option', { value: u, selected: u === sub.interval_units }, t(`unit.${u}`))))),
      h('button', { type: 'submit', id: 'save-frequency', class: 'secondary' }, t('portal.save_frequency'))),
    slot('save-frequency'),
    // A subscription that will not act has no date (C3); the API refuses one (C7, docs/decisions.md).
    ended ? null : h('form', { class: 'row', novalidate: true, onsubmit: saveDate },
      h('div', null, h('label', { for: 'next-date' }, t('field.actionable_date')),
        h('input', { id: 'next-date', name: 'actionable_date', type: 'date', value: sub.actionable_date ?? '' })),
      h('button', { type: 'submit', id: 'save-next-date', class: 'secondary' }, t('portal.save_next_date'))),
    ended ? null : slot('save-next-date'),
  ])
}
