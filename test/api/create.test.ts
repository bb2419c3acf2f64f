/**
 * C6 (create) and every C4 row a create can break. Every refusal is checked against the whole
 * 422 body and against the database (a 422 creates nothing), in JSON and in form encoding.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  seedPayment, seedSubscribable, seedUser, snapshot, startTestServer, type SeededUser, type TestServer,
} from '../helpers/server.ts'
import { ENCODINGS, encoded, type Encoding } from '../helpers/encoding.ts'

const TODAY = '2026-03-15'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const INVALID_PAYMENT = { payment_source_type: ['Invalid payment method or source'] }

let server: TestServer
let alice: SeededUser

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: TODAY })
  alice = await seedUser(server.store)
})
after(() => server.close())

const create = (attrs: Record<string, unknown>, encoding: Encoding = 'json', key = alice.key) =>
  server.request('POST', '/api/v1/subscriptions', { key, ...encoded(encoding, { subscription: attrs }) })

/** A create that must be refused with exactly `errors`, leaving the database as it was. */
async function refused(attrs: Record<string, unknown>, errors: Record<string, string[]>, encoding: Encoding = 'json'): Promise<void> {
  const before = await snapshot(server.store)
  const res = await create(attrs, encoding)
  assert.equal(res.status, 422, `${encoding} ${JSON.stringify(attrs)}: ${res.text}`)
  assert.deepEqual(res.body, errors, `${encoding} ${JSON.stringify(attrs)}`)
  assert.equal(await snapshot(server.store), before, `${encoding} ${JSON.stringify(attrs)} changed the database`)
}

function address(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    firstname: 'Ada', lastname: 'Lovelace', company: 'Analytical Engines', address1: '12 St James Sq', address2: 'Flat 2',
    city: 'London', zipcode: 'SW1Y 4JH', state_name: 'Greater London', country_iso: 'GB', phone: '+44 20 7946 0000', ...overrides,
  }
}

describe('a create that succeeds', () => {
  for (const encoding of ENCODINGS) {
    test(`interval_length alone (${encoding}): defaults month, today + one interval, USD, active, counters 0`, async () => {
      const res = await create({ interval_length: 1 }, encoding)
      assert.equal(res.status, 200)
      assert.match(res.body.created_at, ISO_TIME)
      assert.equal(res.body.updated_at, res.body.created_at)
      assert.deepEqual(res.body, {
        id: res.body.id, user_id: alice.id, state: 'active', paused: false, interval_length: 1, interval_units: 'month',
        actionable_date: '2026-04-15', end_date: null, skip_count: 0, successive_skip_count: 0,
        payment_method_id: null, payment_source_id: null, currency: 'USD', subtotal: '0.00', discount_total: '0.00', total: '0.00', processing_state: 'pending',
        shipping_address: null, billing_address: null, line_items: [], created_at: res.body.created_at, updated_at: res.body.updated_at,
      })
      const shown = await server.request('GET', `/api/v1/subscriptions/${res.body.id}`, { key: alice.key })
      assert.deepEqual(shown.body, res.body)
    })

    test(`every input at once (${encoding}) is stored and shown`, async () => {
      const pay = await seedPayment(server.store, alice.id)
      const coffee = await seedSubscribable(server.store, { prices: { EUR: '12.50', USD: '14.00' }, discount: 1000 })
      const tea = await seedSubscribable(server.store, { prices: { EUR: '0.10' } })
      const res = await create({
        interval_length: '2', interval_units: 'week', actionable_date: '2026-03-20', end_date: '2026-12-31', currency: 'EUR',
        payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
        shipping_address_attributes: address(), billing_address_attributes: address({ firstname: 'Charles', country_iso: 'fr' }),
        line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }, { subscribable_id: tea, quantity: '9999' }],
      }, encoding)
      assert.equal(res.status, 200, res.text)
      const [one, two] = res.body.line_items
      for (const li of res.body.line_items) {
        assert.match(li.created_at, ISO_TIME)
        assert.equal(li.subscription_id, res.body.id)
      }
      assert.deepEqual(res.body, {
        id: res.body.id, user_id: alice.id, state: 'active', paused: false, interval_length: 2, interval_units: 'week',
        actionable_date: '2026-03-20', end_date: '2026-12-31', skip_count: 0, successive_skip_count: 0,
        // C16, in EUR: 2 × 12.50 less 10 % = 22.50; 9999 × 0.10 = 999.90.
        payment_method_id: pay.methodId, payment_source_id: pay.sourceId, currency: 'EUR',
        subtotal: '1024.90', discount_total: '2.50', total: '1022.40', processing_state: 'pending',
        shipping_address: address(), billing_address: address({ firstname: 'Charles', country_iso: 'FR' }),
        line_items: [
          { id: one.id, subscription_id: res.body.id, subscribable_id: coffee, quantity: 2, one_time: false, price: '12.50', discount_percent: '10', total: '22.50', created_at: one.created_at, updated_at: one.updated_at },
          { id: two.id, subscription_id: res.body.id, subscribable_id: tea, quantity: 9999, one_time: false, price: '0.10', discount_percent: '0', total: '999.90', created_at: two.created_at, updated_at: two.updated_at },
        ],
        created_at: res.body.created_at, updated_at: res.body.updated_at,
      })
      const stored = await server.store.subscriptions.find(res.body.id)
      assert.equal(stored?.anchor_day, 20)
      assert.deepEqual(stored?.shipping_address, address())
      assert.deepEqual((await server.store.subscriptions.lineItems(res.body.id)).map((li) => [li.subscribable_id, li.quantity]), [[coffee, 2], [tea, 9999]])
    })
  }

  test('actionable_date may be today; the default counts from today in the unit given', async () => {
    assert.equal((await create({ interval_length: 1, actionable_date: TODAY })).body.actionable_date, TODAY)
    assert.equal((await create({ interval_length: 10, interval_units: 'day' })).body.actionable_date, '2026-03-25')
    assert.equal((await create({ interval_length: 1, interval_units: 'year' })).body.actionable_date, '2027-03-15')
  })

  test('the upper bounds of interval_length are accepted', async () => {
    for (const [units, max] of [['day', 3650], ['week', 520], ['month', 120], ['year', 10]] as const) {
      const res = await create({ interval_length: max, interval_units: units })
      assert.equal(res.status, 200, units)
      assert.equal(res.body.interval_length, max)
    }
  })

  test('line_items_attributes as a Rails object of objects; entries without quantity are ignored', async () => {
    const coffee = await seedSubscribable(server.store)
    const tea = await seedSubscribable(server.store)
    const res = await create({ interval_length: 1, line_items_attributes: { 0: { subscribable_id: coffee, quantity: 3 }, 1: { subscribable_id: tea }, 2: { subscribable_id: 999_999 }, 3: { subscribable_id: tea, quantity: '' }, 4: { quantity: null } } })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[coffee, 3]])
    const form = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, form: `subscription[interval_length]=1&subscription[line_items_attributes][0][subscribable_id]=${tea}&subscription[line_items_attributes][0][quantity]=2&subscription[line_items_attributes][1][subscribable_id]=${coffee}&subscription[line_items_attributes][2][subscribable_id]=${coffee}&subscription[line_items_attributes][2][quantity]=`,
    })
    assert.equal(form.status, 200)
    assert.deepEqual(form.body.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[tea, 2]])
    const brackets = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, form: `subscription[interval_length]=1&subscription[line_items_attributes][][subscribable_id]=${tea}&subscription[line_items_attributes][][quantity]=4`,
    })
    assert.equal(brackets.status, 200)
    assert.deepEqual(brackets.body.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[tea, 4]])
  })

  test('the currency default comes from REPLENISH_CURRENCY; a code is read in any case', async (t) => {
    const euro = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_CURRENCY: 'EUR' })
    const bob = await seedUser(euro.store)
    const res = await euro.request('POST', '/api/v1/subscriptions', { key: bob.key, json: { subscription: { interval_length: 1 } } })
    assert.equal(res.body.currency, 'EUR')
    assert.equal((await create({ interval_length: 1, currency: 'jpy' })).body.currency, 'JPY')
  })

  test('both payment ids empty means no payment details', async () => {
    const res = await create({ interval_length: 1, payment_method_id: null, payment_source_id: null })
    assert.equal(res.status, 200)
    assert.equal(res.body.payment_method_id, null)
    assert.equal(res.body.payment_source_id, null)
    const form = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]=1&subscription[payment_method_id]=&subscription[payment_source_id]=' })
    assert.equal(form.status, 200)
    assert.equal(form.body.payment_method_id, null)
    // One empty field alone says nothing either: both ids stay absent.
    for (const lone of ['subscription[payment_method_id]=', 'subscription[payment_source_id]', 'subscription[payment_source_id]=']) {
      const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: `subscription[interval_length]=1&${lone}` })
      assert.equal(res.status, 200, lone)
      assert.deepEqual([res.body.payment_method_id, res.body.payment_source_id], [null, null])
    }
    const loneNull = await create({ interval_length: 1, payment_method_id: null })
    assert.deepEqual([loneNull.status, loneNull.body.payment_method_id, loneNull.body.payment_source_id], [200, null, null])
  })
})

for (const encoding of ENCODINGS) {
  describe(`C6 payment rules (${encoding}): any failure is the one payment_source_type message and creates nothing`, () => {
    test('a method without a source, a source without a method', async () => {
      const pay = await seedPayment(server.store, alice.id)
      await refused({ interval_length: 1, payment_method_id: pay.methodId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_source_id: pay.sourceId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: pay.methodId, payment_source_id: '' }, INVALID_PAYMENT, encoding)
    })

    test('a source of another user, with or without its method', async () => {
      const bob = await seedUser(server.store)
      const bobs = await seedPayment(server.store, bob.id)
      await refused({ interval_length: 1, payment_source_id: bobs.sourceId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId }, INVALID_PAYMENT, encoding)
    })

    test('a source of another method, an inactive method, ids that do not exist or are not ids', async () => {
      const one = await seedPayment(server.store, alice.id)
      const two = await seedPayment(server.store, alice.id)
      const inactive = await seedPayment(server.store, alice.id, { active: false })
      await refused({ interval_length: 1, payment_method_id: two.methodId, payment_source_id: one.sourceId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: inactive.methodId, payment_source_id: inactive.sourceId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: 999_999, payment_source_id: one.sourceId }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: one.methodId, payment_source_id: 999_999 }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: 'card', payment_source_id: 'visa' }, INVALID_PAYMENT, encoding)
      await refused({ interval_length: 1, payment_method_id: -1, payment_source_id: 0 }, INVALID_PAYMENT, encoding)
    })
  })

  describe(`C4 rows on create (${encoding})`, () => {
    test('interval_length: a number, an integer, greater than 0', async () => {
      await refused({ interval_units: 'month' }, { interval_length: ['is not a number'] }, encoding)
      await refused({ interval_length: 'abc' }, { interval_length: ['is not a number'] }, encoding)
      await refused({ interval_length: '' }, { interval_length: ['is not a number'] }, encoding)
      await refused({ interval_length: '1.5' }, { interval_length: ['must be an integer'] }, encoding)
      await refused({ interval_length: 0 }, { interval_length: ['must be greater than 0'] }, encoding)
      await refused({ interval_length: -1 }, { interval_length: ['must be greater than 0'] }, encoding)
      await refused({ interval_length: '-7' }, { interval_length: ['must be greater than 0'] }, encoding)
    })

    test('interval_length: at most 3650 days, 520 weeks, 120 months, 10 years', async () => {
      await refused({ interval_length: 3651, interval_units: 'day' }, { interval_length: ['must be less than or equal to 3650'] }, encoding)
      await refused({ interval_length: 521, interval_units: 'week' }, { interval_length: ['must be less than or equal to 520'] }, encoding)
      await refused({ interval_length: 121, interval_units: 'month' }, { interval_length: ['must be less than or equal to 120'] }, encoding)
      await refused({ interval_length: 121 }, { interval_length: ['must be less than or equal to 120'] }, encoding)
      await refused({ interval_length: 11, interval_units: 'year' }, { interval_length: ['must be less than or equal to 10'] }, encoding)
    })

    test('interval_units: one of day week month year', async () => {
      for (const units of ['fortnight', 'Week', 'weeks', 'MONTH', ' month', '', '1']) {
        await refused({ interval_length: 1, interval_units: units }, { interval_units: ['is not included in the list'] }, encoding)
      }
    })

    test('line_items.quantity: an integer from 1 to 9999', async () => {
      const coffee = await seedSubscribable(server.store)
      const li = (quantity: unknown) => ({ interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity }] })
      await refused(li(0), { 'line_items.quantity': ['must be greater than 0'] }, encoding)
      await refused(li(-1), { 'line_items.quantity': ['must be greater than 0'] }, encoding)
      await refused(li(10_000), { 'line_items.quantity': ['must be less than or equal to 9999'] }, encoding)
      await refused(li('2.5'), { 'line_items.quantity': ['must be an integer'] }, encoding)
      await refused(li('two'), { 'line_items.quantity': ['is not a number'] }, encoding)
    })

    test('line_items.subscribable: an existing, subscribable catalog item', async () => {
      const hidden = await seedSubscribable(server.store, { subscribable: false })
      const cannot = { 'line_items.subscribable': ['The requested item cannot be subscribed'] }
      await refused({ interval_length: 1, line_items_attributes: [{ subscribable_id: 999_999, quantity: 1 }] }, cannot, encoding)
      await refused({ interval_length: 1, line_items_attributes: [{ subscribable_id: hidden, quantity: 1 }] }, cannot, encoding)
      await refused({ interval_length: 1, line_items_attributes: [{ quantity: 1 }] }, cannot, encoding)
      await refused({ interval_length: 1, line_items_attributes: [{ subscribable_id: 'coffee', quantity: 1 }] }, cannot, encoding)
    })

    test('actionable_date: a real YYYY-MM-DD date, today or later', async () => {
      for (const date of ['2026-02-30', '2026-13-01', '2026-3-20', '20260320', 'tomorrow', '2026-03-20T00:00:00Z', '2026/03/20']) {
        await refused({ interval_length: 1, actionable_date: date }, { actionable_date: ['is not a valid date'] }, encoding)
      }
      await refused({ interval_length: 1, actionable_date: '2026-03-14' }, { actionable_date: ['must be today or later'] }, encoding)
      await refused({ interval_length: 1, actionable_date: '1999-12-31' }, { actionable_date: ['must be today or later'] }, encoding)
    })

    test('end_date: a real date after today', async () => {
      await refused({ interval_length: 1, end_date: '2026-02-29' }, { end_date: ['is not a valid date'] }, encoding)
      await refused({ interval_length: 1, end_date: 'never' }, { end_date: ['is not a valid date'] }, encoding)
      await refused({ interval_length: 1, end_date: TODAY }, { end_date: ['must be after today'] }, encoding)
      await refused({ interval_length: 1, end_date: '2026-01-01' }, { end_date: ['must be after today'] }, encoding)
    })

    test('currency: an ISO 4217 code', async () => {
      for (const currency of ['XYZ', 'US', 'USDD', 'dollars', '840']) {
        await refused({ interval_length: 1, currency }, { currency: ['is not a valid currency code'] }, encoding)
      }
    })

    test('addresses: firstname, address1, city, zipcode, country_iso required; country_iso two letters', async () => {
      const blank = ["can't be blank"]
      await refused({ interval_length: 1, shipping_address_attributes: { lastname: 'Lovelace' } }, {
        'shipping_address.firstname': blank, 'shipping_address.address1': blank, 'shipping_address.city': blank,
        'shipping_address.zipcode': blank, 'shipping_address.country_iso': blank,
      }, encoding)
      await refused({ interval_length: 1, shipping_address_attributes: address({ zipcode: '' }) }, { 'shipping_address.zipcode': blank }, encoding)
      await refused({ interval_length: 1, shipping_address_attributes: address({ zipcode: '   ' }) }, { 'shipping_address.zipcode': blank }, encoding)
      await refused({ interval_length: 1, billing_address_attributes: address({ country_iso: 'GBR' }) }, { 'billing_address.country_iso': ['is invalid'] }, encoding)
      await refused({ interval_length: 1, billing_address_attributes: address({ country_iso: 'G1' }) }, { 'billing_address.country_iso': ['is invalid'] }, encoding)
      await refused({ interval_length: 1, billing_address_attributes: address({ city: null }) }, { 'billing_address.city': blank }, encoding)
    })

    test('several broken rules answer together', async () => {
      const bob = await seedUser(server.store)
      const bobs = await seedPayment(server.store, bob.id)
      await refused({
        interval_length: 0, interval_units: 'week', actionable_date: '2020-01-01', end_date: 'x', currency: 'ABC',
        payment_source_id: bobs.sourceId, shipping_address_attributes: address({ city: '' }),
      }, {
        interval_length: ['must be greater than 0'], actionable_date: ['must be today or later'], end_date: ['is not a valid date'],
        currency: ['is not a valid currency code'], ...INVALID_PAYMENT, 'shipping_address.city': ["can't be blank"],
      }, encoding)
    })
  })
}

describe('C4 rows only JSON can break', () => {
  test('interval_length of the wrong JSON type', async () => {
    // An empty root object is an object: validation answers, not the missing-param 422.
    await refused({}, { interval_length: ['is not a number'] })
    await refused({ interval_length: 1.5 }, { interval_length: ['must be an integer'] })
    await refused({ interval_length: null }, { interval_length: ['is not a number'] })
    await refused({ interval_length: true }, { interval_length: ['is not a number'] })
    await refused({ interval_length: [1] }, { interval_length: ['is not a number'] })
    await refused({ interval_length: { value: 1 } }, { interval_length: ['is not a number'] })
    await refused({ interval_length: 1e300 }, { interval_length: ['must be less than or equal to 120'] })
  })

  test('dates, currency and addresses of the wrong JSON type', async () => {
    await refused({ interval_length: 1, actionable_date: 20260320 }, { actionable_date: ['is not a valid date'] })
    await refused({ interval_length: 1, end_date: ['2027-01-01'] }, { end_date: ['is not a valid date'] })
    await refused({ interval_length: 1, currency: 840 }, { currency: ['is not a valid currency code'] })
    await refused({ interval_length: 1, interval_units: ['week'] }, { interval_units: ['is not included in the list'] })
    await refused({ interval_length: 1, shipping_address_attributes: 'Baker Street' }, { shipping_address: ['is invalid'] })
    await refused({ interval_length: 1, shipping_address_attributes: address({ firstname: { a: 1 } }) }, { 'shipping_address.firstname': ['is invalid'] })
  })

  test('line_items_attributes that is not a list of objects', async () => {
    await refused({ interval_length: 1, line_items_attributes: 'coffee' }, { line_items: ['is invalid'] })
    await refused({ interval_length: 1, line_items_attributes: [1, 2] }, { line_items: ['is invalid'] })
    await refused({ interval_length: 1, line_items_attributes: [{ subscribable_id: 999_999, quantity: true }] }, { 'line_items.quantity': ['is not a number'], 'line_items.subscribable': ['The requested item cannot be subscribed'] })
  })
})
