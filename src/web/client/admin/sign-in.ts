/**
 * Signing in: the pasted token is checked by the API itself (GET /admin_tokens/current: a bad
 * token is its 401, a metrics token its 403, in the page's language) and only then kept.
 */
import { field as valueOf, h } from '../lib/dom.ts'
import { apiWith } from './api.ts'
import * as session from './session.ts'
import { t } from './strings.ts'
import { field, problemBox } from './ui.ts'

export function signInView(signedIn: () => void, because?: string): HTMLElement {
  const problem = problemBox()
  const input = h('input', { type: 'password', name: 'token', required: true, autocomplete: 'off', spellcheck: 'false' })
  const submit = h('button', { type: 'submit', class: 'button' }, t('admin.signIn.submit'))
  const form = h('form', { class: 'card sign-in' }, h('h1', { tabindex: '-1' }, t('admin.signIn.title')),
    because === undefined ? null : h('p', { class: 'problem', role: 'alert' }, t('admin.signIn.signedOut', { error: because })),
    problem.el,
    field(t('admin.signIn.token'), input, t('admin.signIn.help')),
    submit)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const token = valueOf(form, 'token')
    if (token === '') return input.focus()
    submit.disabled = true
    problem.clear()
    apiWith(token).get<session.Who>('/admin/api/v1/admin_tokens/current').then(
      (who) => {
        session.signIn(token, who)
        signedIn()
      },
      (err: unknown) => {
        problem.show(err)
        submit.disabled = false
        input.focus()
      },
    )
  })
  queueMicrotask(() => input.focus())
  return form
}
