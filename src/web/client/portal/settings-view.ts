import { ApiError } from '../lib/api.ts'
import { h, replace } from '../lib/dom.ts'
import type { Portal } from './portal.ts'

/** The languages a customer's mails can be in (C17), each named in itself. */
const LANGUAGES = [['en', 'English'], ['es', 'Español'], ['fr', 'Français'], ['de', 'Deutsch']] as const

/**
 * The customer's e-mail settings (C17): whether they get mails at all, and in which language.
 * Saved through PATCH /portal/api/settings, whose rules and messages are the admin API's.
 */
export function emailSettings(portal: Portal): HTMLElement {
  const { t, api, session } = portal
  const notice = h('div', { class: 'notice', role: 'status' })
  const problem = h('div', { class: 'problem', role: 'alert' })
  const save = async (e: Event): Promise<void> => {
    e.preventDefault()
    const form = e.target as HTMLFormElement
    const wanted = (form.elements.namedItem('email_notifications') as HTMLInputElement).checked
    const locale = (form.elements.namedItem('locale') as HTMLSelectElement).value
    replace(notice)
    replace(problem)
    try {
      await api.patch('/portal/api/settings', { settings: { email_notifications: wanted, locale } })
      replace(notice, t('portal.done.email_settings'))
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return portal.sessionEnded()
      replace(problem, err instanceof Error ? err.message : t('common.error'))
    }
  }
  return h('section', { class: 'card', 'aria-labelledby': 'email-settings' },
    h('h2', { id: 'email-settings' }, t('portal.email_settings')),
    notice, problem,
    h('form', { novalidate: true, onsubmit: (e: Event) => void save(e) },
      h('p', null,
        h('input', { id: 'email-notifications', name: 'email_notifications', type: 'checkbox', checked: session.user.email_notifications }),
        ' ', h('label', { for: 'email-notifications' }, t('portal.email_notifications'))),
      h('div', null, h('label', { for: 'email-locale' }, t('portal.email_language')),
        h('select', { id: 'email-locale', name: 'locale' }, LANGUAGES.map(([code, name]) => h('option', { value: code, lang: code, selected: code === session.user.locale }, name)))),
      h('button', { type: 'submit', id: 'save-email-settings', class: 'secondary' }, t('portal.save_email_settings'))))
}
