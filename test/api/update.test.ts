/**
 * C7 (update) and the C4 rows an update can break: each field, the interval-change rule for
 * actionable_date, payment pairs, nested addresses and line items. A 422 (or a 404 from a
 * foreign line item id) changes nothing: checked against the whole database.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer, type SeededUser, type TestServer,
} from '../helpers/server.ts'
import { ENCODINGS, encoded, type Encoding } from '../helpers/encoding.ts'
import { testSql } from '../helpers/rows.ts'

const TODAY = '2026-03-15'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const INVALID_PAYMENT = { payment_source_type: ['Invalid payment method or source'] }

let server: TestServer
let alice: SeededUser

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: TODAY })
  alice = await seedUser(server.store)
})
after(() => server.close())

const update = (id: number, attrs: Record<string, unknown>, encoding: Encoding = 'json', key = alice.key) =>
  server.request('PATCH', `/api/v1/subscriptions/${id}`, { key, ...encoded(encoding, { subscription: attrs }) })

async function refused(id: number, attrs: Record<string, unknown>, errors: Record<string, string[]>, encoding: Encoding = 'json'): Promise<void> {
  const before = await snapshot(server.store)
  const res = await update(id, attrs, encoding)
  assert.equal(res.status, 422, `${encoding} ${JSON.stringify(attrs)}: ${res.text}`)
  assert.deepEqual(res.body, errors, `${encoding} ${JSON.stringify(attrs)}`)
  assert.equal(await snapshot(server.store), before, `${encoding} ${JSON.stringify(attrs)} changed the database`)
}

function address(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    firstname: 'Ada', lastname: 'Lovelace', company: null, address1: '12 St James Sq', address2: null,
    city: 'London', zipcode: 'SW1Y 4JH', state_name: null, country_iso: 'GB', phone: null, ...overrides,
  }
}

/** Direct SQL for situations the API cannot make yet: an older subscription, a past installment. */
async function setCreatedOn(id: number, date: string): Promise<void> {
  await testSql(server.store).run('UPDATE subscriptions SET created_on = ? WHERE id = ?', date, id)
}
async function addInstallment(id: number, dueDate: string): Promise<void> {
  const now = new Date().toISOString()
  await testSql(server.store).run(`INSERT INTO installments (subscription_id, due_date, state, line_items, currency, created_at, updated_at)
    VALUES (?, ?, 'fulfilled', '[]', 'USD', ?, ?)`, id, dueDate, now, now)
}

describe('an update that succeeds answers the whole subscription and stores it', () => {
  for (const encoding of ENCODINGS) {
    test(`every field at once (${encoding})`, async () => {
      const sub = await createSubscription(server, alice.key, { interval_length: 1 })
      const pay = await seedPayment(server.store, alice.id)
      const res = await update(sub.id, {
        interval_length: 2, interval_units: 'week', actionable_date: '2026-04-01', end_date: '2027-01-01',
        payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
        shipping_address_attributes: address(), billing_address_attributes: address({ firstname: 'Charles' }),
      }, encoding)
      assert.equal(res.status, 200, res.text)
      assert.ok(res.body.updated_at >= sub.updated_at)
      assert.deepEqual(res.body, {
        ...sub, interval_length: 2, interval_units: 'week', actionable_date: '2026-04-01', end_date: '2027-01-01',
        payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
        shipping_address: address(), billing_address: address({ firstname: 'Charles' }), updated_at: res.body.updated_at,
      })
      const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
      assert.deepEqual(shown.body, res.body)
      assert.equal((await server.store.subscriptions.find(sub.id))?.anchor_day, 1)
    })
  }

  test('a body with nothing to change answers the subscription as it is and writes nothing', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const before = await snapshot(server.store)
    const res = await update(sub.id, { interval_length: 1, interval_units: 'month' })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, sub)
    assert.equal(await snapshot(server.store), before)
  })
})

describe('changing the interval moves actionable_date (C7)', () => {
  test('from the creation date when there is no installment', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    assert.equal(sub.actionable_date, '2026-04-15')
    assert.equal((await update(sub.id, { interval_length: 2, interval_units: 'week' })).body.actionable_date, '2026-03-29')
    assert.equal((await update(sub.id, { interval_units: 'day' })).body.actionable_date, '2026-03-17')
    assert.equal((await update(sub.id, { interval_length: 3, interval_units: 'month' })).body.actionable_date, '2026-06-15')
    assert.equal((await server.store.subscriptions.find(sub.id))?.actionable_date, '2026-06-15')
  })

  test("from the last installment's due date when there is one, keeping its day", async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    await setCreatedOn(sub.id, '2025-10-31')
    await addInstallment(sub.id, '2025-12-31')
    await addInstallment(sub.id, '2026-01-31')
    const res = await update(sub.id, { interval_length: 2 })
    assert.equal(res.status, 200)
    assert.equal(res.body.actionable_date, '2026-03-31')
    assert.equal((await server.store.subscriptions.find(sub.id))?.anchor_day, 31)
  })

  test('never before today', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    await setCreatedOn(sub.id, '2025-06-01')
    const res = await update(sub.id, { interval_length: 1, interval_units: 'week' })
    assert.equal(res.status, 200)
    assert.equal(res.body.actionable_date, TODAY)
  })

  test('unless the same request sets actionable_date', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const res = await update(sub.id, { interval_length: 6, actionable_date: '2026-05-02' })
    assert.equal(res.status, 200)
    assert.deepEqual([res.body.interval_length, res.body.actionable_date], [6, '2026-05-02'])
    assert.equal((await server.store.subscriptions.find(sub.id))?.anchor_day, 2)
  })

  test('a canceled subscription keeps no date', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
    const res = await update(sub.id, { interval_length: 2 })
    assert.equal(res.status, 200)
    assert.deepEqual([res.body.state, res.body.interval_length, res.body.actionable_date], ['canceled', 2, null])
  })

  test('changing only the units checks the stored length against the new maximum', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 12 })
    await refused(sub.id, { interval_units: 'year' }, { interval_length: ['must be less than or equal to 10'] })
    const ok = await update(sub.id, { interval_units: 'week' })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.actionable_date, '2026-06-07')
  })
})

describe('other fields', () => {
  test('actionable_date alone: stored, today allowed', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const res = await update(sub.id, { actionable_date: TODAY })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, { ...sub, actionable_date: TODAY, updated_at: res.body.updated_at })
  })

  test('actionable_date on a canceled or inactive subscription is refused (422, nothing changes, no event); a blank one is not given', async () => {
    const canceled = await createSubscription(server, alice.key, { interval_length: 1 })
    await server.request('POST', `/api/v1/subscriptions/${canceled.id}/cancel`, { key: alice.key })
    const message = { actionable_date: ['cannot be set on a subscription which is canceled or inactive'] }
    await refused(canceled.id, { actionable_date: '2026-04-01' }, message)
    // With another change beside it the whole request is refused (C7: a 422 changes nothing).
    await refused(canceled.id, { actionable_date: '2026-04-01', interval_length: 3 }, message)
    // Even a date that is not one: the state is what the customer must hear about.
    await refused(canceled.id, { actionable_date: 'soon' }, message)
    const inactive = await createSubscription(server, alice.key, { interval_length: 1 })
    await testSql(server.store).run("UPDATE subscriptions SET state = 'inactive', actionable_date = NULL WHERE id = ?", inactive.id)
    await refused(inactive.id, { actionable_date: '2026-04-01' }, message)
    const es = await server.request('PATCH', `/api/v1/subscriptions/${canceled.id}`, { key: alice.key, json: { subscription: { actionable_date: '2026-04-01' } }, headers: { 'accept-language': 'es' } })
    assert.deepEqual(es.body, { actionable_date: ['no se puede fijar en una suscripción cancelada o inactiva'] })
    // Blank (a form's empty field) or null is "not given" (docs/decisions.md): 200, the subscription as it is.
    for (const blank of ['', null]) {
      const before = await snapshot(server.store)
      const res = await update(canceled.id, { actionable_date: blank })
      assert.equal(res.status, 200)
      assert.equal(res.body.actionable_date, null)
      assert.equal(await snapshot(server.store), before)
    }
  })

  test('end_date is set and cleared', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    assert.equal((await update(sub.id, { end_date: '2026-03-16' })).body.end_date, '2026-03-16')
    const cleared = await update(sub.id, { end_date: null })
    assert.equal(cleared.status, 200)
    assert.equal(cleared.body.end_date, null)
    assert.equal((await server.store.subscriptions.find(sub.id))?.end_date, null)
  })

  test('payment: a valid pair is stored, both empty clear them', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1 })
    const pay = await seedPayment(server.store, alice.id)
    const set = await update(sub.id, { payment_method_id: String(pay.methodId), payment_source_id: String(pay.sourceId) })
    assert.deepEqual([set.status, set.body.payment_method_id, set.body.payment_source_id], [200, pay.methodId, pay.sourceId])
    const cleared = await update(sub.id, { payment_method_id: '', payment_source_id: '' }, 'form')
    assert.deepEqual([cleared.status, cleared.body.payment_method_id, cleared.body.payment_source_id], [200, null, null])
    const stored = await server.store.subscriptions.find(sub.id)
    assert.deepEqual([stored?.payment_method_id, stored?.payment_source_id], [null, null])
    // With no pair stored, one blank id alone changes nothing.
    const before = await snapshot(server.store)
    const lone = await update(sub.id, { payment_method_id: '' }, 'form')
    assert.deepEqual([lone.status, lone.body.payment_method_id, lone.body.payment_source_id], [200, null, null])
    assert.equal(await snapshot(server.store), before)
  })

  test('addresses: given fields are merged over the stored address; null removes it', async () => {
    const sub = await createSubscription(server, alice.key, { interval_length: 1, shipping_address_attributes: address() })
    const zip = await update(sub.id, { shipping_address_attributes: { zipcode: 'EC1A 1BB' } })
    assert.equal(zip.status, 200)
    assert.deepEqual(zip.body.shipping_address, address({ zipcode: 'EC1A 1BB' }))
    await refused(sub.id, { shipping_address_attributes: { zipcode: '' } }, { 'shipping_address.zipcode': ["can't be blank"] })
    await refused(sub.id, { shipping_address_attributes: { country_iso: 'United Kingdom' } }, { 'shipping_address.country_iso': ['is invalid'] })
    await refused(sub.id, { billing_address_attributes: { city: 'Paris' } }, {
      'billing_address.firstname': ["can't be blank"], 'billing_address.address1': ["can't be blank"],
      'billing_address.zipcode': ["can't be blank"], 'billing_address.country_iso': ["can't be blank"],
    })
    const removed = await update(sub.id, { shipping_address_attributes: null })
    assert.equal(removed.status, 200)
    assert.equal(removed.body.shipping_address, null)
    assert.equal((await server.store.subscriptions.find(sub.id))?.shipping_address, null)
  })
})

for (const encoding of ENCODINGS) {
  describe(`C4 rows on update (${encoding}): 422 and nothing changes`, () => {
    test('interval_length and interval_units', async () => {
      const sub = await createSubscription(server, alice.key, { interval_length: 1 })
      await refused(sub.id, { interval_length: -1 }, { interval_length: ['must be greater than 0'] }, encoding)
      await refused(sub.id, { interval_length: 0 }, { interval_length: ['must be greater than 0'] }, encoding)
      await refused(sub.id, { interval_length: 'x' }, { interval_length: ['is not a number'] }, encoding)
      await refused(sub.id, { interval_length: '' }, { interval_length: ['is not a number'] }, encoding)
      await refused(sub.id, { interval_length: '2.5' }, { interval_length: ['must be an integer'] }, encoding)
      await refused(sub.id, { interval_length: 121 }, { interval_length: ['must be less than or equal to 120'] }, encoding)
      await refused(sub.id, { interval_length: 3651, interval_units: 'day' }, { interval_length: ['must be less than or equal to 3650'] }, encoding)
      await refused(sub.id, { interval_length: 521, interval_units: 'week' }, { interval_length: ['must be less than or equal to 520'] }, encoding)
      await refused(sub.id, { interval_length: 11, interval_units: 'year' }, { interval_length: ['must be less than or equal to 10'] }, encoding)
      await refused(sub.id, { interval_units: 'quarter' }, { interval_units: ['is not included in the list'] }, encoding)
      await refused(sub.id, { interval_units: '' }, { interval_units: ['is not included in the list'] }, encoding)
    })

    test('dates', async () => {
      const sub = await createSubscription(server, alice.key, { interval_length: 1 })
      await refused(sub.id, { actionable_date: '2026-02-29' }, { actionable_date: ['is not a valid date'] }, encoding)
      await refused(sub.id, { actionable_date: '15/03/2026' }, { actionable_date: ['is not a valid date'] }, encoding)
      await refused(sub.id, { actionable_date: '2026-03-14' }, { actionable_date: ['must be today or later'] }, encoding)
      await refused(sub.id, { end_date: '2026-04-31' }, { end_date: ['is not a valid date'] }, encoding)
      await refused(sub.id, { end_date: TODAY }, { end_date: ['must be after today'] }, encoding)
      await refused(sub.id, { interval_length: 2, end_date: '2020-01-01' }, { end_date: ['must be after today'] }, encoding)
    })

    test('payment', async () => {
      const pay = await seedPayment(server.store, alice.id)
      const sub = await createSubscription(server, alice.key, { interval_length: 1, payment_method_id: pay.methodId, payment_source_id: pay.sourceId })
      const bob = await seedUser(server.store)
      const bobs = await seedPayment(server.store, bob.id)
      await refused(sub.id, { payment_method_id: bobs.methodId }, INVALID_PAYMENT, encoding)
      await refused(sub.id, { payment_source_id: bobs.sourceId }, INVALID_PAYMENT, encoding)
      await refused(sub.id, { payment_method_id: bobs.methodId, payment_source_id: bobs.sourceId }, INVALID_PAYMENT, encoding)
      await refused(sub.id, { payment_method_id: pay.methodId, payment_source_id: '' }, INVALID_PAYMENT, encoding)
      await refused(sub.id, { interval_length: 2, payment_source_id: pay.sourceId }, INVALID_PAYMENT, encoding)
      // One blank id alone would clear half of the stored pair.
      await refused(sub.id, { payment_method_id: '' }, INVALID_PAYMENT, encoding)
      await refused(sub.id, { payment_source_id: null }, INVALID_PAYMENT, encoding)
    })

    test('nested line items', async () => {
      const coffee = await seedSubscribable(server.store)
      const hidden = await seedSubscribable(server.store, { subscribable: false })
      const sub = await createSubscription(server, alice.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
      const id = sub.line_items[0].id
      await refused(sub.id, { line_items_attributes: [{ id, quantity: 0 }] }, { 'line_items.quantity': ['must be greater than 0'] }, encoding)
      await refused(sub.id, { line_items_attributes: [{ id, quantity: 10_000 }] }, { 'line_items.quantity': ['must be less than or equal to 9999'] }, encoding)
      await refused(sub.id, { line_items_attributes: [{ subscribable_id: coffee, quantity: -3 }] }, { 'line_items.quantity': ['must be greater than 0'] }, encoding)
      await refused(sub.id, { line_items_attributes: [{ subscribable_id: hidden, quantity: 1 }] }, { 'line_items.subscribable': ['The requested item cannot be subscribed'] }, encoding)
      await refused(sub.id, { line_items_attributes: [{ id, subscribable_id: 999_999 }] }, { 'line_items.subscribable': ['The requested item cannot be subscribed'] }, encoding)
      // A valid change beside an invalid one is not applied either.
      await refused(sub.id, { interval_length: 2, line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }, { id, quantity: 'lots' }] }, { 'line_items.quantity': ['is not a number'] }, encoding)
    })
  })

  describe(`line_items_attributes (${encoding})`, () => {
    test('{id, quantity} updates, {id, _destroy} removes, {subscribable_id, quantity} adds', async () => {
      const coffee = await seedSubscribable(server.store)
      const tea = await seedSubscribable(server.store)
      const sub = await createSubscription(server, alice.key, {
        interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }, { subscribable_id: tea, quantity: 1 }, { subscribable_id: tea, quantity: 5 }],
      })
      const [a, b, c] = sub.line_items
      const res = await update(sub.id, {
        line_items_attributes: [{ id: a.id, quantity: 4 }, { id: b.id, _destroy: encoding === 'json' ? true : '1' }, { id: c.id, _destroy: 'true' }, { subscribable_id: coffee, quantity: 9 }, { subscribable_id: tea }],
      }, encoding)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body.line_items.map((li: any) => [li.id === a.id ? 'a' : 'new', li.subscribable_id, li.quantity]), [['a', coffee, 4], ['new', coffee, 9]])
      assert.deepEqual((await server.store.subscriptions.lineItems(sub.id)).map((li) => [li.subscribable_id, li.quantity]), [[coffee, 4], [coffee, 9]])
      assert.equal(await server.store.subscriptions.lineItemById(b.id), undefined)
      assert.equal(await server.store.subscriptions.lineItemById(c.id), undefined)
      assert.deepEqual((await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })).body, res.body)
    })

    test('an entry with an empty quantity is ignored, like one without', async () => {
      const coffee = await seedSubscribable(server.store)
      const sub = await createSubscription(server, alice.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }] })
      const before = await snapshot(server.store)
      const res = await update(sub.id, { line_items_attributes: [{ subscribable_id: coffee, quantity: '' }, { id: sub.line_items[0].id, quantity: '' }] }, encoding)
      assert.equal(res.status, 200, res.text)
      assert.deepEqual(res.body, sub)
      assert.equal(await snapshot(server.store), before)
    })

    test('an id of another subscription (even one of the same user) is 404 and nothing changes', async () => {
      const coffee = await seedSubscribable(server.store)
      const bob = await seedUser(server.store)
      const mine = await createSubscription(server, alice.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
      const other = await createSubscription(server, alice.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
      const bobs = await createSubscription(server, bob.key, { interval_length: 1, line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
      const before = await snapshot(server.store)
      for (const id of [other.line_items[0].id, bobs.line_items[0].id, 999_999, 'abc']) {
        for (const entry of [{ id, quantity: 3 }, { id, _destroy: '1' }]) {
          const res = await update(mine.id, { interval_length: 2, line_items_attributes: [{ subscribable_id: coffee, quantity: 2 }, { id: mine.line_items[0].id, quantity: 7 }, entry] }, encoding)
          assert.equal(res.status, 404, `${JSON.stringify(entry)}: ${res.text}`)
          assert.deepEqual(res.body, NOT_FOUND)
        }
      }
      assert.equal(await snapshot(server.store), before)
    })
  })
}

test('a foreign subscription: 401 and nothing changes, whatever the body', async () => {
  const bob = await seedUser(server.store)
  const sub = await createSubscription(server, alice.key, { interval_length: 1 })
  const before = await snapshot(server.store)
  for (const attrs of [{ interval_length: 2 }, { interval_length: -1 }, { line_items_attributes: [{ id: 999_999, quantity: 1 }] }]) {
    const res = await update(sub.id, attrs, 'json', bob.key)
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { error: 'You are not authorized to perform that action.' })
  }
  assert.equal(await snapshot(server.store), before)
})
