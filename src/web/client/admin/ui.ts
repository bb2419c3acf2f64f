/** The dashboard's building blocks: sections, tables, form fields, messages, pagers. */
import { h, uid, type Child } from '../lib/dom.ts'
import { problemLines } from './api.ts'
import { t } from './strings.ts'

/** A card under its heading. Not a named landmark: the tables inside are (ui.ts `table`), by the same name. */
export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, h('h2', null, title), ...children)
}

/**
 * A table that scrolls sideways on a narrow screen instead of the page: its wrapper is a named
 * region that takes focus, so the keyboard can scroll it too.
 */
export function table(caption: string, headers: readonly string[], rows: readonly Child[][]): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, t('admin.noResults'))
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h('table', null,
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', null, h('tr', null, headers.map((x) => h('th', { scope: 'col' }, x)))),
      h('tbody', null, rows.map((cells) => h('tr', null, cells.map((c) => h('td', null, c)))))))
}

/** A definition list of facts: `[term, value]` pairs. */
export function facts(pairs: readonly [string, Child][]): HTMLElement {
  return h('dl', { class: 'facts' }, pairs.map(([term, value]) => [h('dt', null, term), h('dd', null, value)]))
}

/** A labelled control; `hint` is tied to it as its description. */
export function field(text: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  control.id ||= uid('field')
  const hintEl = hint === undefined ? null : h('small', { id: `${control.id}-hint`, class: 'muted' }, hint)
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id)
  return h('div', { class: 'field' }, h('label', { for: control.id }, text), control, hintEl)
}

export function select(name: string, options: readonly [value: string, text: string][], selected = ''): HTMLSelectElement {
  return h('select', { name }, options.map(([value, text]) => h('option', { value, selected: value === selected }, text)))
}

export function checkbox(name: string, text: string, checked: boolean): HTMLElement {
  const id = uid('check')
  return h('div', { class: 'check' }, h('input', { type: 'checkbox', id, name, checked }), h('label', { for: id }, text))
}

/** Where a form's refusal is shown (the API's words), read out when it appears. */
export function problemBox(): { el: HTMLElement; show(err: unknown): void; clear(): void } {
  const el = h('div', { class: 'problem', role: 'alert' })
  return {
    el,
    show(err) {
      el.replaceChildren(h('p', null, t('admin.formErrors')), h('ul', null, problemLines(err).map((line) => h('li', null, line))))
    },
    clear() {
      el.replaceChildren()
    },
  }
}

/** The page's polite announcer: a short confirmation after an action. */
export function noticeBox(): { el: HTMLElement; say(text: string): void } {
  const el = h('div', { class: 'notice', role: 'status' })
  return { el, say: (text) => el.replaceChildren(text) }
}

/** Links to the next page of a keyset list (and back to the first). */
export function pager(nextAfter: number | null, after: string | null, link: (after: number | null) => string): HTMLElement | null {
  if (nextAfter === null && !after) return null
  return h('nav', { class: 'pager', 'aria-label': t('admin.nextPage') },
    after ? h('a', { href: link(null) }, t('admin.firstPage')) : null,
    nextAfter === null ? null : h('a', { href: link(nextAfter), rel: 'next' }, t('admin.nextPage')))
}

/** A secret shown once (a webhook secret, a new token): read-only, selectable, with a copy button. */
export function shownOnce(message: string, fieldLabel: string, value: string): HTMLElement {
  const input = h('input', { type: 'text', readonly: true, value, class: 'secret', spellcheck: 'false', autocomplete: 'off' })
  const done = h('span', { role: 'status', class: 'muted' })
  const copy = h('button', { type: 'button', class: 'button secondary' }, t('admin.copy'))
  copy.addEventListener('click', () => {
    input.select()
    void navigator.clipboard?.writeText(value).then(() => done.replaceChildren(t('admin.copied')), () => {})
  })
  return h('div', { class: 'shown-once' }, h('p', null, h('strong', null, message)), field(fieldLabel, input), h('div', { class: 'row' }, copy, done))
}

/** A button that is disabled while its action runs, so a double click acts once. */
export function actionButton(text: string, run: () => Promise<void>, variant = ''): HTMLButtonElement {
  const button = h('button', { type: 'button', class: `button ${variant}`.trim() }, text)
  button.addEventListener('click', () => {
    button.disabled = true
    void run().finally(() => { button.disabled = false })
  })
  return button
}
