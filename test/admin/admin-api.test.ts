/**
 * C11, the admin API: users, API keys (made, imported, revoked), payment methods, payment
 * sources (a delete clears the ids from subscriptions), the catalog (a delete removes line
 * items), the subscription list and its filters, the event feed. Creates answer 201.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import {
  ADMIN_TOKEN, createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer,
  type RequestOptions, type TestServer,
} from '../helpers/server.ts'

const A = '/admin/api/v1'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const missing = (name: string) => {
  const text = `param is missing or the value is empty: ${name}`
  return { error: text, exception: text, missing_param: name }
}

let server: TestServer
let counter = 0
const email = () => `admin-test-${++counter}@example.com`

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
})
after(() => server.close())

const admin = (method: string, path: string, options: RequestOptions = {}) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })

async function refused(method: string, path: string, options: RequestOptions, status: number, body: unknown): Promise<void> {
  const before = await snapshot(server.store)
  const res = await admin(method, path, options)
  assert.equal(res.status, status, `${method} ${path}: ${res.text}`)
  assert.deepEqual(res.body, body)
  assert.equal(await snapshot(server.store), before)
}

function timestamps(body: any): { created_at: string; updated_at: string } {
  assert.match(body.created_at, ISO_TIME)
  assert.match(body.updated_at, ISO_TIME)
  return { created_at: body.created_at, updated_at: body.updated_at }
}

describe('users', () => {
  test('POST /users: 201 with the user, from JSON, a form or an unwrapped JSON body', async () => {
    const a = email()
    const res = await admin('POST', '/users', { json: { user: { email: a, external_id: 'shop-42' } } })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, { id: res.body.id, email: a, external_id: 'shop-42', locale: 'en', email_notifications: true, ...timestamps(res.body) })
    // The default language is shown; the user keeps none of their own (C17).
    assert.deepEqual(await server.store.accounts.findUser(res.body.id), { ...res.body, locale: null })
    const b = email()
    const form = await admin('POST', '/users', { form: `user[email]=${encodeURIComponent(b)}` })
    assert.equal(form.status, 201)
    assert.deepEqual(form.body, { id: form.body.id, email: b, external_id: null, locale: 'en', email_notifications: true, ...timestamps(form.body) })
    const unwrapped = await admin('POST', '/users', { json: { email: email() } })
    assert.equal(unwrapped.status, 201)
  })

  test('email is required, valid and unique (whatever its case)', async () => {
    const taken = email()
    assert.equal((await admin('POST', '/users', { json: { user: { email: taken } } })).status, 201)
    await refused('POST', '/users', { json: { user: { email: taken } } }, 422, { email: ['has already been taken'] })
    await refused('POST', '/users', { json: { user: { email: taken.toUpperCase() } } }, 422, { email: ['has already been taken'] })
    await refused('POST', '/users', { json: { user: { external_id: 'x' } } }, 422, { email: ["can't be blank"] })
    await refused('POST', '/users', { json: { user: { email: 'not an email' } } }, 422, { email: ['is invalid'] })
    await refused('POST', '/users', { json: {} }, 422, missing('user'))
    await refused('POST', '/users', { json: { user: 'x@example.com' } }, 422, missing('user'))
  })

  test('GET /users pages by id with ?after= and ?limit=; GET /users/:id', async () => {
    const ids: number[] = []
    for (let i = 0; i < 5; i++) ids.push((await admin('POST', '/users', { json: { user: { email: email() } } })).body.id)
    const first = ids[0] as number
    const page1 = await admin('GET', `/users?after=${first - 1}&limit=2`)
    assert.equal(page1.status, 200)
    assert.deepEqual(page1.body.users.map((u: any) => u.id), ids.slice(0, 2))
    assert.equal(page1.body.next_after, ids[1])
    const page2 = await admin('GET', `/users?after=${page1.body.next_after}&limit=2`)
    assert.deepEqual(page2.body.users.map((u: any) => u.id), ids.slice(2, 4))
    const last = await admin('GET', `/users?after=${ids[4]}`)
    assert.deepEqual(last.body, { users: [], next_after: null })
    const one = await admin('GET', `/users/${ids[2]}`)
    assert.deepEqual(one.body, page2.body.users[0])
    assert.deepEqual(Object.keys(one.body), ['id', 'email', 'external_id', 'locale', 'email_notifications', 'created_at', 'updated_at'])
    const none = await admin('GET', '/users/999999')
    assert.deepEqual([none.status, none.body], [404, NOT_FOUND])
  })

  test('?limit= defaults to 25 and may be up to 100 (beyond: test/admin/strict-query.test.ts)', async () => {
    await server.store.write(async (tx) => {
      for (let i = 0; i < 105; i++) await tx.accounts.createUser(email(), null)
    })
    const byDefault = await admin('GET', '/users')
    assert.equal(byDefault.body.users.length, 25)
    assert.equal(byDefault.body.next_after, byDefault.body.users[24].id)
    const most = await admin('GET', '/users?limit=100')
    assert.equal(most.body.users.length, 100)
    assert.equal(most.body.next_after, most.body.users[99].id)
  })
})

describe('API keys', () => {
  test('an empty POST makes a key: rpl_ with 128+ bits, shown once, stored only as a hash, and it works', async () => {
    const user = (await admin('POST', '/users', { json: { user: { email: email() } } })).body
    const res = await admin('POST', `/users/${user.id}/api_keys`)
    assert.equal(res.status, 201)
    const key: string = res.body.key
    assert.match(key, /^rpl_[A-Za-z0-9_-]{22,}$/)
    assert.deepEqual(res.body, { id: res.body.id, user_id: user.id, prefix: key.slice(0, 8), key, ...timestamps(res.body) })
    assert.equal((await snapshot(server.store)).includes(key), false)
    const stored = await server.store.accounts.activeApiKeyByHash(createHash('sha256').update(key).digest('hex'))
    assert.equal(stored?.id, res.body.id)
    assert.equal((await snapshot(server.store)).includes(key.slice(4)), false)
    const second = await admin('POST', `/users/${user.id}/api_keys`, { json: {} })
    assert.equal(second.status, 201)
    assert.notEqual(second.body.key, key)
    const works = await server.request('GET', '/api/v1/subscriptions', { key })
    assert.equal(works.status, 200)
    const created = await server.request('POST', '/api/v1/subscriptions', { key: second.body.key, json: { subscription: { interval_length: 1 } } })
    assert.equal(created.body.user_id, user.id)
    // Never shown again.
    const shown = await admin('GET', `/users/${user.id}`)
    assert.equal(shown.text.includes(key), false)
    assert.equal(JSON.stringify(server.log).includes(key), false)
  })

  test('an existing key of 16+ characters is imported and keeps working', async () => {
    const user = (await admin('POST', '/users', { json: { user: { email: email() } } })).body
    const spreeKey = `spree${'0123456789abcdef'.slice(0, 11)}${counter}`
    const res = await admin('POST', `/users/${user.id}/api_keys`, { json: { api_key: { key: spreeKey } } })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, { id: res.body.id, user_id: user.id, prefix: spreeKey.slice(0, 8), key: spreeKey, ...timestamps(res.body) })
    const works = await server.request('GET', '/api/v1/subscriptions', { key: spreeKey })
    assert.equal(works.status, 200)
    const form = await admin('POST', `/users/${user.id}/api_keys`, { form: `api_key[key]=exactly16chars-${counter}x`.slice(0, 'api_key[key]='.length + 16) })
    assert.equal(form.status, 201)
    assert.equal(form.body.key.length, 16)
  })

  test('an imported key shorter than 16 characters, or already in use, is a 422', async () => {
    const user = (await admin('POST', '/users', { json: { user: { email: email() } } })).body
    await refused('POST', `/users/${user.id}/api_keys`, { json: { api_key: { key: 'fifteen-chars-x' } } }, 422, { key: ['is too short (minimum is 16 characters)'] })
    const used = `already-used-key-${counter}`
    assert.equal((await admin('POST', `/users/${user.id}/api_keys`, { json: { api_key: { key: used } } })).status, 201)
    await refused('POST', `/users/${user.id}/api_keys`, { json: { api_key: { key: used } } }, 422, { key: ['has already been taken'] })
    await refused('POST', `/users/${user.id}/api_keys`, { json: { api_key: { key: 'has spaces in it, sixteen+' } } }, 422, { key: ['is invalid'] })
    await refused('POST', '/users/999999/api_keys', {}, 404, NOT_FOUND)
  })

  test('DELETE /api_keys/:id revokes: 200 with the key record (no key), and the key stops working', async () => {
    const user = (await admin('POST', '/users', { json: { user: { email: email() } } })).body
    const made = (await admin('POST', `/users/${user.id}/api_keys`)).body
    assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: made.key })).status, 200)
    const res = await admin('DELETE', `/api_keys/${made.id}`)
    assert.equal(res.status, 200)
    assert.match(res.body.revoked_at, ISO_TIME)
    assert.deepEqual(res.body, { id: made.id, user_id: user.id, prefix: made.prefix, revoked_at: res.body.revoked_at, created_at: made.created_at, updated_at: res.body.updated_at })
    assert.equal('key' in res.body, false)
    const refusedKey = await server.request('GET', '/api/v1/subscriptions', { key: made.key })
    assert.deepEqual([refusedKey.status, refusedKey.body], [401, { error: 'Invalid API key specified.' }])
    const none = await admin('DELETE', '/api_keys/999999')
    assert.deepEqual([none.status, none.body], [404, NOT_FOUND])
  })
})

describe('payment methods', () => {
  test('create (201, active by default), read, list, change', async () => {
    const res = await admin('POST', '/payment_methods', { json: { payment_method: { name: 'Stripe card' } } })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, { id: res.body.id, name: 'Stripe card', active: true, ...timestamps(res.body) })
    const off = await admin('POST', '/payment_methods', { form: 'payment_method[name]=Cheque&payment_method[active]=0' })
    assert.equal(off.status, 201)
    assert.equal(off.body.active, false)
    assert.deepEqual((await admin('GET', `/payment_methods/${res.body.id}`)).body, res.body)
    const list = await admin('GET', `/payment_methods?after=${res.body.id - 1}&limit=2`)
    assert.deepEqual(list.body, { payment_methods: [res.body, off.body], next_after: null })
    const changed = await admin('PATCH', `/payment_methods/${res.body.id}`, { json: { payment_method: { active: false } } })
    assert.equal(changed.status, 200)
    assert.deepEqual(changed.body, { ...res.body, active: false, updated_at: changed.body.updated_at })
    const renamed = await admin('PUT', `/payment_methods/${res.body.id}`, { json: { payment_method: { name: 'Card', active: 'true' } } })
    assert.deepEqual(renamed.body, { ...res.body, name: 'Card', active: true, updated_at: renamed.body.updated_at })
    assert.deepEqual(await server.store.catalog.findPaymentMethod(res.body.id), renamed.body)
  })

  test('invalid input is a 422; unknown ids 404', async () => {
    const method = (await admin('POST', '/payment_methods', { json: { payment_method: { name: 'Card' } } })).body
    await refused('POST', '/payment_methods', { json: { payment_method: { active: true } } }, 422, { name: ["can't be blank"] })
    await refused('POST', '/payment_methods', { json: { payment_method: { name: 'X', active: 'maybe' } } }, 422, { active: ['is not included in the list'] })
    await refused('PATCH', `/payment_methods/${method.id}`, { json: { payment_method: { name: '' } } }, 422, { name: ["can't be blank"] })
    await refused('PATCH', '/payment_methods/999999', { json: { payment_method: { name: 'Y' } } }, 404, NOT_FOUND)
    await refused('GET', '/payment_methods/999999', {}, 404, NOT_FOUND)
  })
})

describe('payment sources', () => {
  test('create (201), read, list by user', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const method = (await admin('POST', '/payment_methods', { json: { payment_method: { name: 'Card' } } })).body
    const res = await admin('POST', '/payment_sources', {
      json: { payment_source: { user_id: alice.id, payment_method_id: method.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 12, year: 2030, gateway_reference: 'cus_123' } },
    })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, {
      id: res.body.id, user_id: alice.id, payment_method_id: method.id, kind: 'card', brand: 'visa', last_digits: '4242',
      month: 12, year: 2030, gateway_reference: 'cus_123', ...timestamps(res.body),
    })
    const minimal = await admin('POST', '/payment_sources', { form: `payment_source[user_id]=${alice.id}&payment_source[payment_method_id]=${method.id}` })
    assert.equal(minimal.status, 201)
    assert.deepEqual(minimal.body, {
      id: minimal.body.id, user_id: alice.id, payment_method_id: method.id, kind: null, brand: null, last_digits: null,
      month: null, year: null, gateway_reference: null, ...timestamps(minimal.body),
    })
    const bobs = await admin('POST', '/payment_sources', { json: { payment_source: { user_id: bob.id, payment_method_id: method.id } } })
    assert.deepEqual((await admin('GET', `/payment_sources/${res.body.id}`)).body, res.body)
    assert.deepEqual((await admin('GET', `/payment_sources?user_id=${alice.id}`)).body, { payment_sources: [res.body, minimal.body], next_after: null })
    assert.deepEqual((await admin('GET', `/payment_sources?user_id=${bob.id}`)).body, { payment_sources: [bobs.body], next_after: null })
    assert.deepEqual((await admin('GET', '/payment_sources?user_id=999999')).body, { payment_sources: [], next_after: null })
    // The source works for its owner on the customer API.
    const sub = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1, payment_method_id: method.id, payment_source_id: res.body.id } } })
    assert.equal(sub.status, 200)
  })

  test('invalid input is a 422', async () => {
    const alice = await seedUser(server.store)
    const method = (await admin('POST', '/payment_methods', { json: { payment_method: { name: 'Card' } } })).body
    await refused('POST', '/payment_sources', { json: { payment_source: { kind: 'card' } } }, 422, { user_id: ["can't be blank"], payment_method_id: ["can't be blank"] })
    await refused('POST', '/payment_sources', { json: { payment_source: { user_id: 999_999, payment_method_id: 999_999 } } }, 422, { user_id: ['is invalid'], payment_method_id: ['is invalid'] })
    await refused('POST', '/payment_sources', { json: { payment_source: { user_id: alice.id, payment_method_id: method.id, last_digits: '42424' } } }, 422, { last_digits: ['is too long (maximum is 4 characters)'] })
    await refused('POST', '/payment_sources', { json: { payment_source: { user_id: alice.id, payment_method_id: method.id, month: 'May' } } }, 422, { month: ['is not a number'] })
  })

  test('DELETE clears both payment ids from its subscriptions, each with subscription.payment_method_changed', async () => {
    const alice = await seedUser(server.store)
    const pay = await seedPayment(server.store, alice.id)
    const other = await seedPayment(server.store, alice.id)
    const one = await createSubscription(server, alice.key, { payment_method_id: pay.methodId, payment_source_id: pay.sourceId })
    const two = await createSubscription(server, alice.key, { payment_method_id: pay.methodId, payment_source_id: pay.sourceId })
    const untouched = await createSubscription(server, alice.key, { payment_method_id: other.methodId, payment_source_id: other.sourceId })
    const source = (await admin('GET', `/payment_sources/${pay.sourceId}`)).body
    const res = await admin('DELETE', `/payment_sources/${pay.sourceId}`)
    assert.deepEqual([res.status, res.body], [200, source])
    assert.equal(await server.store.catalog.findPaymentSource(pay.sourceId), undefined)
    for (const sub of [one, two]) {
      const shown = (await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })).body
      assert.deepEqual([shown.payment_method_id, shown.payment_source_id], [null, null])
      const events = await server.store.events.ofSubscription(sub.id, 0, 10)
      assert.equal(events[0]?.type, 'subscription.payment_method_changed')
      assert.deepEqual(events[0]?.data.object, shown)
    }
    const kept = await server.store.subscriptions.find(untouched.id)
    assert.deepEqual([kept?.payment_method_id, kept?.payment_source_id], [other.methodId, other.sourceId])
    assert.deepEqual((await server.store.events.ofSubscription(untouched.id, 0, 10)).map((e) => e.type), ['subscription.created'])
    const again = await admin('DELETE', `/payment_sources/${pay.sourceId}`)
    assert.deepEqual([again.status, again.body], [404, NOT_FOUND])
  })
})

describe('subscribables (the catalog)', () => {
  test('create (201, subscribable by default), read, list, change', async () => {
    const res = await admin('POST', '/subscribables', { json: { subscribable: { sku: 'COFFEE-1KG', name: 'Coffee beans 1 kg' } } })
    assert.equal(res.status, 201)
    assert.deepEqual(res.body, { id: res.body.id, sku: 'COFFEE-1KG', name: 'Coffee beans 1 kg', subscribable: true, prices: {}, discount_percent: '0', ...timestamps(res.body) })
    const off = await admin('POST', '/subscribables', { form: 'subscribable[sku]=GIFT-BOX&subscribable[name]=Gift+box&subscribable[subscribable]=false' })
    assert.equal(off.status, 201)
    assert.equal(off.body.subscribable, false)
    assert.deepEqual((await admin('GET', `/subscribables/${res.body.id}`)).body, res.body)
    assert.deepEqual((await admin('GET', `/subscribables?after=${res.body.id - 1}`)).body, { subscribables: [res.body, off.body], next_after: null })
    const changed = await admin('PATCH', `/subscribables/${res.body.id}`, { json: { subscribable: { name: 'Coffee 1 kg', subscribable: false } } })
    assert.equal(changed.status, 200)
    assert.deepEqual(changed.body, { ...res.body, name: 'Coffee 1 kg', subscribable: false, updated_at: changed.body.updated_at })
    // A catalog item that can no longer be subscribed to is refused on the customer API.
    const alice = await seedUser(server.store)
    const sub = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: res.body.id, quantity: 1 }] } } })
    assert.deepEqual([sub.status, sub.body], [422, { 'line_items.subscribable': ['The requested item cannot be subscribed'] }])
  })

  test('sku and name are required; sku is unique', async () => {
    await admin('POST', '/subscribables', { json: { subscribable: { sku: 'TEA-100', name: 'Tea' } } })
    const other = (await admin('POST', '/subscribables', { json: { subscribable: { sku: 'TEA-200', name: 'Tea' } } })).body
    await refused('POST', '/subscribables', { json: { subscribable: { sku: 'TEA-100', name: 'Tea again' } } }, 422, { sku: ['has already been taken'] })
    await refused('POST', '/subscribables', { json: { subscribable: { subscribable: true } } }, 422, { sku: ["can't be blank"], name: ["can't be blank"] })
    await refused('PATCH', `/subscribables/${other.id}`, { json: { subscribable: { sku: 'TEA-100' } } }, 422, { sku: ['has already been taken'] })
    await refused('PATCH', '/subscribables/999999', { json: { subscribable: { name: 'x' } } }, 404, NOT_FOUND)
    await refused('POST', '/subscribables', { json: { subscribable: { sku: 'X', name: 'Y', subscribable: 'perhaps' } } }, 422, { subscribable: ['is not included in the list'] })
    // Unwrapped, the field named like the root is taken for the root (Rails does not wrap then either).
    await refused('POST', '/subscribables', { json: { sku: 'X', name: 'Y', subscribable: 'perhaps' } }, 422, missing('subscribable'))
    const unwrapped = await admin('POST', '/subscribables', { json: { sku: 'UNWRAPPED-1', name: 'Unwrapped' } })
    assert.deepEqual([unwrapped.status, unwrapped.body.sku, unwrapped.body.subscribable], [201, 'UNWRAPPED-1', true])
  })

  test('DELETE removes its line items, each with line_item.deleted; other items stay', async () => {
    const alice = await seedUser(server.store)
    const doomed = await seedSubscribable(server.store)
    const kept = await seedSubscribable(server.store)
    const one = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: doomed, quantity: 2 }, { subscribable_id: kept, quantity: 1 }] })
    const two = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: doomed, quantity: 5 }] })
    const item = (await admin('GET', `/subscribables/${doomed}`)).body
    const res = await admin('DELETE', `/subscribables/${doomed}`)
    assert.deepEqual([res.status, res.body], [200, item])
    assert.equal(await server.store.catalog.findSubscribable(doomed), undefined)
    assert.deepEqual((await server.store.subscriptions.lineItems(one.id)).map((li) => li.subscribable_id), [kept])
    assert.deepEqual(await server.store.subscriptions.lineItems(two.id), [])
    const eventsOfOne = await server.store.events.ofSubscription(one.id, 0, 10)
    assert.deepEqual([eventsOfOne[0]?.type, eventsOfOne[0]?.data.object], ['line_item.deleted', one.line_items[0]])
    const eventsOfTwo = await server.store.events.ofSubscription(two.id, 0, 10)
    assert.deepEqual([eventsOfTwo[0]?.type, eventsOfTwo[0]?.data.object], ['line_item.deleted', two.line_items[0]])
    const again = await admin('DELETE', `/subscribables/${doomed}`)
    assert.deepEqual([again.status, again.body], [404, NOT_FOUND])
  })

  test('ids of deleted catalog items, payment sources and line items are never reused', async () => {
    const alice = await seedUser(server.store)
    const item = (await admin('POST', '/subscribables', { json: { subscribable: { sku: `REUSE-${counter++}`, name: 'x' } } })).body
    assert.equal((await admin('DELETE', `/subscribables/${item.id}`)).status, 200)
    const next = (await admin('POST', '/subscribables', { json: { subscribable: { sku: `REUSE-${counter++}`, name: 'y' } } })).body
    assert.ok(next.id > item.id, `subscribable ${next.id} reuses ${item.id}`)
    const method = (await admin('POST', '/payment_methods', { json: { payment_method: { name: 'Card' } } })).body
    const source = (await admin('POST', '/payment_sources', { json: { payment_source: { user_id: alice.id, payment_method_id: method.id } } })).body
    assert.equal((await admin('DELETE', `/payment_sources/${source.id}`)).status, 200)
    const nextSource = (await admin('POST', '/payment_sources', { json: { payment_source: { user_id: alice.id, payment_method_id: method.id } } })).body
    assert.ok(nextSource.id > source.id, `payment source ${nextSource.id} reuses ${source.id}`)
    const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: next.id, quantity: 1 }] })
    assert.equal((await admin('DELETE', `/subscribables/${next.id}`)).status, 200)
    const other = await seedSubscribable(server.store)
    const again = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: other, quantity: 1 }] })
    assert.ok(again.line_items[0].id > sub.line_items[0].id, 'a line item id was reused')
  })
})

describe('subscriptions', () => {
  test('GET /subscriptions filters by state, user_id and actionable_before, pages by id', async (t) => {
    // A server of its own, so the list holds exactly what this test made.
    const own = await startTestServer(t, { REPLENISH_TODAY: '2026-03-15' })
    const alice = await seedUser(own.store)
    const bob = await seedUser(own.store)
    const make = async (key: string, attrs: Record<string, unknown>) => (await own.request('POST', '/api/v1/subscriptions', { key, json: { subscription: attrs } })).body
    const a1 = await make(alice.key, { interval_length: 1, interval_units: 'week' }) // 2026-03-22
    const a2 = await make(alice.key, { interval_length: 1 }) // 2026-04-15
    const b1 = await make(bob.key, { interval_length: 1, actionable_date: '2026-03-20' })
    const b2 = await make(bob.key, { interval_length: 2 }) // 2026-05-15
    const canceled = (await own.request('POST', `/api/v1/subscriptions/${b2.id}/cancel`, { key: bob.key })).body
    const get = async (query: string) => {
      const res = await own.request('GET', `${A}/subscriptions${query}`, { key: ADMIN_TOKEN })
      assert.equal(res.status, 200, query)
      return res.body
    }
    assert.deepEqual(await get(''), { subscriptions: [a1, a2, b1, canceled], next_after: null })
    assert.deepEqual(await get('?limit=3'), { subscriptions: [a1, a2, b1], next_after: b1.id })
    assert.deepEqual(await get(`?after=${b1.id}&limit=3`), { subscriptions: [canceled], next_after: null })
    assert.deepEqual(await get('?state=canceled'), { subscriptions: [canceled], next_after: null })
    assert.deepEqual(await get('?state=active'), { subscriptions: [a1, a2, b1], next_after: null })
    assert.deepEqual(await get('?state=inactive'), { subscriptions: [], next_after: null })
    assert.deepEqual(await get(`?user_id=${alice.id}`), { subscriptions: [a1, a2], next_after: null })
    assert.deepEqual(await get(`?user_id=${bob.id}&state=active`), { subscriptions: [b1], next_after: null })
    assert.deepEqual(await get('?user_id=999999'), { subscriptions: [], next_after: null })
    assert.deepEqual(await get('?actionable_before=2026-04-15'), { subscriptions: [a1, b1], next_after: null })
    assert.deepEqual(await get('?actionable_before=2026-03-22'), { subscriptions: [b1], next_after: null })
    assert.deepEqual(await get(`?actionable_before=2026-12-31&user_id=${alice.id}&limit=1`), { subscriptions: [a1], next_after: a1.id })
    const one = await own.request('GET', `${A}/subscriptions/${a2.id}`, { key: ADMIN_TOKEN })
    assert.deepEqual([one.status, one.body], [200, a2])
    const none = await own.request('GET', `${A}/subscriptions/999999`, { key: ADMIN_TOKEN })
    assert.deepEqual([none.status, none.body], [404, NOT_FOUND])
  })
})

describe('events', () => {
  test('GET /events is a cursor feed, oldest first, filtered by ?type=', async (t) => {
    const own = await startTestServer(t, { REPLENISH_TODAY: '2026-03-15' })
    const alice = await seedUser(own.store)
    const sub = (await own.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1 } } })).body
    const skipped = (await own.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key })).body
    const canceled = (await own.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })).body
    const feed = async (query: string) => (await own.request('GET', `${A}/events${query}`, { key: ADMIN_TOKEN })).body
    const all = await feed('')
    assert.deepEqual(all.events.map((e: any) => [e.type, e.subscription_id, e.data.object]), [
      ['subscription.created', sub.id, sub], ['subscription.skipped', sub.id, skipped], ['subscription.canceled', sub.id, canceled],
    ])
    for (const e of all.events) {
      assert.deepEqual(Object.keys(e), ['id', 'type', 'created_at', 'subscription_id', 'actor', 'request_id', 'data'])
      assert.match(e.created_at, ISO_TIME)
    }
    assert.equal(all.next_after, null)
    const [first, second, third] = all.events
    assert.deepEqual(await feed('?limit=2'), { events: [first, second], next_after: second.id })
    assert.deepEqual(await feed(`?after=${second.id}`), { events: [third], next_after: null })
    assert.deepEqual(await feed(`?after=${third.id}`), { events: [], next_after: null })
    assert.deepEqual(await feed('?type=subscription.skipped'), { events: [second], next_after: null })
    // A type C10 does not list is C13's strict 422, naming it, not an empty page.
    const unknown = await own.request('GET', `${A}/events?type=nothing.happened`, { key: ADMIN_TOKEN })
    assert.deepEqual([unknown.status, unknown.body], [422, { type: ['is not included in the list'] }])
  })
})
