/**
 * One import line read and checked (src/domain/import/line.ts), the comparison with a stored row
 * that makes a second import change nothing (import/compare.ts), and the 422 text (import/errors.ts).
 * Pure: no database, no server.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import { parseImportLine } from '../../src/domain/import/line.ts'
import { differences } from '../../src/domain/import/compare.ts'
import { ImportLineError } from '../../src/domain/import/errors.ts'
import type { ImportContext, ImportRecord } from '../../src/domain/import/records.ts'

const NOW = '2026-11-22T10:00:00.000Z'
const ctx: ImportContext = {
  now: NOW, today: '2026-11-22', timeZone: 'America/New_York', currency: 'EUR',
  hashKey: (key) => createHash('sha256').update(key).digest('hex'),
}
const ADDRESS = { firstname: 'Ann', lastname: 'Lee', company: null, address1: '1 Main St', address2: null, city: 'Paris', zipcode: '75001', state_name: null, country_iso: 'FR', phone: null }

const read = (line: object, n = 1): ImportRecord => parseImportLine(JSON.stringify(line), n, ctx)

/** The 422 body a line gets, in English unless asked. */
function refusal(line: object | string, language: 'en' | 'es' = 'en'): { error: string; line: number; errors: Record<string, string[]> } {
  try {
    parseImportLine(typeof line === 'string' ? line : JSON.stringify(line), 7, ctx)
  } catch (err) {
    assert.ok(err instanceof ImportLineError, String(err))
    return err.render(language)
  }
  assert.fail('the line was accepted')
}

const sub = (extra: object = {}): object => ({ type: 'subscription', id: 42, user_id: 7, interval_length: 1, actionable_date: '2020-01-31', ...extra })

test('a subscription keeps every given id, date and counter; past dates are fine; defaults fill the rest', () => {
  const r = read(sub({
    state: 'pending_cancellation', interval_units: 'week', end_date: '2019-06-30', skip_count: 4, successive_skip_count: 2,
    payment_method_id: 3, payment_source_id: '9', currency: 'cad', processing_state: 'failed',
    shipping_address: { ...ADDRESS, country_iso: 'fr', city: ' Paris ' },
    line_items: [{ id: 90, subscribable_id: 5, quantity: 2, created_at: '2020-01-01T00:00:00Z' }],
    created_at: '2020-01-01T03:30:00.123456Z', updated_at: '2021-02-03T04:05:06.789+02:00',
  }))
  assert.equal(r.type, 'subscription')
  if (r.type !== 'subscription') return
  assert.deepEqual(r.row.subscription, {
    id: 42, user_id: 7, state: 'pending_cancellation', paused: false, interval_length: 1, interval_units: 'week',
    actionable_date: '2020-01-31', anchor_day: 31, end_date: '2019-06-30', skip_count: 4, successive_skip_count: 2,
    payment_method_id: 3, payment_source_id: 9, currency: 'CAD', processing_state: 'failed',
    shipping_address: ADDRESS, billing_address: null,
    // 03:30 UTC on Jan 1st is still Dec 31st in New York: C7 counts from the service's date.
    created_on: '2019-12-31', created_at: '2020-01-01T03:30:00.123Z', updated_at: '2021-02-03T02:05:06.789Z',
  })
  assert.deepEqual(r.row.line_items.map((li) => li.item), [
    { id: 90, subscription_id: 42, subscribable_id: 5, quantity: 2, one_time: false, created_at: '2020-01-01T00:00:00.000Z', updated_at: '2021-02-03T02:05:06.789Z' },
  ])

  const utc = parseImportLine(JSON.stringify(sub({ created_at: '2020-01-01T03:30:00.000Z' })), 1, { ...ctx, timeZone: 'UTC' })
  assert.equal(utc.type === 'subscription' && utc.row.subscription.created_on, '2020-01-01')

  const bare = read(sub())
  if (bare.type !== 'subscription') return
  const s = bare.row.subscription
  assert.deepEqual([s.state, s.paused, s.interval_units, s.skip_count, s.successive_skip_count, s.currency, s.processing_state, s.end_date],
    ['active', false, 'month', 0, 0, 'EUR', 'pending', null])
  assert.deepEqual([s.created_at, s.updated_at, s.created_on, s.payment_method_id, s.payment_source_id], [NOW, NOW, '2026-11-22', null, null])
  assert.deepEqual([...bare.given].sort(), ['actionable_date', 'id', 'interval_length', 'user_id'])
})

test("C3's invariants: no date once ended, a date while it acts, paused only when active", () => {
  assert.deepEqual(refusal(sub({ state: 'canceled' })).errors, { actionable_date: ['must be blank for a canceled or inactive subscription'] })
  assert.deepEqual(refusal(sub({ state: 'inactive' })).errors, { actionable_date: ['must be blank for a canceled or inactive subscription'] })
  assert.deepEqual(refusal(sub({ actionable_date: null })).errors, { actionable_date: ["can't be blank"] })
  assert.deepEqual(refusal(sub({ state: 'pending_cancellation', actionable_date: undefined })).errors, { actionable_date: ["can't be blank"] })
  assert.deepEqual(refusal(sub({ state: 'canceled', actionable_date: null, paused: true })).errors, { paused: ['can only be true for an active subscription'] })
  // Accepted: paused without a date (indefinitely), canceled without one.
  assert.equal(read(sub({ paused: true, actionable_date: null })).type, 'subscription')
  assert.equal(read(sub({ state: 'canceled', actionable_date: null })).type, 'subscription')
})

test("C4's rules on the fields, with C4's messages and nested keys", () => {
  assert.deepEqual(refusal(sub({
    interval_length: 121, skip_count: -1, successive_skip_count: 1.5, currency: 'XYZ', state: 'paused', end_date: '2026-02-30',
    shipping_address: { ...ADDRESS, zipcode: ' ', country_iso: 'France' },
  })).errors, {
    state: ['is not included in the list'],
    interval_length: ['must be less than or equal to 120'],
    end_date: ['is not a valid date'],
    skip_count: ['must be greater than or equal to 0'],
    successive_skip_count: ['must be an integer'],
    currency: ['is not a valid currency code'],
    'shipping_address.zipcode': ["can't be blank"],
    'shipping_address.country_iso': ['is invalid'],
  })
  assert.deepEqual(refusal(sub({ payment_method_id: 3 })).errors, { payment_source_type: ['Invalid payment method or source'] })
  assert.deepEqual(refusal(sub({ line_items: [{ id: 1, subscribable_id: 5, quantity: 10_000 }, { id: 1, subscribable_id: 5, quantity: 1, price: 3 }] })).errors, {
    'line_items.quantity': ['must be less than or equal to 9999'],
    'line_items.id': ['has already been taken'],
    'line_items.price': ['is not a field of this type of line'],
  })
})

test('times need their zone and become UTC with milliseconds; an absent or null one is the import time and is not compared', () => {
  assert.deepEqual(refusal({ type: 'user', id: 1, email: 'a@b', created_at: '2026-11-22 04:00:00' }).errors, {
    created_at: ['is not a valid time (ISO 8601 with a time zone, e.g. 2026-11-22T04:00:00.000Z)'],
  })
  for (const bad of ['2026-02-30T04:00:00Z', '2026-02-30T04:00:00.000Z', '2026-01-01T24:00:00.000Z', '2026-01-01']) {
    assert.deepEqual(refusal({ type: 'user', id: 1, email: 'a@b', updated_at: bad }).errors, {
      updated_at: ['is not a valid time (ISO 8601 with a time zone, e.g. 2026-11-22T04:00:00.000Z)'],
    }, bad)
  }
  const r = read({ type: 'user', id: 1, email: 'a@b', created_at: null, updated_at: '2026-11-22T05:00+01:00' })
  assert.deepEqual(r.row, { id: 1, email: 'a@b', external_id: null, locale: null, email_notifications: true, created_at: NOW, updated_at: '2026-11-22T04:00:00.000Z' })
  assert.deepEqual([...r.given].sort(), ['email', 'id', 'updated_at'])
})

test('an API key is stored as its hash and first 8 characters, 16+ characters, never trimmed', () => {
  const key = 'c94c63f911a50753fea895590fee5f24'
  const r = read({ type: 'api_key', user_id: 3, key })
  assert.deepEqual(r.row, { id: null, user_id: 3, key_hash: ctx.hashKey(key), prefix: 'c94c63f9', created_at: NOW, updated_at: NOW })
  assert.deepEqual(refusal({ type: 'api_key', user_id: 3, key: 'short' }).errors, { key: ['is too short (minimum is 16 characters)'] })
  assert.deepEqual(refusal({ type: 'api_key', user_id: 3, key: ` ${key}` }).errors, { key: ['is invalid'] })
  // The subject names the user, never the key.
  const body = refusal({ type: 'api_key', user_id: 3, key: 'x'.repeat(15) })
  assert.equal(body.error, 'line 7 (api_key of user 3): key is too short (minimum is 16 characters)')
})

test('lines that are not objects of a known type, and unknown fields, are refused with the line number', () => {
  assert.deepEqual(refusal('{"type": "user",'), { error: 'line 7: this line is not valid JSON', line: 7, errors: { base: ['this line is not valid JSON'] } })
  assert.deepEqual(refusal('[1, 2]').errors, { base: ['this line is not a JSON object'] })
  assert.deepEqual(refusal({ id: 1 }).errors, { type: ["can't be blank"] })
  assert.deepEqual(refusal({ type: 'order', id: 1 }).errors, { type: ['is not included in the list'] })
  assert.deepEqual(refusal({ type: 'user', id: 1, email: 'a@b', mail: 'x' }).errors, { mail: ['is not a field of this type of line'] })
  assert.deepEqual(refusal({ type: 'user', id: 0, email: 'nobody' }).errors, { id: ['must be greater than 0'], email: ['is invalid'] })
})

test('the 422 text: the line, what it is, each field and message, in the caller\'s language', () => {
  const line = sub({ interval_length: 0, shipping_address: { ...ADDRESS, zipcode: null } })
  assert.deepEqual(refusal(line), {
    error: "line 7 (subscription 42): interval_length must be greater than 0; shipping_address.zipcode can't be blank",
    line: 7,
    errors: { interval_length: ['must be greater than 0'], 'shipping_address.zipcode': ["can't be blank"] },
  })
  assert.equal(refusal(line, 'es').error, 'línea 7 (subscription 42): interval_length debe ser mayor que 0; shipping_address.zipcode no puede estar en blanco')
})

test('a stored row is compared on the fields the line gave only; addresses whatever their key order; line items item by item', () => {
  const r = read(sub({ skip_count: 2, shipping_address: ADDRESS, line_items: [{ id: 90, subscribable_id: 5, quantity: 2 }] }))
  if (r.type !== 'subscription') return assert.fail()
  const stored = { subscription: { ...r.row.subscription }, line_items: r.row.line_items.map((li) => ({ ...li.item })) }
  assert.deepEqual(differences(r, stored), [])
  // Fields the line left out (timestamps, state, counters it did not give) are not compared.
  const later = { ...stored.subscription, updated_at: '2030-01-01T00:00:00.000Z', successive_skip_count: 9, shipping_address: Object.fromEntries(Object.entries(ADDRESS).reverse()) as typeof ADDRESS }
  assert.deepEqual(differences(r, { ...stored, subscription: later }), [])
  assert.deepEqual(differences(r, { ...stored, subscription: { ...later, skip_count: 3, shipping_address: { ...ADDRESS, city: 'Lyon' } } }), ['skip_count', 'shipping_address'])
  assert.deepEqual(differences(r, { ...stored, line_items: [{ ...stored.line_items[0]!, quantity: 3 }] }), ['line_items'])
  assert.deepEqual(differences(r, { ...stored, line_items: [...stored.line_items, { ...stored.line_items[0]!, id: 91 }] }), ['line_items'])
  // An item's times count when the item gave them.
  const timed = read(sub({ line_items: [{ id: 90, subscribable_id: 5, quantity: 2, updated_at: '2026-01-01T00:00:00Z' }] }))
  if (timed.type !== 'subscription') return assert.fail()
  assert.deepEqual(differences(timed, { ...stored, line_items: [{ ...stored.line_items[0]!, updated_at: '2026-01-02T00:00:00.000Z' }] }), ['line_items'])

  const key = read({ type: 'api_key', user_id: 3, key: 'k'.repeat(20) })
  if (key.type !== 'api_key') return assert.fail()
  assert.deepEqual(differences(key, { ...key.row, id: 12, created_at: '2001-01-01T00:00:00.000Z' }), [])
  assert.deepEqual(differences(key, { ...key.row, user_id: 4 }), ['user_id'])
})

test('C16: a subscribable line carries prices and a discount, read as the admin API reads them', () => {
  const r = read({ type: 'subscribable', id: 5, sku: 'COF', name: 'Coffee', prices: { usd: '12.5', JPY: '1250', EUR: null }, discount_percent: '10.00' })
  assert.equal(r.type, 'subscribable')
  if (r.type !== 'subscribable') return
  assert.deepEqual(r.row.prices, { JPY: '1250', USD: '12.50' })
  assert.equal(r.row.discount_percent, '10')
  const bare = read({ type: 'subscribable', id: 6, sku: 'TEA', name: 'Tea' })
  assert.deepEqual(bare.type === 'subscribable' && [bare.row.prices, bare.row.discount_percent, bare.given.has('prices')], [{}, '0', false])
  assert.deepEqual(refusal({ type: 'subscribable', id: 5, sku: 'COF', name: 'Coffee', prices: { USD: 12.5, XYZ: '1' }, discount_percent: '101' }).errors, {
    'prices.USD': ['is not a valid amount'], prices: ['has an unknown currency: XYZ'], discount_percent: ['must be between 0 and 100'],
  })
  // The same prices written another way are the same; another amount differs.
  const stored = { id: 5, sku: 'COF', name: 'Coffee', subscribable: true, prices: { JPY: '1250', USD: '12.50' }, discount_percent: '10', created_at: NOW, updated_at: NOW }
  assert.deepEqual(differences(r, stored), [])
  assert.deepEqual(differences(r, { ...stored, prices: { USD: '12.50' }, discount_percent: '5' }), ['prices', 'discount_percent'])
})
