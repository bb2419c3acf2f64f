/**
 * Issue 25: what a client sends is bounded and checked before it reaches SQL, so both backends
 * answer alike. A NUL character in any text field is a 422 naming the field (PostgreSQL's text
 * cannot hold it: a 500 there, a 201 on SQLite); an integer past what a column or the page query
 * holds is a 422, an empty page or a 404, never a 500 (PostgreSQL's integer overflowed).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedPayment, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { processAsOf } from '../processing/helpers.ts'

const NUL = 'a\u0000b'
const NUL_MESSAGE = ['must not contain a NUL character']
const TODAY = '2026-01-15'
const ADDRESS = { firstname: 'Ada', address1: '1 Main St', city: 'Paris', zipcode: '75001', country_iso: 'FR' }

async function setup(t: import('node:test').TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const user = await seedUser(server.store)
  const pay = await seedPayment(server.store, user.id)
  const item = (await adminPost(server, '/subscribables', { subscribable: { sku: 'SKU-1', name: 'Coffee' } })).body.id as number
  const sub = await createSubscription(server, user.key, { actionable_date: TODAY, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  return { server, user, pay, item, sub }
}

const adminPost = (server: TestServer, path: string, json: unknown, headers?: Record<string, string>) =>
  server.request('POST', `/admin/api/v1${path}`, { key: ADMIN_TOKEN, json, ...(headers ? { headers } : {}) })

test('a NUL character in any text field is a 422 naming the field, and nothing is written', async (t) => {
  const { server, user, pay, item, sub } = await setup(t)
  await processAsOf(server, TODAY)
  const installment = (await server.store.installments.listOfSubscription(sub.id, 0, 1))[0]!
  const endpoint = (await adminPost(server, '/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hook', events: ['*'] } })).body
  const before = await snapshot(server.store)
  const cases: [string, string, string, unknown, Record<string, string[]>][] = [
    ['POST', '/admin/api/v1/users', ADMIN_TOKEN, { user: { email: `x${NUL}@example.com` } }, { email: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/users', ADMIN_TOKEN, { user: { email: 'new@example.com', external_id: NUL } }, { external_id: NUL_MESSAGE }],
    ['PATCH', `/admin/api/v1/users/${user.id}`, ADMIN_TOKEN, { user: { external_id: NUL } }, { external_id: NUL_MESSAGE }],
    ['POST', `/admin/api/v1/users/${user.id}/api_keys`, ADMIN_TOKEN, { api_key: { key: `spree-key-${NUL}-0123456789` } }, { key: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/subscribables', ADMIN_TOKEN, { subscribable: { sku: 'SKU-2', name: NUL } }, { name: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/subscribables', ADMIN_TOKEN, { subscribable: { sku: NUL, name: 'Tea' } }, { sku: NUL_MESSAGE }],
    ['PATCH', `/admin/api/v1/subscribables/${item}`, ADMIN_TOKEN, { subscribable: { name: NUL } }, { name: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/payment_methods', ADMIN_TOKEN, { payment_method: { name: NUL } }, { name: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/payment_sources', ADMIN_TOKEN, { payment_source: { user_id: user.id, payment_method_id: pay.methodId, brand: NUL } }, { brand: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/webhook_endpoints', ADMIN_TOKEN, { webhook_endpoint: { url: 'http://127.0.0.1:9/hook', events: ['*'], description: NUL } }, { description: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/webhook_endpoints', ADMIN_TOKEN, { webhook_endpoint: { url: `http://127.0.0.1:9/${NUL}`, events: ['*'] } }, { url: NUL_MESSAGE }],
    ['POST', `/admin/api/v1/users/${user.id}/portal_sessions`, ADMIN_TOKEN, { portal_session: { return_url: `https://shop.example/${NUL}` } }, { return_url: NUL_MESSAGE }],
    ['POST', '/admin/api/v1/admin_tokens', ADMIN_TOKEN, { admin_token: { scope: 'read', label: NUL } }, { label: NUL_MESSAGE }],
    ['POST', `/admin/api/v1/installments/${installment.id}/outcome`, ADMIN_TOKEN, { outcome: { result: 'fulfilled', order_reference: NUL } }, { order_reference: NUL_MESSAGE }],
    ['POST', `/admin/api/v1/installments/${installment.id}/outcome`, ADMIN_TOKEN, { outcome: { result: 'failed', message: NUL } }, { message: NUL_MESSAGE }],
    ['POST', '/api/v1/subscriptions', user.key, { subscription: { interval_length: 1, shipping_address_attributes: { ...ADDRESS, firstname: NUL } } }, { 'shipping_address.firstname': NUL_MESSAGE }],
    ['PATCH', `/api/v1/subscriptions/${sub.id}`, user.key, { subscription: { billing_address_attributes: { ...ADDRESS, company: NUL } } }, { 'billing_address.company': NUL_MESSAGE }],
    ['POST', '/admin/api/v1/subscriptions', ADMIN_TOKEN, { subscription: { user_id: user.id, interval_length: 1, shipping_address_attributes: { ...ADDRESS, city: NUL } } }, { 'shipping_address.city': NUL_MESSAGE }],
  ]
  for (const [method, path, key, json, errors] of cases) {
    const res = await server.request(method, path, { key, json })
    assert.deepEqual([res.status, res.body], [422, errors], `${method} ${path} ${JSON.stringify(json)}`)
  }
  // A form body carries the same character (%00).
  const form = await server.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, form: 'user[email]=f%00@example.com' })
  assert.deepEqual([form.status, form.body], [422, { email: NUL_MESSAGE }])
  // In each of the four languages.
  const es = await adminPost(server, '/payment_methods', { payment_method: { name: NUL } }, { 'accept-language': 'es' })
  assert.deepEqual([es.status, es.body], [422, { name: ['no debe contener el carácter NUL'] }])
  // A bulk outcome entry answers the single outcome's 422.
  const bulk = await adminPost(server, '/installments/outcomes', { outcomes: [{ installment_id: installment.id, result: 'failed', message: NUL }] })
  assert.deepEqual(bulk.body.results, [{ installment_id: installment.id, status: 422, errors: { message: NUL_MESSAGE } }])
  assert.equal(endpoint.description, null)
  assert.equal(await snapshot(server.store), before)
})

test('a NUL character in an admin list\'s text filter is a 422 naming it (C13 strict query), and in an import line names its field', async (t) => {
  const { server } = await setup(t)
  for (const [path, name] of [['/users?email=a%00b', 'email'], ['/users?external_id=%00', 'external_id']] as const) {
    const res = await server.request('GET', `/admin/api/v1${path}`, { key: ADMIN_TOKEN })
    assert.deepEqual([res.status, res.body], [422, { [name]: NUL_MESSAGE }], path)
  }
  const before = await snapshot(server.store)
  const lines: [string, string][] = [
    ['{"type":"user","id":900,"email":"nul@example.com","external_id":"a\\u0000b"}', 'external_id'],
    ['{"type":"payment_method","id":900,"name":"Card\\u0000"}', 'name'],
    ['{"type":"subscribable","id":900,"sku":"S\\u0000","name":"n"}', 'sku'],
    ['{"type":"api_key","user_id":1,"key":"spree-key-\\u0000-0123456789"}', 'key'],
  ]
  for (const [line, field] of lines) {
    const res = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: line, headers: { 'content-type': 'application/x-ndjson' } })
    assert.equal(res.status, 422, `${line}: ${res.text}`)
    assert.deepEqual(res.body.errors, { [field]: NUL_MESSAGE }, line)
  }
  assert.equal(await snapshot(server.store), before)
})

test('a page far past the end is an empty page on every customer list (the page query\'s offset is bounded)', async (t) => {
  const { server, user, sub } = await setup(t)
  for (const path of [`/api/v1/subscriptions/${sub.id}/events`, `/api/v1/subscriptions/${sub.id}/installments`, '/api/v1/subscriptions']) {
    for (const query of ['page=2147483647', 'page=2147483647&per_page=100', 'page=99999999999999999999&per_page=100']) {
      const res = await server.request('GET', `${path}?${query}`, { key: user.key })
      assert.equal(res.status, 200, `${path}?${query}: ${res.text}`)
      const key = Object.keys(res.body)[0] as string
      assert.deepEqual([res.body[key], res.body.count, res.body.current_page], [[], 0, 1_000_000_000], `${path}?${query}`)
    }
  }
})

test('ids past every column\'s range: a path id is a 404, a body id or counter a 422, a list cursor an empty list or a 422', async (t) => {
  const { server, user, pay } = await setup(t)
  const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
  for (const id of ['2147483648', '9223372036854775807', '9223372036854775808', '99999999999999999999']) {
    for (const [path, key] of [[`/api/v1/subscriptions/${id}`, user.key], [`/api/v1/line_items/${id}`, user.key], [`/admin/api/v1/users/${id}`, ADMIN_TOKEN], [`/admin/api/v1/installments/${id}`, ADMIN_TOKEN]] as const) {
      const res = await server.request('GET', path, { key })
      assert.deepEqual([res.status, res.body], [404, NOT_FOUND], path)
    }
    const events = await server.request('GET', `/api/v1/subscriptions/${id}/events?page=2147483647`, { key: user.key })
    assert.equal(events.status, 404, events.text)
  }
  const far = await server.request('GET', '/admin/api/v1/users?after=999999999999999', { key: ADMIN_TOKEN })
  assert.deepEqual([far.status, far.body], [200, { users: [], next_after: null }])
  const past = await server.request('GET', '/admin/api/v1/installments?subscription_id=99999999999999999999&after=9223372036854775808', { key: ADMIN_TOKEN })
  assert.deepEqual([past.status, past.body], [422, { after: ['is not a number'], subscription_id: ['is not a number'] }])
  const max = ['must be less than or equal to 2147483647']
  const source = await server.request('POST', '/admin/api/v1/payment_sources', {
    key: ADMIN_TOKEN, json: { payment_source: { user_id: user.id, payment_method_id: pay.methodId, month: 99999999999, year: '2147483648' } },
  })
  assert.deepEqual([source.status, source.body], [422, { month: max, year: max }])
  const negative = await server.request('POST', '/admin/api/v1/payment_sources', { key: ADMIN_TOKEN, json: { payment_source: { user_id: user.id, payment_method_id: pay.methodId, month: -1 } } })
  assert.deepEqual([negative.status, negative.body], [422, { month: ['must be greater than or equal to 0'] }])
  const counters = await server.request('POST', '/admin/api/v1/subscriptions', { key: ADMIN_TOKEN, json: { subscription: { user_id: user.id, interval_length: 1, skip_count: 2147483648 } } })
  assert.deepEqual([counters.status, counters.body], [422, { skip_count: max }])
  const before = await snapshot(server.store)
  for (const [line, errors] of [
    ['{"type":"payment_source","id":900,"user_id":1,"payment_method_id":1,"month":99999999999}', { month: max }],
    ['{"type":"subscription","id":900,"user_id":1,"interval_length":1,"actionable_date":"2026-02-01","successive_skip_count":1e300}', { successive_skip_count: max }],
  ] as const) {
    const res = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: line, headers: { 'content-type': 'application/x-ndjson' } })
    assert.deepEqual([res.status, res.body.errors], [422, errors], line)
  }
  assert.equal(await snapshot(server.store), before)
})
