import { ApiError } from '../lib/api.ts'
import { h, replace } from '../lib/dom.ts'
import type { Key, Portal } from './portal.ts'

/**
 * What the customer hears after a change (C18): the message stands next to the form or button it
 * is about, takes the focus, and the fields the API refused are marked (`aria-invalid`, described
 * by the message). The API's field names never reach the page: each is said with its label, or,
 * for a refusal about the subscription rather than a value typed, the API's sentence alone.
 */

/**
 * The API's fields a form edits: the input that holds each (marked when refused) and, where the
 * form names it its own way, its label: `{actionable_date: {input: 'pause-date', label: 'Pause until'}}`.
 */
export type FormFields = Readonly<Record<string, { readonly input: string; readonly label?: string }>>

export interface Outcome {
  readonly kind: 'done' | 'nothing' | 'problem'
  readonly lines: readonly string[]
  /** Ids of the inputs the API refused. */
  readonly invalid: readonly string[]
}

/** The words for every field the customer API names in a 422 (C4, C6–C8, C16, C17), wherever the form does not say it itself. */
const LABELS: Readonly<Record<string, Key>> = {
  quantity: 'field.quantity',
  subscribable_id: 'field.subscribable_id',
  interval_length: 'field.interval_length',
  interval_units: 'field.interval_units',
  actionable_date: 'field.actionable_date',
  end_date: 'portal.field.end_date',
  currency: 'portal.field.currency',
  payment_method_id: 'portal.field.payment_method_id',
  shipping_address: 'portal.shipping_address',
  billing_address: 'portal.field.billing_address',
  line_items: 'portal.items',
  one_time: 'portal.field.one_time',
  locale: 'portal.field.locale',
  email_notifications: 'portal.field.email_notifications',
  firstname: 'field.firstname',
  lastname: 'field.lastname',
  company: 'field.company',
  address1: 'field.address1',
  address2: 'field.address2',
  city: 'field.city',
  zipcode: 'field.zipcode',
  state_name: 'field.state_name',
  country_iso: 'field.country_iso',
  phone: 'field.phone',
}

/**
 * The label of an API field (`quantity`, `shipping_address.city`, `line_items.quantity`): the
 * form's own, else the general one of its last part; undefined for a field whose messages are
 * whole sentences about the subscription (`state`, `paused`, the skip limits, payment,
 * `subscribable`), and for any field this page has no word for: its name is never shown.
 */
export function fieldLabel(portal: Portal, name: string, form: FormFields = {}): string | undefined {
  const own = form[name]?.label
  if (own !== undefined) return own
  const key = LABELS[name] ?? LABELS[name.slice(name.lastIndexOf('.') + 1)]
  return key === undefined ? undefined : portal.t(key)
}

/** An API sentence shown alone: "cannot skip a subscription which is paused" → "Cannot skip a subscription which is paused." */
function sentence(text: string, language: string): string {
  const first = text.charAt(0).toLocaleUpperCase(language) + text.slice(1)
  return /[.!?…]$/.test(first) ? first : `${first}.`
}

/** The outcome of a refused or failed request: its lines in the customer's words and the inputs to mark. */
export function problemOf(portal: Portal, err: unknown, form: FormFields = {}): Outcome {
  if (!(err instanceof ApiError)) return { kind: 'problem', lines: [portal.t('common.error')], invalid: [] }
  if (err.fields === undefined) return { kind: 'problem', lines: [err.message], invalid: [] }
  const lines: string[] = []
  const invalid: string[] = []
  for (const [name, messages] of Object.entries(err.fields)) {
    const label = fieldLabel(portal, name, form)
    if (label === undefined) lines.push(...messages.map((m) => sentence(m, portal.page.language)))
    else lines.push(`${label}: ${messages.join(', ')}`)
    const input = form[name]?.input
    if (input !== undefined) invalid.push(input)
  }
  return { kind: 'problem', lines, invalid }
}

/**
 * Draws `outcome` into `slot` (an empty element beside the form it is about), marks the refused
 * inputs (found in `root`) and moves the focus to the message, so it is read and seen where the
 * customer acted, however long the page.
 */
export function showOutcome(root: ParentNode, slot: HTMLElement, outcome: Outcome): void {
  const id = `${slot.id || 'outcome'}-message`
  const message = outcome.kind === 'problem'
    ? h('div', { id, class: 'problem', role: 'alert', tabindex: '-1' },
      outcome.lines.length === 1 ? outcome.lines[0] : h('ul', null, outcome.lines.map((line) => h('li', null, line))))
    : h('div', { id, class: outcome.kind === 'done' ? 'notice' : 'notice neutral', role: 'status', tabindex: '-1' }, outcome.lines.join(' '))
  replace(slot, message)
  for (const inputId of outcome.invalid) {
    const input = byId(root, inputId)
    if (!input) continue
    input.setAttribute('aria-invalid', 'true')
    input.setAttribute('aria-describedby', id)
  }
  message.focus()
}

/** Takes back the marks of a message shown before (the inputs it described). */
export function clearOutcome(root: ParentNode): void {
  for (const input of root.querySelectorAll('[aria-invalid="true"]')) {
    input.removeAttribute('aria-invalid')
    input.removeAttribute('aria-describedby')
  }
  for (const message of root.querySelectorAll('.slot')) replace(message as HTMLElement)
}

/** The element of `root` with this id (ids here are the page's own: letters, digits and dashes). */
export function byId(root: ParentNode, id: string): HTMLElement | null {
  return root.querySelector<HTMLElement>(`#${CSS.escape(id)}`)
}

/** The place for the message about the form or button `at` (its id: `at-outcome`). */
export function slot(at: string): HTMLElement {
  return h('div', { class: 'slot', id: `${at}-outcome` })
}
