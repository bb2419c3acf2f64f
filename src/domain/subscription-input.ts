import { addInterval, dayOf, isDate, isIntervalUnit, type IntervalUnit } from './dates.ts'
import { currencyCode } from './currency.ts'
import { readAddress } from './address.ts'
import { FieldErrors, ValidationFailed, isRecord, isTruthyFlag, readBoundedInteger, readId, readInteger, readStoredCount } from './field-errors.ts'
import type { Address, Subscription, SubscriptionPatch } from './types.ts'

/** C4: the longest interval per unit, about ten years whatever the unit. */
export const MAX_INTERVAL: Readonly<Record<IntervalUnit, number>> = { day: 3650, week: 520, month: 120, year: 10 }
export const MAX_QUANTITY = 9999

/** What validation needs to know about the world; the store answers, the domain stays pure. */
export interface Lookups {
  /** Method exists and is active; source exists, belongs to the user and to that method (C6). */
  paymentIsValid(paymentMethodId: number, paymentSourceId: number, userId: number): boolean
  /** The catalog item exists and can be subscribed to. */
  isSubscribable(subscribableId: number): boolean
}

export interface InputContext {
  readonly today: string
  readonly userId: number
  readonly lookups: Lookups
  /**
   * The shop writes (C13, the admin API): any `actionable_date`, past ones included (an import
   * keeps its dates), and `skip_count` / `successive_skip_count`, which a customer never sets (C1).
   */
  readonly shop?: boolean
}

export interface NewLineItem {
  readonly subscribable_id: number
  readonly quantity: number
  /** C17: delivered once; false when not given. */
  readonly one_time?: boolean
}

export interface NewSubscription {
  readonly interval_length: number
  readonly interval_units: IntervalUnit
  readonly actionable_date: string
  readonly anchor_day: number
  readonly end_date: string | null
  readonly currency: string
  readonly payment_method_id: number | null
  readonly payment_source_id: number | null
  readonly shipping_address: Address | null
  readonly billing_address: Address | null
  readonly line_items: readonly NewLineItem[]
  /** Set by the shop only; 0 when absent. */
  readonly skip_count?: number
  readonly successive_skip_count?: number
}

const given = (v: unknown): boolean => v !== undefined && v !== null && v !== ''

function readUnits(raw: unknown, errors: FieldErrors): IntervalUnit | undefined {
  if (isIntervalUnit(raw)) return raw
  return errors.add('interval_units', 'inclusion')
}

function readLength(raw: unknown, units: IntervalUnit | undefined, errors: FieldErrors): number | undefined {
  return readBoundedInteger(raw, 'interval_length', units ? MAX_INTERVAL[units] : undefined, errors)
}

function readActionableDate(raw: unknown, ctx: InputContext, errors: FieldErrors): string | undefined {
  if (!isDate(raw)) return errors.add('actionable_date', 'invalid_date')
  if (raw < ctx.today && ctx.shop !== true) return errors.add('actionable_date', 'today_or_later')
  return raw
}

/** A skip counter the shop sets: an integer, 0 or more. Absent (or blank) answers undefined. */
function readSkipCounter(attrs: Record<string, unknown>, field: 'skip_count' | 'successive_skip_count', errors: FieldErrors): number | undefined {
  return given(attrs[field]) ? readStoredCount(attrs[field], field, errors) : undefined
}

/** The shop's counters (C13); nothing for a customer, whose body may say what it likes (C1). */
function readSkipCounters(attrs: Record<string, unknown>, ctx: InputContext, errors: FieldErrors): { skip_count?: number; successive_skip_count?: number } {
  if (ctx.shop !== true) return {}
  const out: { skip_count?: number; successive_skip_count?: number } = {}
  const total = readSkipCounter(attrs, 'skip_count', errors)
  const successive = readSkipCounter(attrs, 'successive_skip_count', errors)
  if (total !== undefined) out.skip_count = total
  if (successive !== undefined) out.successive_skip_count = successive
  return out
}

function readEndDate(raw: unknown, today: string, errors: FieldErrors): string | null | undefined {
  if (!given(raw)) return null
  if (!isDate(raw)) return errors.add('end_date', 'invalid_date')
  if (raw <= today) return errors.add('end_date', 'after_today')
  return raw
}

/**
 * C6 payment rules. `undefined`: nothing said; `null`: both explicitly cleared; otherwise both
 * ids. Every failure is the one `payment_source_type` message. `hasPayment`: the subscription
 * already holds a pair, so one blank id alone would clear half of it.
 */
function readPayment(attrs: Record<string, unknown>, ctx: InputContext, errors: FieldErrors, hasPayment: boolean): { method: number; source: number } | null | undefined {
  const methodRaw = attrs['payment_method_id']
  const sourceRaw = attrs['payment_source_id']
  if (methodRaw === undefined && sourceRaw === undefined) return undefined
  if (!given(methodRaw) && !given(sourceRaw)) {
    if (methodRaw !== undefined && sourceRaw !== undefined) return null
    // One blank id (an empty form field) with nothing stored leaves both absent, as Rails' nil would.
    return hasPayment ? errors.add('payment_source_type', 'invalid_payment') : undefined
  }
  const method = readId(methodRaw)
  const source = readId(sourceRaw)
  if (method === undefined || source === undefined || !ctx.lookups.paymentIsValid(method, source, ctx.userId)) {
    return errors.add('payment_source_type', 'invalid_payment')
  }
  return { method, source }
}

/** One entry of `line_items_attributes`, or of `subscription_line_item` on the line item routes. */
export function readLineItemFields(
  attrs: Record<string, unknown>,
  prefix: string,
  lookups: Lookups,
  errors: FieldErrors,
  required: { quantity: boolean; subscribable: boolean },
): { quantity?: number; subscribable_id?: number } {
  const out: { quantity?: number; subscribable_id?: number } = {}
  if (required.quantity || attrs['quantity'] !== undefined) {
    const q = readBoundedInteger(attrs['quantity'], `${prefix}quantity`, MAX_QUANTITY, errors)
    if (q !== undefined) out.quantity = q
  }
  if (required.subscribable || attrs['subscribable_id'] !== undefined) {
    const id = readId(attrs['subscribable_id'])
    if (id === undefined || !lookups.isSubscribable(id)) errors.add(`${prefix}subscribable`, 'cannot_subscribe')
    else out.subscribable_id = id
  }
  return out
}

/**
 * C17's `one_time` of a line item being added (false when not given): a boolean, or its form
 * spellings. Only an add reads it; an update of an existing item ignores it.
 */
export function readOneTime(attrs: Record<string, unknown>, prefix: string, errors: FieldErrors): boolean {
  const v = attrs['one_time']
  if (v === undefined || v === null || v === '' || v === false || v === 'false' || v === '0' || v === 0) return false
  if (v === true || v === 'true' || v === '1' || v === 1) return true
  errors.add(`${prefix}one_time`, 'inclusion')
  return false
}

/** `line_items_attributes`: an array, or a Rails-style object of objects (`{"0": {...}}`). */
function entries(raw: unknown, errors: FieldErrors): Record<string, unknown>[] {
  if (raw === undefined || raw === null || raw === '') return []
  const list = Array.isArray(raw) ? raw : isRecord(raw) ? Object.values(raw) : undefined
  if (!list) {
    errors.add('line_items', 'invalid')
    return []
  }
  const out: Record<string, unknown>[] = []
  for (const entry of list) {
    if (isRecord(entry)) out.push(entry)
    else errors.add('line_items', 'invalid')
  }
  return out
}

export function validateCreate(attrs: Record<string, unknown>, ctx: InputContext, defaultCurrency: string): NewSubscription {
  const errors = new FieldErrors()
  const units = attrs['interval_units'] === undefined || attrs['interval_units'] === null ? 'month' : readUnits(attrs['interval_units'], errors)
  const length = readLength(attrs['interval_length'], units, errors)
  const explicitDate = given(attrs['actionable_date']) ? readActionableDate(attrs['actionable_date'], ctx, errors) : undefined
  const endDate = readEndDate(attrs['end_date'], ctx.today, errors)
  const counters = readSkipCounters(attrs, ctx, errors)
  let currency = defaultCurrency
  if (given(attrs['currency'])) currency = currencyCode(attrs['currency']) ?? errors.add('currency', 'invalid_currency') ?? defaultCurrency
  const payment = readPayment(attrs, ctx, errors, false)
  const shipping = readAddress(attrs['shipping_address_attributes'], 'shipping_address', null, errors)
  const billing = readAddress(attrs['billing_address_attributes'], 'billing_address', null, errors)
  const lineItems: NewLineItem[] = []
  for (const entry of entries(attrs['line_items_attributes'], errors)) {
    if (!given(entry['quantity'])) continue // C6: ignored (Rails reject_if quantity.blank?: an empty form field too)
    const li = readLineItemFields(entry, 'line_items.', ctx.lookups, errors, { quantity: true, subscribable: true })
    const oneTime = readOneTime(entry, 'line_items.', errors)
    if (li.quantity !== undefined && li.subscribable_id !== undefined) lineItems.push({ quantity: li.quantity, subscribable_id: li.subscribable_id, one_time: oneTime })
  }
  if (!errors.empty || units === undefined || length === undefined) throw new ValidationFailed(errors)
  const actionable = explicitDate ?? addInterval(ctx.today, length, units)
  return {
    interval_length: length,
    interval_units: units,
    actionable_date: actionable,
    // The default date counts from today, so today's day is the anchor (Jan 31 → Feb 28 → Mar 31).
    anchor_day: dayOf(explicitDate ?? ctx.today),
    end_date: endDate ?? null,
    currency,
    payment_method_id: payment ? payment.method : null,
    payment_source_id: payment ? payment.source : null,
    shipping_address: shipping ?? null,
    billing_address: billing ?? null,
    line_items: lineItems,
    ...counters,
  }
}

export type LineItemChange =
  | { readonly op: 'update'; readonly id: number; readonly quantity?: number; readonly subscribable_id?: number }
  | { readonly op: 'destroy'; readonly id: number }
  | { readonly op: 'add'; readonly quantity: number; readonly subscribable_id: number; readonly one_time: boolean }

export type ChangeKind = 'frequency' | 'payment' | 'shipping' | 'billing' | 'other'

export interface SubscriptionUpdate {
  readonly patch: SubscriptionPatch
  readonly changes: ReadonlySet<ChangeKind>
  readonly lineItems: readonly LineItemChange[]
}

/**
 * C7. `lastDueDate` is the due date of the newest installment (null when none): with the
 * creation date it is the base an interval change counts from.
 */
export function validateUpdate(sub: Subscription, attrs: Record<string, unknown>, ctx: InputContext, lastDueDate: string | null): SubscriptionUpdate {
  const errors = new FieldErrors()
  const patch: { -readonly [K in keyof SubscriptionPatch]: SubscriptionPatch[K] } = {}
  const changes = new Set<ChangeKind>()

  const units = attrs['interval_units'] === undefined ? sub.interval_units : readUnits(attrs['interval_units'], errors)
  const length = attrs['interval_length'] === undefined ? sub.interval_length : readLength(attrs['interval_length'], units, errors)
  if (attrs['interval_units'] !== undefined && attrs['interval_length'] === undefined && units && sub.interval_length > MAX_INTERVAL[units]) {
    errors.add('interval_length', 'less_than_or_equal_to', MAX_INTERVAL[units])
  }
  const ended = sub.state === 'canceled' || sub.state === 'inactive'
  // A subscription that will not act has no date (C3): setting one is refused, not ignored, so a
  // client is told that nothing changed (docs/decisions.md, "Dates"); activate gives it one.
  const explicitDate = !given(attrs['actionable_date'])
    ? undefined
    : ended ? errors.add('actionable_date', 'cannot_date_ended') : readActionableDate(attrs['actionable_date'], ctx, errors)
  const endDate = attrs['end_date'] === undefined ? undefined : readEndDate(attrs['end_date'], ctx.today, errors)
  const payment = readPayment(attrs, ctx, errors, sub.payment_method_id !== null || sub.payment_source_id !== null)
  const shipping = readAddress(attrs['shipping_address_attributes'], 'shipping_address', sub.shipping_address, errors)
  const billing = readAddress(attrs['billing_address_attributes'], 'billing_address', sub.billing_address, errors)
  const counters = readSkipCounters(attrs, ctx, errors)

  const lineItems: LineItemChange[] = []
  for (const entry of entries(attrs['line_items_attributes'], errors)) {
    const hasId = entry['id'] !== undefined && entry['id'] !== null && entry['id'] !== ''
    if (hasId) {
      const id = readId(entry['id']) ?? 0 // 0 finds nothing: the handler answers 404
      if (isTruthyFlag(entry['_destroy'])) {
        lineItems.push({ op: 'destroy', id })
        continue
      }
      // A blank quantity is no quantity, as for new entries (a form's empty field).
      const { quantity, ...rest } = entry
      const fields = readLineItemFields(given(quantity) ? entry : rest, 'line_items.', ctx.lookups, errors, { quantity: false, subscribable: false })
      lineItems.push({ op: 'update', id, ...fields })
    } else if (given(entry['quantity'])) {
      const li = readLineItemFields(entry, 'line_items.', ctx.lookups, errors, { quantity: true, subscribable: true })
      const oneTime = readOneTime(entry, 'line_items.', errors)
      if (li.quantity !== undefined && li.subscribable_id !== undefined) lineItems.push({ op: 'add', quantity: li.quantity, subscribable_id: li.subscribable_id, one_time: oneTime })
    }
  }
  if (!errors.empty || units === undefined || length === undefined) throw new ValidationFailed(errors)

  const acting = (sub.state === 'active' || sub.state === 'pending_cancellation') && !sub.paused
  if (units !== sub.interval_units || length !== sub.interval_length) {
    patch.interval_units = units
    patch.interval_length = length
    changes.add('frequency')
    if (explicitDate === undefined && acting) {
      // C7: count the new interval from the last delivery (or the start), never into the past.
      const base = lastDueDate ?? sub.created_on
      const next = addInterval(base, length, units)
      patch.actionable_date = next < ctx.today ? ctx.today : next
      patch.anchor_day = next < ctx.today ? dayOf(ctx.today) : dayOf(base)
    }
  }
  if (explicitDate !== undefined && explicitDate !== sub.actionable_date) {
    patch.actionable_date = explicitDate
    patch.anchor_day = dayOf(explicitDate)
    changes.add('other')
  }
  if (endDate !== undefined && endDate !== sub.end_date) {
    patch.end_date = endDate
    changes.add('other')
  }
  if (counters.skip_count !== undefined && counters.skip_count !== sub.skip_count) {
    patch.skip_count = counters.skip_count
    changes.add('other')
  }
  if (counters.successive_skip_count !== undefined && counters.successive_skip_count !== sub.successive_skip_count) {
    patch.successive_skip_count = counters.successive_skip_count
    changes.add('other')
  }
  if (payment !== undefined) {
    const method = payment?.method ?? null
    const source = payment?.source ?? null
    if (method !== sub.payment_method_id || source !== sub.payment_source_id) {
      patch.payment_method_id = method
      patch.payment_source_id = source
      changes.add('payment')
    }
  }
  if (shipping !== undefined && JSON.stringify(shipping) !== JSON.stringify(sub.shipping_address)) {
    patch.shipping_address = shipping
    changes.add('shipping')
  }
  if (billing !== undefined && JSON.stringify(billing) !== JSON.stringify(sub.billing_address)) {
    patch.billing_address = billing
    changes.add('billing')
  }
  return { patch, changes, lineItems }
}
