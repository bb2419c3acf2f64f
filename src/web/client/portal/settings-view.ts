import { ApiError } from '../lib/api.ts'
import { h } from '../lib/dom.ts'
import { clearOutcome, problemOf, showOutcome, slot, type FormFields } from './feedback.ts'
import type { Portal } from './portal.ts'

/** The languages a customer's mails can be in (C17), each named in itself. */
const LANGUAGES = [['en', 'English'], ['es', 'Español'], ['fr', 'Français'], ['de', 'Deutsch']] as const

/** The settings' fields as PATCH /portal/api/settings names them in a 422 (the admin API's: C17). */
const FIELDS: FormFields = { email_notifications: { input: 'email-notifications' }, locale: { input: 'email-locale' } }

/**
 * The customer's e-mail settings (C17): whether they get mails at all, and in which language.
 * Saved through PATCH /portal/api/settings, whose rules and messages are the admin API's; the
 * answer is said beside the form and takes the focus, as every message of the portal (C18).
 */
export function emailSettings(portal: Portal): HTMLElement {
  const { t, api, session } = portal
  const place = slot('save-email-settings')
  let busy = false
  const save = async (e: Event): Promise<void> => {
    e.preventDefault()
    if (busy) return
    busy = true
    const form = e.target as HTMLFormElement
    const wanted = (form.elements.namedItem('email_notifications') as HTMLInputElement).checked
    const locale = (form.elements.namedItem('locale') as HTMLSelectElement).value
    clearOutcome(card)
    try {
      const saved = await api.patch<{ locale: string; email_notifications: boolean }>('/portal/api/settings', { settings: { email_notifications: wanted, locale } })
      const same = saved.locale === session.user.locale && saved.email_notifications === session.user.email_notifications
      // The session's copy follows, so the list drawn again later shows what is saved.
      session.user.locale = saved.locale
      session.user.email_notifications = saved.email_notifications
      showOutcome(card, place, { kind: same ? 'nothing' : 'done', lines: [t(same ? 'portal.nothing_changed' : 'portal.done.email_settings')], invalid: [] })
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && !(await portal.stillSignedIn())) return portal.sessionEnded()
      showOutcome(card, place, problemOf(portal, err, FIELDS))
    } finally {
      busy = false
    }
  }
  const card = h('section', { class: 'card', id: 'email-settings', 'aria-labelledby': 'email-settings-heading' },
    h('h2', { id: 'email-settings-heading' }, t('portal.email_settings')),
    h('form', { novalidate: true, onsubmit: (e: Event) => void save(e) },
      h('p', { class: 'check' },
        h('input', { id: 'email-notifications', name: 'email_notifications', type: 'checkbox', checked: session.user.email_notifications }),
        h('label', { for: 'email-notifications' }, t('portal.email_notifications'))),
      h('div', { class: 'row' }, h('div', null, h('label', { for: 'email-locale' }, t('portal.email_language')),
        h('select', { id: 'email-locale', name: 'locale' }, LANGUAGES.map(([code, name]) => h('option', { value: code, lang: code, selected: code === session.user.locale }, name))))),
      h('button', { type: 'submit', id: 'save-email-settings', class: 'secondary' }, t('portal.save_email_settings'))),
    place)
  return card
}
