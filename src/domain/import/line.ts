import { acceptableText, isRecord } from '../field-errors.ts'
import { dateIn, dayOf, isIntervalUnit, type IntervalUnit } from '../dates.ts'
import { currencyCode } from '../currency.ts'
import { readDiscount, readPrices } from '../catalog-input.ts'
import { formatAmount, formatPercent } from '../money.ts'
import { readAddress } from '../address.ts'
import { MAX_INTERVAL, MAX_QUANTITY } from '../subscription-input.ts'
import { STATES, type Address, type ProcessingState, type State, type Subscription } from '../types.ts'
import { ImportLineError, lineError } from './errors.ts'
import { LineFields } from './fields.ts'
import { LANGUAGES } from '../messages.ts'
import { IMPORT_TYPES, type ImportContext, type ImportedLineItem, type ImportRecord, type ImportType } from './records.ts'

/**
 * One line of an import file (docs/import.md) read and checked with C4's rules where they apply,
 * except that dates may be in the past (an import brings history). References to other rows
 * (users, payment methods, catalog items) are the store's to check: this file has no I/O.
 */

const TIMES = ['created_at', 'updated_at'] as const
const FIELDS: Readonly<Record<ImportType, readonly string[]>> = {
  user: ['type', 'id', 'email', 'external_id', 'locale', 'email_notifications', ...TIMES],
  api_key: ['type', 'id', 'user_id', 'key', ...TIMES],
  payment_method: ['type', 'id', 'name', 'active', ...TIMES],
  payment_source: ['type', 'id', 'user_id', 'payment_method_id', 'kind', 'brand', 'last_digits', 'month', 'year', 'gateway_reference', ...TIMES],
  subscribable: ['type', 'id', 'sku', 'name', 'subscribable', 'prices', 'discount_percent', ...TIMES],
  subscription: [
    'type', 'id', 'user_id', 'state', 'paused', 'interval_length', 'interval_units', 'actionable_date', 'end_date',
    'skip_count', 'successive_skip_count', 'payment_method_id', 'payment_source_id', 'currency', 'processing_state',
    'shipping_address', 'billing_address', 'line_items', ...TIMES,
  ],
}
const LINE_ITEM_FIELDS = ['id', 'subscribable_id', 'quantity', ...TIMES]
const PROCESSING_STATES: readonly ProcessingState[] = ['pending', 'success', 'failed']
/** As the admin API's `users` (C11): something, an @, something. */
const EMAIL = /^[^\s@]+@[^\s@]+$/
/** C11's key import: at least 16 characters. */
export const MIN_IMPORTED_KEY = 16

export function parseImportLine(text: string, line: number, ctx: ImportContext): ImportRecord {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch {
    throw lineError(line, undefined, 'base', 'not_json')
  }
  if (!isRecord(raw)) throw lineError(line, undefined, 'base', 'not_object')
  const type = raw['type']
  if (typeof type !== 'string' || !(IMPORT_TYPES as readonly string[]).includes(type)) {
    const f = new LineFields(raw)
    f.add('type', type === undefined || type === null || type === '' ? 'blank' : 'inclusion')
    throw new ImportLineError(line, undefined, f.errors)
  }
  const f = new LineFields(raw)
  f.refuseUnknown(FIELDS[type as ImportType])
  const record = read(type as ImportType, f, ctx)
  if (!f.errors.empty || f.own.length > 0 || record === undefined) throw new ImportLineError(line, subjectOf(type, raw['id'], raw['user_id']), f.errors, f.own)
  return record
}

/**
 * What a line is, for the error's text: `subscription 4`; an API key without an id by its user
 * (`api_key of user 7`), never by the key. Ids as the line wrote them, when they are plain ones.
 */
export function subjectOf(type: string, id: unknown, userId?: unknown): string {
  const plain = (v: unknown): boolean => (typeof v === 'number' && Number.isSafeInteger(v)) || (typeof v === 'string' && /^\d{1,15}$/.test(v))
  if (plain(id)) return `${type} ${String(id)}`
  return type === 'api_key' && plain(userId) ? `api_key of user ${String(userId)}` : type
}

function read(type: ImportType, f: LineFields, ctx: ImportContext): ImportRecord | undefined {
  const given = f.given // the times first: a null one is taken out of it
  const created_at = f.time('created_at', ctx.now)
  const updated_at = f.time('updated_at', created_at ?? ctx.now)
  if (created_at === undefined || updated_at === undefined) return undefined
  const times = { created_at, updated_at }
  switch (type) {
    case 'user': {
      const id = f.id('id')
      let email = f.string('email')
      if (email !== undefined && !EMAIL.test(email)) email = f.add('email', 'invalid')
      const external_id = f.optionalString('external_id')
      // C17: absent or null follows the service's default language.
      const locale = f.raw['locale'] === undefined || f.raw['locale'] === null ? null : f.oneOf('locale', LANGUAGES, 'en')
      const email_notifications = f.boolean('email_notifications', true)
      if (id === undefined || email === undefined || external_id === undefined || locale === undefined || email_notifications === undefined) return undefined
      return { type, row: { id, email, external_id, locale, email_notifications, ...times }, given }
    }
    case 'api_key': {
      const id = f.optionalId('id')
      const user_id = f.id('user_id')
      const key = readKey(f)
      if (id === undefined || user_id === undefined || key === undefined) return undefined
      return { type, row: { id, user_id, key_hash: ctx.hashKey(key), prefix: key.slice(0, 8), ...times }, given }
    }
    case 'payment_method': {
      const id = f.id('id')
      const name = f.string('name')
      const active = f.boolean('active', true)
      if (id === undefined || name === undefined || active === undefined) return undefined
      return { type, row: { id, name, active, ...times }, given }
    }
    case 'payment_source': {
      const row = {
        id: f.id('id'),
        user_id: f.id('user_id'),
        payment_method_id: f.id('payment_method_id'),
        kind: f.optionalString('kind'),
        brand: f.optionalString('brand'),
        last_digits: f.optionalString('last_digits', 4),
        month: f.optionalCount('month'),
        year: f.optionalCount('year'),
        gateway_reference: f.optionalString('gateway_reference'),
        ...times,
      }
      if (Object.values(row).some((v) => v === undefined)) return undefined
      return { type, row: row as { [K in keyof typeof row]: Exclude<(typeof row)[K], undefined> }, given }
    }
    case 'subscribable': {
      const id = f.id('id')
      const sku = f.string('sku')
      const name = f.string('name')
      const subscribable = f.boolean('subscribable', true)
      // C16, as the admin API reads them (a null amount or object brings no price).
      const prices = new Map([...readPrices(f.raw['prices'], {}, f.errors)].filter((e): e is [string, bigint] => e[1] !== null))
      const discount = readDiscount(f.raw['discount_percent'], 0, f.errors)
      if (id === undefined || sku === undefined || name === undefined || subscribable === undefined || !f.errors.empty) return undefined
      const money = {
        prices: Object.fromEntries([...prices].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, minor]) => [code, formatAmount(minor, code)])),
        discount_percent: formatPercent(discount),
      }
      return { type, row: { id, sku, name, subscribable, ...money, ...times }, given }
    }
    case 'subscription':
      return readSubscription(f, ctx, given, times)
  }
}

function readKey(f: LineFields): string | undefined {
  const key = f.raw['key']
  if (key === undefined || key === null || key === '') return f.add('key', 'blank')
  // Never trimmed: a key is exactly what clients send.
  if (typeof key !== 'string' || /\s/.test(key)) return f.add('key', 'invalid')
  if (key.length < MIN_IMPORTED_KEY) return f.add('key', 'too_short', MIN_IMPORTED_KEY)
  if (key.length > 255) return f.add('key', 'too_long', 255)
  return acceptableText(key, 'key', f.errors) ? key : undefined
}

function readSubscription(f: LineFields, ctx: ImportContext, given: Set<string>, times: { created_at: string; updated_at: string }): ImportRecord | undefined {
  const id = f.id('id')
  const user_id = f.id('user_id')
  const state = f.oneOf<State>('state', STATES, 'active')
  let paused = f.boolean('paused', false)
  if (paused === true && state !== undefined && state !== 'active') paused = f.addOwn('paused', 'paused_only_active')
  const units = readUnits(f)
  const length = readLength(f, units)
  let actionable_date = f.date('actionable_date')
  const ended = state === 'canceled' || state === 'inactive'
  // C3: no date when it will not act; a date whenever it will (a paused one may wait without one).
  if (ended && actionable_date) actionable_date = f.addOwn('actionable_date', 'blank_when_ended')
  else if (!ended && state !== undefined && paused === false && actionable_date === null) actionable_date = f.add('actionable_date', 'blank')
  const end_date = f.date('end_date')
  const skip_count = f.count('skip_count')
  const successive_skip_count = f.count('successive_skip_count')
  const payment = readPayment(f)
  const currency = readCurrency(f, ctx.currency)
  const processing_state = f.oneOf<ProcessingState>('processing_state', PROCESSING_STATES, 'pending')
  const shipping_address = readAddress(f.raw['shipping_address'], 'shipping_address', null, f.errors)
  const billing_address = readAddress(f.raw['billing_address'], 'billing_address', null, f.errors)
  const line_items = id === undefined ? undefined : readLineItems(f, id, times)
  if (
    id === undefined || user_id === undefined || state === undefined || paused === undefined || units === undefined ||
    length === undefined || actionable_date === undefined || end_date === undefined || skip_count === undefined ||
    successive_skip_count === undefined || payment === undefined || currency === undefined || processing_state === undefined ||
    line_items === undefined
  ) return undefined
  const subscription: Subscription = {
    id, user_id, state, paused,
    interval_length: length, interval_units: units, actionable_date,
    // The day a monthly plan comes back to is its date's (Solidus keeps no anchor of its own).
    anchor_day: actionable_date === null ? null : dayOf(actionable_date),
    end_date, skip_count, successive_skip_count,
    payment_method_id: payment.method, payment_source_id: payment.source,
    currency, processing_state,
    shipping_address: (shipping_address ?? null) as Address | null,
    billing_address: (billing_address ?? null) as Address | null,
    // C7 counts an interval change from the creation date, in the service's zone.
    created_on: !given.has('created_at') ? ctx.today : ctx.timeZone === 'UTC' ? times.created_at.slice(0, 10) : dateIn(ctx.timeZone, new Date(times.created_at)),
    ...times,
  }
  return { type: 'subscription', row: { subscription, line_items }, given }
}

function readUnits(f: LineFields): IntervalUnit | undefined {
  const v = f.raw['interval_units']
  if (v === undefined) return 'month'
  return isIntervalUnit(v) ? v : f.add('interval_units', 'inclusion')
}

/** C4: a positive integer, at most about ten years of the unit. */
function readLength(f: LineFields, units: IntervalUnit | undefined): number | undefined {
  const n = f.id('interval_length')
  if (n !== undefined && units !== undefined && n > MAX_INTERVAL[units]) return f.add('interval_length', 'less_than_or_equal_to', MAX_INTERVAL[units])
  return n
}

/** C6: both ids or neither; whether they hold together is the store's to answer. */
function readPayment(f: LineFields): { method: number | null; source: number | null } | undefined {
  const has = (field: string): boolean => f.raw[field] !== undefined && f.raw[field] !== null
  if (!has('payment_method_id') && !has('payment_source_id')) return { method: null, source: null }
  const method = has('payment_method_id') ? f.optionalId('payment_method_id') : null
  const source = has('payment_source_id') ? f.optionalId('payment_source_id') : null
  if (method === undefined || source === undefined) return undefined
  if (method === null || source === null) return f.add('payment_source_type', 'invalid_payment')
  return { method, source }
}

function readCurrency(f: LineFields, fallback: string): string | undefined {
  const v = f.raw['currency']
  if (v === undefined) return fallback
  return currencyCode(v) ?? f.add('currency', v === null || v === '' ? 'blank' : 'invalid_currency')
}

/** The line items inside a subscription's line, keyed in errors as C4 does (`line_items.quantity`). */
function readLineItems(f: LineFields, subscriptionId: number, times: { created_at: string; updated_at: string }): ImportedLineItem[] | undefined {
  const raw = f.raw['line_items']
  if (raw === undefined || raw === null) return []
  if (!Array.isArray(raw)) return f.add('line_items', 'invalid')
  const out: ImportedLineItem[] = []
  const ids = new Set<number>()
  let failed = false
  for (const entry of raw) {
    if (!isRecord(entry)) {
      f.add('line_items', 'invalid')
      failed = true
      continue
    }
    const li = new LineFields(entry, 'line_items.')
    li.refuseUnknown(LINE_ITEM_FIELDS)
    const id = li.id('id')
    if (id !== undefined && ids.has(id)) li.add('id', 'taken')
    if (id !== undefined) ids.add(id)
    const subscribable_id = li.id('subscribable_id')
    const quantity = li.id('quantity')
    if (quantity !== undefined && quantity > MAX_QUANTITY) li.add('quantity', 'less_than_or_equal_to', MAX_QUANTITY)
    const created_at = li.time('created_at', times.created_at)
    const updated_at = li.time('updated_at', times.updated_at)
    f.errors.merge(li.errors)
    f.own.push(...li.own)
    if (id === undefined || subscribable_id === undefined || quantity === undefined || created_at === undefined || updated_at === undefined || !li.errors.empty) {
      failed = true
      continue
    }
    out.push({ item: { id, subscription_id: subscriptionId, subscribable_id, quantity, one_time: false, created_at, updated_at }, given: li.given })
  }
  return failed ? undefined : out
}
