/**
 * What changed between two representations of a record (C18 "before → after"): a subscription's
 * history compares each event's object with the one before it, and a preview compares the record
 * now with a dry run's answer. Only values the API gave are shown, formatted; nothing is computed.
 */
import { h } from '../lib/dom.ts'
import { fieldLabel } from './fields.ts'
import { dash, day, interval, label, money, num, when } from './format.ts'
import { t } from './strings.ts'
import type { Address, Installment, LineItem, Subscription, User } from './types.ts'

export interface Change {
  readonly field: string
  readonly before: string
  readonly after: string
}

/** Names the page knows (items by id, a payment pair as words); ids when it does not. */
export interface Naming {
  readonly item?: (id: number) => string | undefined
  readonly payment?: (methodId: number | null, sourceId: number | null) => string
}

/** An address as the lines of a label. */
export const addressLines = (a: Address): string[] =>
  [[a.firstname, a.lastname].filter(Boolean).join(' '), a.company, a.address1, a.address2,
    [a.zipcode, a.city].filter(Boolean).join(' '), a.state_name, a.country_iso ? countryName(a.country_iso) : null, a.phone].filter((x): x is string => !!x)

/** `FR` → "France" in the page's language (the code itself when the browser has no name for it). */
export function countryName(code: string): string {
  try {
    return new Intl.DisplayNames([document.documentElement.lang || 'en'], { type: 'region' }).of(code.toUpperCase()) ?? code
  } catch {
    return code
  }
}

export const addressText = (a: Address | null | undefined): string => (a ? addressLines(a).join(', ') : dash())

export const itemName = (naming: Naming, id: number): string => naming.item?.(id) ?? `#${id}`

export const linesText = (lines: readonly LineItem[], naming: Naming): string =>
  lines.length === 0 ? dash() : lines.map((li) => `${itemName(naming, li.subscribable_id)} × ${li.quantity}${li.one_time ? ` (${t('admin.sub.oneTime')})` : ''}`).join(', ')

const yesNo = (b: boolean | undefined): string => (b === undefined ? dash() : b ? t('admin.yes') : t('admin.no'))

type Rule<T> = readonly [field: string, show: (r: T) => string]

/** The fields whose shown value differs; a `stale` one shows only its value after (its before is not known). */
function compare<T>(before: T, after: T, stale: readonly string[], rules: readonly Rule<T>[]): Change[] {
  const out: Change[] = []
  for (const [field, show] of rules) {
    const b = show(before)
    const a = show(after)
    if (a !== b) out.push({ field: fieldLabel(field), before: stale.includes(field) ? '' : b, after: a })
  }
  return out
}

/**
 * Fields the processor changes without an event of the subscription (C9: making an installment
 * moves the next date, resets the skips in a row, ends a pending cancellation): after it ran, the
 * subscription's previous representation no longer says what they were.
 */
export const PROCESSED_FIELDS = ['state', 'actionable_date', 'successive_skip_count'] as const

export function subscriptionChanges(before: Subscription, after: Subscription, naming: Naming = {}, stale: readonly string[] = []): Change[] {
  const payment = (s: Subscription) => naming.payment?.(s.payment_method_id, s.payment_source_id)
    ?? (s.payment_method_id === null && s.payment_source_id === null ? dash() : `#${s.payment_method_id ?? ''} / #${s.payment_source_id ?? ''}`)
  return compare(before, after, stale, [
    ['state', (s) => label('state', s.state)],
    ['paused', (s) => yesNo(s.paused)],
    ['actionable_date', (s) => day(s.actionable_date)],
    ['interval_length', (s) => interval(s.interval_length, s.interval_units)],
    ['end_date', (s) => day(s.end_date)],
    ['line_items', (s) => linesText(s.line_items, naming)],
    ['total', (s) => (s.total === undefined ? dash() : money(s.total, s.currency))],
    ['currency', (s) => s.currency],
    ['shipping_address', (s) => addressText(s.shipping_address)],
    ['billing_address', (s) => addressText(s.billing_address)],
    ['payment_source_type', payment],
    ['skip_count', (s) => num(s.skip_count)],
    ['successive_skip_count', (s) => num(s.successive_skip_count)],
  ])
}

export function lineItemChanges(before: LineItem, after: LineItem, currency: string | undefined, naming: Naming = {}): Change[] {
  return compare(before, after, [], [
    ['subscribable_id', (li) => itemName(naming, li.subscribable_id)],
    ['quantity', (li) => num(li.quantity)],
    ['total', (li) => (li.total === undefined ? dash() : money(li.total, currency))],
  ])
}

export function installmentChanges(before: Installment, after: Installment): Change[] {
  return compare(before, after, [], [
    ['state', (i) => label('admin.installment', i.state)],
    ['retry_at', (i) => when(i.retry_at)],
  ])
}

export function userChanges(before: User, after: User): Change[] {
  return compare(before, after, [], [
    ['email', (u) => u.email ?? dash()],
    ['external_id', (u) => u.external_id ?? dash()],
    ['locale', (u) => (u.locale ? languageName(u.locale) : dash())],
    ['email_notifications', (u) => yesNo(u.email_notifications)],
  ])
}

/** A language code in the page's language: `de` → "German", "alemán"… */
export function languageName(code: string): string {
  try {
    return new Intl.DisplayNames([document.documentElement.lang || 'en'], { type: 'language' }).of(code) ?? code
  } catch {
    return code
  }
}

/** Changes as a list: "Next date: 25 November 2026 → 25 December 2026"; "Nothing changes." when there are none. */
export function changeList(changes: readonly Change[], nothing = t('admin.preview.nothing')): HTMLElement {
  if (changes.length === 0) return h('p', { class: 'muted' }, nothing)
  return h('dl', { class: 'changes' }, changes.map((c) => [
    h('dt', null, c.field),
    h('dd', null, c.before === '' || c.after === '' ? h('span', { class: c.after === '' ? 'before' : 'after' }, c.before || c.after) : [
      h('span', { class: 'before' }, c.before), h('span', { 'aria-hidden': 'true' }, ' → '),
      h('span', { class: 'visually-hidden' }, ` ${t('admin.changes.to')} `), h('span', { class: 'after' }, c.after)]),
  ]))
}
