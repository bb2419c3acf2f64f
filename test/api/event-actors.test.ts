/**
 * C18 "Who did it": every event written carries `actor: {type, id}` and `request_id`, whoever made
 * it (a customer's key, the shop's token or the configured one, the portal, the processor), and
 * shows them wherever events appear: the customer's events list, the admin feed, a subscription's
 * history in the console, and the webhook body. Events written before (no actor stored) answer
 * `actor: null` and `request_id: null` everywhere.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, seedSubscribable, startTestServer, type TestServer } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import { startDispatcher, startReceiver } from '../helpers/webhooks.ts'
import { processAsOf } from '../processing/helpers.ts'
import { asPortal, signIn } from '../web/portal-client.ts'

const TODAY = '2026-03-02'

async function setUp(t: TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const admin = async (method: string, path: string, json?: unknown, key = ADMIN_TOKEN): Promise<any> => {
    const res = await server.request(method, `/admin/api/v1${path}`, { key, ...(json === undefined ? {} : { json }) })
    assert.ok(res.status < 300, `${method} ${path} → ${res.status} ${res.text}`)
    return res.body
  }
  const user = await admin('POST', '/users', { user: { email: 'ada@example.com' } })
  await admin('POST', `/users/${user.id}/api_keys`) // key 1: not the one used, so the id is the key's and not the user's
  const apiKey = await admin('POST', `/users/${user.id}/api_keys`)
  const item = await seedSubscribable(server.store)
  return { server, admin, user, apiKey: apiKey as { id: number; key: string }, item }
}

/** The newest event of a subscription, as the admin feed shows it. */
async function newestEvent(server: TestServer, subscriptionId: number): Promise<any> {
  const feed = await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })
  return feed.body.events.filter((e: any) => e.subscription_id === subscriptionId).at(-1)
}

test('a customer key, the shop token (configured and stored) and the portal each sign their events, with the request id', async (t) => {
  const { server, admin, user, apiKey, item } = await setUp(t)
  const created = await server.request('POST', '/api/v1/subscriptions', {
    key: apiKey.key, headers: { 'x-request-id': 'shop-checkout-42' }, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } },
  })
  assert.equal(created.status, 200, created.text)
  const sub = created.body.id as number
  assert.deepEqual(pick(await newestEvent(server, sub)), ['subscription.created', { type: 'customer', id: apiKey.id }, 'shop-checkout-42'])

  // Without an X-Request-Id the request still has one: the id the answer carries (C1).
  const skipped = await server.request('POST', `/api/v1/subscriptions/${sub}/skip`, { key: apiKey.key })
  const generated = skipped.headers.get('x-request-id')
  assert.match(generated ?? '', /^[0-9a-f-]{36}$/)
  assert.deepEqual(pick(await newestEvent(server, sub)), ['subscription.skipped', { type: 'customer', id: apiKey.id }, generated])

  await server.request('POST', `/admin/api/v1/subscriptions/${sub}/pause`, { key: ADMIN_TOKEN, headers: { 'x-request-id': 'console-1' } })
  assert.deepEqual(pick(await newestEvent(server, sub)), ['subscription.paused', { type: 'staff', id: null }, 'console-1'])

  const stored = await admin('POST', '/admin_tokens', { admin_token: { scope: 'admin', label: 'support' } })
  await server.request('POST', `/admin/api/v1/subscriptions/${sub}/resume`, { key: stored.token, headers: { 'x-request-id': 'console-2' } })
  assert.deepEqual(pick(await newestEvent(server, sub)), ['subscription.resumed', { type: 'staff', id: stored.id }, 'console-2'])

  const signed = await signIn(server, user.id)
  const portal = await server.request('PATCH', `/api/v1/subscriptions/${sub}`, {
    headers: { ...asPortal(signed), 'x-request-id': 'portal-7' }, json: { subscription: { interval_length: 2 } },
  })
  assert.equal(portal.status, 200, portal.text)
  assert.deepEqual(pick(await newestEvent(server, sub)), ['subscription.frequency_changed', { type: 'portal', id: user.id }, 'portal-7'])

  // Line item events, and the events a change to the catalog writes, are signed the same way.
  const line = await server.request('POST', `/api/v1/subscriptions/${sub}/line_items`, { key: apiKey.key, headers: { 'x-request-id': 'li-1' }, json: { subscription_line_item: { subscribable_id: item, quantity: 2 } } })
  assert.deepEqual(pick(await newestEvent(server, sub)), ['line_item.created', { type: 'customer', id: apiKey.id }, 'li-1'])
  await server.request('DELETE', `/admin/api/v1/subscribables/${item}`, { key: stored.token, headers: { 'x-request-id': 'catalog-1' } })
  assert.deepEqual(pick(await newestEvent(server, sub)), ['line_item.deleted', { type: 'staff', id: stored.id }, 'catalog-1'])
  assert.equal(line.status, 200)
})

test('the processor signs what it writes (its bulk installment.created too), with no request id', async (t) => {
  const { server, apiKey, item } = await setUp(t)
  const subscribe = async (attrs: Record<string, unknown>) =>
    (await server.request('POST', '/api/v1/subscriptions', { key: apiKey.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }], ...attrs } } })).body.id as number
  const due = await subscribe({ actionable_date: TODAY })
  const ending = await subscribe({ actionable_date: TODAY, end_date: '2026-03-10' })
  await processAsOf(server, TODAY)
  await processAsOf(server, '2026-03-11')
  const feed = (await server.request('GET', '/admin/api/v1/events?limit=100', { key: ADMIN_TOKEN })).body.events as any[]
  const byProcessor = feed.filter((e) => e.actor?.type === 'processor')
  assert.deepEqual(byProcessor.map((e) => [e.type, e.subscription_id]).sort(), [
    ['installment.created', due], ['installment.created', ending], ['subscription.ended', ending],
  ].sort())
  for (const e of byProcessor) assert.deepEqual([e.actor, e.request_id], [{ type: 'processor', id: null }, null])
  // Nothing else was signed by the processor, and nothing is unsigned.
  assert.deepEqual(feed.filter((e) => e.actor === null), [])
})

test('the customer events list, the console history and the webhook body show the same actor and request id as the feed', async (t) => {
  const { server, apiKey, item } = await setUp(t)
  const receiver = await startReceiver(t)
  await server.request('POST', '/admin/api/v1/webhook_endpoints', { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: receiver.url, events: ['*'] } } })
  const created = await server.request('POST', '/api/v1/subscriptions', { key: apiKey.key, headers: { 'x-request-id': 'req-a' }, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } })
  const sub = created.body.id as number
  await server.request('POST', `/admin/api/v1/subscriptions/${sub}/cancel`, { key: ADMIN_TOKEN, headers: { 'x-request-id': 'req-b' } })
  const feed = (await server.request('GET', '/admin/api/v1/events', { key: ADMIN_TOKEN })).body.events as any[]
  assert.deepEqual(feed.map(pick), [
    ['subscription.created', { type: 'customer', id: apiKey.id }, 'req-a'],
    ['subscription.canceled', { type: 'staff', id: null }, 'req-b'],
  ])
  const customers = (await server.request('GET', `/api/v1/subscriptions/${sub}/events`, { key: apiKey.key })).body.events
  assert.deepEqual(customers, [...feed].reverse())
  const history = (await server.request('GET', `/admin/api/v1/subscriptions/${sub}/events`, { key: ADMIN_TOKEN })).body.events
  assert.deepEqual(history.map(pick), [...feed].reverse().map(pick))
  startDispatcher(server)
  const bodies = (await receiver.waitFor(2)).map((r) => r.body).sort()
  assert.deepEqual(bodies, feed.map((e) => JSON.stringify(e)).sort(), 'a webhook posts the event exactly as the feed renders it')
})

test('events written before actors were recorded answer actor null and request_id null, in the feed and in a webhook', async (t) => {
  const { server, apiKey, item } = await setUp(t)
  const receiver = await startReceiver(t)
  await server.request('POST', '/admin/api/v1/webhook_endpoints', { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: receiver.url, events: ['*'] } } })
  const created = await server.request('POST', '/api/v1/subscriptions', { key: apiKey.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } })
  // As migration 14 leaves the events of before it.
  await testSql(server.store).run('UPDATE events SET actor_type = NULL, actor_id = NULL, request_id = NULL')
  const [event] = (await server.request('GET', '/admin/api/v1/events', { key: ADMIN_TOKEN })).body.events
  assert.deepEqual(pick(event), ['subscription.created', null, null])
  assert.equal(event.subscription_id, created.body.id)
  const customers = (await server.request('GET', `/api/v1/subscriptions/${created.body.id}/events`, { key: apiKey.key })).body.events
  assert.deepEqual(customers, [event])
  startDispatcher(server)
  const [delivered] = await receiver.waitFor(1)
  assert.equal(delivered?.body, JSON.stringify(event))
})

const pick = (e: any): unknown[] => [e.type, e.actor, e.request_id]
