/** The dashboard's building blocks: sections, tables, form fields, messages, pagers. */
import { field as valueOf, h, uid, type Child } from '../lib/dom.ts'
import { ApiError, download, problemLines } from './api.ts'
import { t } from './strings.ts'
import { withQuery } from './router.ts'
import type { PageCtx } from './page.ts'

/** A card under its heading. Not a named landmark: the tables inside are (ui.ts `table`), by the same name. */
export function section(title: string, ...children: Child[]): HTMLElement {
  return h('section', { class: 'card' }, h('h2', null, title), ...children)
}

/** A column of `dataTable`: its heading, its cell, and, when it can be sorted, its key and value. */
export interface Column<T> {
  readonly label: string
  readonly cell: (row: T) => Child
  readonly sortKey?: string
  readonly sortValue?: (row: T) => string | number
  /** A cell that holds controls (not repeated as a label on a phone's card). */
  readonly actions?: boolean
}

export type SortDir = 'asc' | 'desc'

/** The order a list is drawn in, from the page's URL (`sort=`, `dir=`), and the link that changes it. */
export interface Sorting {
  readonly key: string | null
  readonly dir: SortDir
  readonly href: (key: string, dir: SortDir) => string
}

/** `sort` and `dir` of a page's query. */
export function sortingOf(query: URLSearchParams, href: (key: string, dir: SortDir) => string): Sorting {
  return { key: query.get('sort'), dir: query.get('dir') === 'desc' ? 'desc' : 'asc', href }
}

/**
 * A table that is a table on a wide screen and a stack of cards on a phone (main.css): each cell
 * carries its column's name for that. Sortable columns have a link in their heading that orders
 * the rows shown one way, then the other (`aria-sort` says which).
 */
export function dataTable<T>(caption: string, columns: readonly Column<T>[], rows: readonly T[], sorting?: Sorting): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, t('admin.noResults'))
  const by = sorting?.key ? columns.find((c) => c.sortKey === sorting.key) : undefined
  let ordered = rows
  if (by?.sortValue && sorting) {
    const value = by.sortValue
    const sign = sorting.dir === 'desc' ? -1 : 1
    ordered = [...rows].sort((a, b) => {
      const x = value(a)
      const y = value(b)
      return sign * (typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y)))
    })
  }
  const heading = (c: Column<T>): HTMLElement => {
    if (!c.sortKey || !sorting) return h('th', { scope: 'col' }, c.label)
    const current = sorting.key === c.sortKey ? sorting.dir : null
    const next: SortDir = current === 'asc' ? 'desc' : 'asc'
    return h('th', { scope: 'col', 'aria-sort': current === null ? null : current === 'asc' ? 'ascending' : 'descending' },
      h('a', { href: sorting.href(c.sortKey, next), class: 'sort' }, c.label,
        h('span', { class: 'visually-hidden' }, ` ${t(next === 'asc' ? 'admin.sort.asc' : 'admin.sort.desc')}`),
        h('span', { 'aria-hidden': 'true', class: 'sort-mark' }, current === 'asc' ? ' ▲' : current === 'desc' ? ' ▼' : ' ↕')))
  }
  return tableShell(caption, columns.map(heading),
    ordered.map((row) => h('tr', null, columns.map((c) => h('td', { 'data-label': c.actions ? null : c.label, class: c.actions ? 'cell-actions' : null }, c.cell(row))))))
}

/** A table of rows already made: `headers` and cells in the same order. */
export function table(caption: string, headers: readonly string[], rows: readonly Child[][]): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'muted' }, t('admin.noResults'))
  return tableShell(caption, headers.map((x) => h('th', { scope: 'col' }, x)),
    rows.map((cells) => h('tr', null, cells.map((c, i) => h('td', { 'data-label': headers[i] ?? null }, c)))))
}

/**
 * The wrapper is a named region that takes focus, so the keyboard can scroll a wide table
 * sideways (the page itself never scrolls sideways).
 */
function tableShell(caption: string, headings: HTMLElement[], rows: HTMLElement[]): HTMLElement {
  return h('div', { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: '0' },
    h('table', { class: 'cards' },
      h('caption', { class: 'visually-hidden' }, caption),
      h('thead', null, h('tr', null, headings)),
      h('tbody', null, rows)))
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

/**
 * Where a form's refusal is shown (the API's words, each field by its label), read out when it
 * appears; with `form`, the fields the API named are marked `aria-invalid` until the next try.
 */
export function problemBox(form?: HTMLFormElement): { el: HTMLElement; show(err: unknown): void; clear(): void } {
  const el = h('div', { class: 'problem', role: 'alert' })
  const unmark = () => form?.querySelectorAll('[aria-invalid]').forEach((c) => c.removeAttribute('aria-invalid'))
  return {
    el,
    show(err) {
      el.replaceChildren(h('p', null, t('admin.formErrors')), h('ul', null, problemLines(err).map((line) => h('li', null, line))))
      unmark()
      if (form && err instanceof ApiError && err.fields) {
        for (const name of Object.keys(err.fields)) form.querySelector(`[name="${CSS.escape(name)}"]`)?.setAttribute('aria-invalid', 'true')
      }
    },
    clear() {
      el.replaceChildren()
      unmark()
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
  return h('nav', { class: 'pager', 'aria-label': t('admin.pages') },
    after ? h('a', { href: link(null) }, t('admin.firstPage')) : null,
    nextAfter === null ? null : h('a', { href: link(nextAfter), rel: 'next' }, t('admin.nextPage')))
}

/** A value to copy (a secret shown once, a portal link): read-only, selectable, with a copy button. */
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

/** A list's filter form that keeps its place when the API refuses a filter: the refusal beside it, the field marked. */
export function listProblem(form: HTMLFormElement, err: unknown): HTMLElement {
  const problem = problemBox(form)
  problem.show(err)
  return problem.el
}

/** "Export CSV" (C18): the file of what the list's filters select, every page of it; a refusal beside the button. */
export function exportButton(path: string, filename: string): HTMLElement {
  const problem = h('span', { class: 'inline-problem', role: 'alert' })
  const button = actionButton(t('admin.export'), async () => {
    problem.replaceChildren()
    try {
      await download(path, filename)
    } catch (err) {
      problem.replaceChildren(problemLines(err).join(' '))
    }
  }, 'secondary')
  return h('div', { class: 'row export' }, button, problem)
}

/**
 * An inline form that creates a record and draws the page again ("Saved."); a refusal stays on
 * the form, its fields marked. `send` may keep what the answer shows once (a secret).
 */
export function createForm(title: string, controls: Child, send: (form: HTMLFormElement) => Promise<unknown>, ctx: PageCtx): HTMLFormElement {
  const submit = h('button', { type: 'submit', class: 'button' }, t('admin.create'))
  const form = h('form', { class: 'create', 'aria-label': title }, h('h3', null, title))
  const problem = problemBox(form)
  form.append(problem.el)
  for (const c of Array.isArray(controls) ? controls : [controls]) if (c instanceof Node) form.append(c)
  form.append(submit)
  form.addEventListener('submit', (event) => {
    event.preventDefault()
    submit.disabled = true
    problem.clear()
    send(form).then(() => ctx.refresh(t('admin.saved')), (err: unknown) => {
      problem.show(err)
      submit.disabled = false
    })
  })
  return form
}

/** A list's filter by state: a select and Search, which go to the same page with `state` (and `keep`). */
export function stateFilter(label: string, parts: readonly string[], states: readonly [string, string][], state: string, keep: Record<string, string | null> = {}): HTMLFormElement {
  const filter = h('form', { class: 'row', role: 'search', 'aria-label': label },
    field(t('admin.state'), select('state', [['', t('admin.any')], ...states], state)),
    h('button', { type: 'submit', class: 'button' }, t('admin.search')))
  filter.addEventListener('submit', (event) => {
    event.preventDefault()
    location.hash = withQuery(parts, { ...keep, state: valueOf(filter, 'state') })
  })
  return filter
}
