/**
 * Issue 18 item 3, C13: POST /admin/api/v1/users/:id/erase, a right-to-erasure request. In one
 * unit: the user's subscriptions are canceled as the shop cancels (no notice; open installments
 * abandoned; events written), their keys revoked (and stop working at once), their email and
 * every address of theirs blanked; ids, installments and the events already written stay.
 * Erasing twice is a 200 that changes nothing. docs/admin-writes.md gives the reasons.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type RequestOptions, type TestServer,
} from '../helpers/server.ts'
import { tableNames, testSql } from '../helpers/rows.ts'
import { processAsOf } from '../processing/helpers.ts'
import { transitionHooks } from '../../src/api/kit/subscription-actions.ts'

const TODAY = '2026-03-15'
const A = '/admin/api/v1'
const INVALID_KEY = { error: 'Invalid API key specified.' }
// Text that belongs to the erased customer alone: after the erasure only events may hold it.
const STREET = '1 Erasure Lane'
const PHONE = '+44 20 7946 0018'
const GATEWAY = 'cus_ERASE_ME_0018'

const admin = (server: TestServer, method: string, path: string, options: RequestOptions = {}) =>
  server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })

async function ok(res: Promise<{ status: number; body: any; text: string }>, status = 200): Promise<any> {
  const r = await res
  assert.equal(r.status, status, r.text)
  return r.body
}

const address = (overrides: Record<string, unknown> = {}) => ({
  firstname: 'Erin', lastname: 'Example', company: null, address1: STREET, address2: null,
  city: 'Leeds', zipcode: 'LS1 1AA', state_name: null, country_iso: 'GB', phone: PHONE, ...overrides,
})

/**
 * Erin: two keys, a payment source with a gateway reference, and subscriptions of every kind: two
 * due ones that get installments (one fulfilled, one still pending), one due in 5 days (inside the
 * 30-day notice a customer's cancel would respect), one canceled already, one without addresses.
 * Bob is a bystander.
 */
async function setUp(server: TestServer) {
  const email = `erin-${Date.now()}@example.com`
  const erin = await ok(admin(server, 'POST', '/users', { json: { user: { email, external_id: 'shop-77' } } }), 201)
  const keys = [await ok(admin(server, 'POST', `/users/${erin.id}/api_keys`), 201), await ok(admin(server, 'POST', `/users/${erin.id}/api_keys`), 201)]
  const method = await ok(admin(server, 'POST', '/payment_methods', { json: { payment_method: { name: 'Card' } } }), 201)
  const source = await ok(admin(server, 'POST', '/payment_sources', {
    json: { payment_source: { user_id: erin.id, payment_method_id: method.id, brand: 'visa', last_digits: '4242', month: 1, year: 2030, gateway_reference: GATEWAY } },
  }), 201)
  const item = await seedSubscribable(server.store)
  const full = {
    user_id: erin.id, interval_length: 1, payment_method_id: method.id, payment_source_id: source.id,
    shipping_address_attributes: address(), billing_address_attributes: address({ firstname: 'Erin B.' }),
    line_items_attributes: [{ subscribable_id: item, quantity: 2 }],
  }
  const fulfilled = await ok(admin(server, 'POST', '/subscriptions', { json: { subscription: { ...full, actionable_date: '2026-03-01' } } }), 201)
  const pending = await ok(admin(server, 'POST', '/subscriptions', { json: { subscription: { ...full, actionable_date: '2026-03-02' } } }), 201)
  const soon = await ok(admin(server, 'POST', '/subscriptions', { json: { subscription: { ...full, actionable_date: '2026-03-20' } } }), 201)
  const canceled = await ok(admin(server, 'POST', '/subscriptions', { json: { subscription: { ...full, shipping_address_attributes: undefined } } }), 201)
  await ok(admin(server, 'POST', `/subscriptions/${canceled.id}/cancel`))
  const bare = await createSubscription(server, keys[0].key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  await processAsOf(server, TODAY)
  const installments = await ok(admin(server, 'GET', `/installments?user_id=${erin.id}&limit=100`))
  const byId = (subId: number) => installments.installments.find((i: any) => i.subscription_id === subId)
  assert.equal(installments.installments.length, 2)
  await ok(admin(server, 'POST', `/installments/${byId(fulfilled.id).id}/outcome`, { json: { outcome: { result: 'fulfilled', order_reference: 'R-1' } } }))
  // A customer's write with an Idempotency-Key: its answer (addresses included) is kept for replays.
  await ok(server.request('POST', `/api/v1/subscriptions/${soon.id}/skip`, { key: keys[1].key, headers: { 'idempotency-key': 'erin-skip' } }))
  // Both keys have been used, so both sit in the key cache.
  for (const k of keys) await ok(server.request('GET', '/api/v1/subscriptions', { key: k.key }))

  const bob = await seedUser(server.store)
  const bobs = await createSubscription(server, bob.key, { shipping_address_attributes: address({ address1: '2 Other Road', phone: null }) })
  return {
    email, erin, keys, source, bob, bobs,
    subs: { fulfilled, pending, soon, canceled, bare },
    installmentIds: { fulfilled: byId(fulfilled.id).id as number, pending: byId(pending.id).id as number },
  }
}

function rows(server: TestServer, sql: string, ...args: (string | number)[]): Promise<any[]> {
  return testSql(server.store).all(sql, ...args)
}

test('erase: canceled without notice, keys revoked at once, email and every address blanked; ids, installments and events kept', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const s = await setUp(server)
  const eventsBefore = await rows(server, 'SELECT * FROM events ORDER BY id')
  const bobsBefore = await ok(server.request('GET', `/api/v1/subscriptions/${s.bobs.id}`, { key: s.bob.key }))

  const res = await admin(server, 'POST', `/users/${s.erin.id}/erase`)
  assert.equal(res.status, 200, res.text)
  assert.deepEqual({ ...res.body, updated_at: '' }, { ...s.erin, email: null, updated_at: '' })
  assert.ok(res.body.updated_at >= s.erin.updated_at)
  assert.deepEqual(await ok(admin(server, 'GET', `/users/${s.erin.id}`)), res.body)

  // Keys: revoked, refused at once although both were cached; Bob's still works.
  for (const k of s.keys) {
    const refused = await server.request('GET', '/api/v1/subscriptions', { key: k.key })
    assert.deepEqual([refused.status, refused.body], [401, INVALID_KEY])
  }
  const keys = await ok(admin(server, 'GET', `/users/${s.erin.id}/api_keys`))
  assert.deepEqual(keys.api_keys.map((k: any) => [k.id, typeof k.revoked_at]), s.keys.map((k) => [k.id, 'string']))
  assert.deepEqual(await ok(server.request('GET', `/api/v1/subscriptions/${s.bobs.id}`, { key: s.bob.key })), bobsBefore)

  // Subscriptions: all canceled (the one inside the notice too), no address, ids and the rest kept.
  for (const [name, before] of Object.entries(s.subs)) {
    const after = await ok(admin(server, 'GET', `/subscriptions/${before.id}`))
    assert.deepEqual([after.state, after.actionable_date, after.shipping_address, after.billing_address], ['canceled', null, null, null], name)
    assert.deepEqual([after.user_id, after.payment_source_id, after.line_items.map((li: any) => li.id)], [s.erin.id, before.payment_source_id, before.line_items.map((li: any) => li.id)], name)
  }
  // Installments: kept, the open one abandoned (C9), neither with an address.
  const installments = await ok(admin(server, 'GET', `/installments?user_id=${s.erin.id}&limit=100`))
  assert.deepEqual(
    installments.installments.map((i: any) => [i.id, i.state, i.shipping_address, i.billing_address, i.user.email]),
    [[s.installmentIds.fulfilled, 'fulfilled', null, null, null], [s.installmentIds.pending, 'abandoned', null, null, null]],
  )
  // The payment source stays (its id is in the history), without the gateway's handle on the card.
  const source = await ok(admin(server, 'GET', `/payment_sources/${s.source.id}`))
  assert.deepEqual({ ...source, updated_at: '' }, { ...s.source, gateway_reference: null, updated_at: '' })

  // Events: the ones written before are untouched; each change wrote the event an update or a cancel writes.
  const eventsAfter = await rows(server, 'SELECT * FROM events ORDER BY id')
  assert.deepEqual(eventsAfter.slice(0, eventsBefore.length), eventsBefore)
  const added = eventsAfter.slice(eventsBefore.length).map((e) => [e.subscription_id, e.type])
  const { fulfilled, pending, soon, canceled, bare } = s.subs
  const addressEvents = (id: number) => [[id, 'subscription.shipping_address_changed'], [id, 'subscription.billing_address_changed']]
  assert.deepEqual(added, [
    ...addressEvents(fulfilled.id), [fulfilled.id, 'subscription.canceled'],
    ...addressEvents(pending.id), [pending.id, 'installment.abandoned'], [pending.id, 'subscription.canceled'],
    ...addressEvents(soon.id), [soon.id, 'subscription.canceled'],
    [canceled.id, 'subscription.billing_address_changed'],
    [bare.id, 'subscription.canceled'],
  ])
  for (const e of eventsAfter.slice(eventsBefore.length)) assert.ok(!e.data.includes(STREET), `${e.type} holds no address`)

  // Outside the events written before the erasure, nothing holds Erin's email, address, phone or gateway reference.
  const tables = (await tableNames(server.store)).filter((name) => name !== 'events')
  assert.ok(tables.includes('idempotency_keys') && tables.includes('installments'))
  for (const table of tables) {
    const text = JSON.stringify(await rows(server, `SELECT * FROM ${table}`))
    for (const secret of [s.email, STREET, PHONE, GATEWAY]) assert.ok(!text.includes(secret), `${table} still holds ${secret}`)
  }
  assert.ok(JSON.stringify(await rows(server, 'SELECT * FROM subscriptions WHERE id = ?', s.bobs.id)).includes('2 Other Road'), 'Bob keeps his address')

  // Twice: 200, the same user, and nothing changes.
  const before = await snapshot(server.store)
  const again = await admin(server, 'POST', `/users/${s.erin.id}/erase`)
  assert.deepEqual([again.status, again.body], [200, res.body])
  assert.equal(await snapshot(server.store), before)
})

test('erase is one unit: a failure part way changes nothing, and the keys still work', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const s = await setUp(server)
  const original = transitionHooks.onCanceled
  // The cancel of Erin's second subscription fails, after the first one's changes were written.
  transitionHooks.onCanceled = async (tx, sub) => {
    if (sub.id === s.subs.pending.id) throw new Error('the second cancel fails')
    return original?.(tx, sub)
  }
  t.after(() => {
    transitionHooks.onCanceled = original
  })
  const before = await snapshot(server.store)
  const res = await admin(server, 'POST', `/users/${s.erin.id}/erase`)
  assert.deepEqual([res.status, Object.keys(res.body)], [500, ['error', 'request_id']])
  assert.equal(await snapshot(server.store), before)
  for (const k of s.keys) assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: k.key })).status, 200)
})

test('erase of an unknown user is 404; a user with nothing but a row is erased to a null email', async (t) => {
  const server = await startTestServer(t)
  const missing = await admin(server, 'POST', '/users/999999/erase')
  assert.deepEqual([missing.status, missing.body], [404, { error: 'The resource you were looking for could not be found.' }])
  const lone = await ok(admin(server, 'POST', '/users', { json: { user: { email: 'lone@example.com' } } }), 201)
  const erased = await ok(admin(server, 'POST', `/users/${lone.id}/erase`))
  assert.equal(erased.email, null)
  // Its address is free again, and many erased users (many null emails) live side by side.
  const next = await ok(admin(server, 'POST', '/users', { json: { user: { email: 'lone@example.com' } } }), 201)
  assert.equal((await ok(admin(server, 'POST', `/users/${next.id}/erase`))).email, null)
})
