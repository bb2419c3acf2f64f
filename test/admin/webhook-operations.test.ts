/**
 * Webhook operations (issue 28 item 5, C18): the deliveries of every endpoint in one list, PATCH of
 * an endpoint (url, events, description, disabled: a disabled endpoint gets no new deliveries and
 * sends none, and sends what waited once enabled again), and a `webhook.test` event sent to one
 * endpoint alone. Real receivers on 127.0.0.1, real dispatchers, both backends.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts'
import { eventually, makeEvents, registerEndpoint, sleep, startDispatcher, startReceiver } from '../helpers/webhooks.ts'
import { testSql } from '../helpers/rows.ts'

const A = '/admin/api/v1'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const DISABLED = { error: 'This webhook endpoint is disabled; enable it (disabled: false) to send to it.' }

const admin = (server: TestServer, method: string, path: string, json?: unknown) =>
  server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })

const deliveriesOf = async (server: TestServer, endpointId: number): Promise<any[]> =>
  (await admin(server, 'GET', `/webhook_endpoints/${endpointId}/deliveries?limit=100`)).body.deliveries

test('GET /deliveries lists every endpoint\'s deliveries by id, by state, in keyset pages; a deleted endpoint\'s are not shown', async (t) => {
  const server = await startTestServer(t)
  const a = await registerEndpoint(server, 'http://127.0.0.1:9/a')
  const b = await registerEndpoint(server, 'http://127.0.0.1:9/b')
  const gone = await registerEndpoint(server, 'http://127.0.0.1:9/gone')
  await makeEvents(server, 3) // 3 deliveries for each endpoint, made in event order: a, b, gone, a, b, gone, …
  assert.equal((await admin(server, 'DELETE', `/webhook_endpoints/${gone.id}`)).status, 200)
  const rows = await testSql(server.store).all('SELECT id, endpoint_id FROM webhook_deliveries ORDER BY id')
  const ids = (endpoint: number): number[] => rows.filter((r) => Number(r['endpoint_id']) === endpoint).map((r) => Number(r['id']))
  const [a1, a2, a3] = ids(a.id) as [number, number, number]
  const [b1, b2, b3] = ids(b.id) as [number, number, number]
  // States set in the rows (what a dispatcher would have written): one failed, two delivered.
  await testSql(server.store).run("UPDATE webhook_deliveries SET state = 'failed', due_ms = NULL WHERE id = ?", a2)
  await testSql(server.store).run("UPDATE webhook_deliveries SET state = 'delivered', due_ms = NULL, delivered_ms = created_ms WHERE id IN (?, ?)", a3, b1)

  const all = await admin(server, 'GET', '/deliveries')
  assert.equal(all.status, 200)
  assert.deepEqual(all.body.deliveries.map((d: any) => d.id), [a1, b1, a2, b2, a3, b3].sort((x, y) => x - y))
  assert.equal(all.body.next_after, null)
  assert.deepEqual(Object.keys(all.body.deliveries[0]), ['id', 'event_id', 'webhook_endpoint_id', 'event_type', 'state', 'attempt_count', 'next_attempt_at', 'delivered_at', 'attempts', 'created_at', 'updated_at'])
  const byState = async (state: string): Promise<number[]> => (await admin(server, 'GET', `/deliveries?state=${state}`)).body.deliveries.map((d: any) => d.id)
  assert.deepEqual(await byState('failed'), [a2])
  assert.deepEqual(await byState('delivered'), [a3, b1].sort((x, y) => x - y))
  assert.deepEqual(await byState('pending'), [a1, b2, b3].sort((x, y) => x - y))

  const page1 = await admin(server, 'GET', '/deliveries?limit=4')
  assert.equal(page1.body.deliveries.length, 4)
  const page2 = await admin(server, 'GET', `/deliveries?limit=4&after=${page1.body.next_after}`)
  assert.deepEqual([...page1.body.deliveries, ...page2.body.deliveries].map((d: any) => d.id), all.body.deliveries.map((d: any) => d.id))
  assert.equal(page2.body.next_after, null)
  const pendingAfter = await admin(server, 'GET', `/deliveries?state=pending&after=${a1}&limit=1`)
  assert.deepEqual([pendingAfter.body.deliveries.map((d: any) => d.id), pendingAfter.body.next_after], [[Math.min(b2, b3)], Math.min(b2, b3)])
})

test('GET /deliveries refuses bad parameters with a 422 naming each (C13)', async (t) => {
  const server = await startTestServer(t)
  for (const [query, body] of [
    ['state=canceled', { state: ['is not included in the list'] }],
    ['state=Pending', { state: ['is not included in the list'] }],
    ['limit=0', { limit: ['must be between 1 and 100'] }],
    ['limit=101', { limit: ['must be between 1 and 100'] }],
    ['after=x', { after: ['is not a number'] }],
    ['after=1.5&limit=abc', { after: ['is not a number'], limit: ['is not a number'] }],
  ] as const) {
    const res = await admin(server, 'GET', `/deliveries?${query}`)
    assert.deepEqual([res.status, res.body], [422, body], query)
  }
  assert.equal((await admin(server, 'GET', '/deliveries?unknown=1')).status, 200, 'unknown names are ignored')
})

test('PATCH changes only the fields given; wrong ones are 422s that change nothing; an unknown endpoint is 404', async (t) => {
  const server = await startTestServer(t)
  const endpoint = await registerEndpoint(server, 'http://127.0.0.1:9/hooks', ['installment.created'])
  const { secret: _secret, ...created } = endpoint
  assert.equal(created.disabled, false)

  const moved = await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { url: 'https://shop.example.com/hooks' } })
  assert.equal(moved.status, 200, moved.text)
  assert.deepEqual(Object.keys(moved.body), ['id', 'url', 'events', 'description', 'disabled', 'created_at', 'updated_at'])
  assert.deepEqual({ ...moved.body, updated_at: created.updated_at }, { ...created, url: 'https://shop.example.com/hooks' })

  const more = await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { events: ['subscription.created', 'subscription.created', ''], description: 'Orders', disabled: true } })
  assert.deepEqual([more.body.url, more.body.events, more.body.description, more.body.disabled], ['https://shop.example.com/hooks', ['subscription.created'], 'Orders', true])
  const form = await server.request('PATCH', `${A}/webhook_endpoints/${endpoint.id}`, { key: ADMIN_TOKEN, form: 'webhook_endpoint[disabled]=false&webhook_endpoint[description]=' })
  assert.deepEqual([form.status, form.body.disabled, form.body.description], [200, false, null], form.text)
  assert.deepEqual((await admin(server, 'GET', `/webhook_endpoints/${endpoint.id}`)).body, form.body)

  const before = (await admin(server, 'GET', `/webhook_endpoints/${endpoint.id}`)).body
  for (const [attrs, errors] of [
    [{ url: 'ftp://shop.example.com/hooks' }, { url: ['is invalid'] }],
    [{ url: '' }, { url: ["can't be blank"] }],
    [{ events: [] }, { events: ["can't be blank"] }],
    [{ events: ['subscription.exploded'] }, { events: ['is not included in the list'] }],
    [{ disabled: 'maybe', url: 'nope' }, { url: ['is invalid'], disabled: ['is not included in the list'] }],
  ] as const) {
    const res = await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: attrs })
    assert.deepEqual([res.status, res.body], [422, errors], JSON.stringify(attrs))
  }
  assert.deepEqual((await admin(server, 'GET', `/webhook_endpoints/${endpoint.id}`)).body, before)
  assert.deepEqual((await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id + 100}`, { webhook_endpoint: { disabled: true } })).body, NOT_FOUND)
  assert.equal((await admin(server, 'DELETE', `/webhook_endpoints/${endpoint.id}`)).status, 200)
  assert.equal((await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { disabled: true } })).status, 404, 'a deleted endpoint')
})

test('a disabled endpoint gets no new deliveries and sends none, its pending ones included; enabled again, it sends what waited', async (t) => {
  const server = await startTestServer(t)
  let up = false
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = up ? 200 : 503
    res.end()
  })
  const other = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  const otherEndpoint = await registerEndpoint(server, other.url)
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0 }) // retries 0.8 s apart
  await makeEvents(server, 2)
  await rx.waitFor(2)
  const disabled = await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { disabled: true } })
  assert.equal(disabled.body.disabled, true)
  const seen = rx.received.length
  await makeEvents(server, 2) // while disabled
  await other.waitFor(4)
  up = true
  // Longer than two retries of the pending ones: none of them is posted while disabled.
  await sleep(2_000)
  assert.equal(rx.received.length, seen, 'nothing was sent to the disabled endpoint')
  assert.equal((await deliveriesOf(server, endpoint.id)).length, 2, 'the events made while disabled made no delivery for it')
  const pending = await deliveriesOf(server, endpoint.id)
  assert.deepEqual(pending.map((d) => d.state), ['pending', 'pending'])
  const [first] = pending
  assert.deepEqual((await admin(server, 'POST', `/deliveries/${first.id}/redeliver`)).body, DISABLED, 'not on request either')

  assert.equal((await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { disabled: false } })).body.disabled, false)
  const done = await eventually(() => deliveriesOf(server, endpoint.id), (list) => list.every((d) => d.state === 'delivered'))
  assert.equal(done.length, 2)
  await makeEvents(server, 1)
  await eventually(() => deliveriesOf(server, endpoint.id), (list) => list.length === 3 && list.every((d) => d.state === 'delivered'))
  assert.equal((await deliveriesOf(server, otherEndpoint.id)).length, 5)
})

test('a new url takes effect at once: later deliveries go to the new address only', async (t) => {
  const server = await startTestServer(t)
  const before = await startReceiver(t)
  const after = await startReceiver(t)
  const endpoint = await registerEndpoint(server, before.url)
  // The dispatcher's reads of the endpoints made slow: the PATCH is answered only once the
  // dispatcher has read the new url, so the events made right after it cannot go to the old one
  // (they did in CI on PostgreSQL when the answer came first).
  const webhooks = server.store.webhooks
  const slowWebhooks = Object.create(webhooks, {
    listEndpoints: { value: async (...args: Parameters<typeof webhooks.listEndpoints>) => {
      await sleep(300)
      return webhooks.listEndpoints(...args)
    } },
  })
  startDispatcher(server, { store: Object.create(server.store, { webhooks: { value: slowWebhooks } }) })
  await makeEvents(server, 1)
  await before.waitFor(1)
  assert.equal((await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { url: after.url } })).status, 200)
  await makeEvents(server, 2)
  await after.waitFor(2)
  await sleep(100)
  assert.deepEqual([before.received.length, after.received.length], [1, 2])
})

test('POST …/test delivers a webhook.test event to that endpoint alone and answers 200 with the delivery', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t, (_req, res) => {
    res.setHeader('content-type', 'application/json')
    res.end('{"received":true}')
  })
  const bystander = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url, ['installment.created'])
  await registerEndpoint(server, bystander.url, ['*'])
  startDispatcher(server)

  const res = await admin(server, 'POST', `/webhook_endpoints/${endpoint.id}/test`)
  assert.equal(res.status, 200, res.text)
  const delivery = res.body
  assert.deepEqual(
    [delivery.webhook_endpoint_id, delivery.event_type, delivery.state, delivery.attempt_count, delivery.next_attempt_at],
    [endpoint.id, 'webhook.test', 'delivered', 1, null],
  )
  assert.deepEqual([delivery.attempts[0].status_code, delivery.attempts[0].error, delivery.attempts[0].response_body, delivery.attempts[0].redelivery], [200, null, '{"received":true}', false])
  assert.equal(rx.received.length, 1)
  const event = JSON.parse(rx.received[0]!.body)
  assert.deepEqual(event, { id: delivery.event_id, type: 'webhook.test', created_at: event.created_at, subscription_id: null, actor: { type: 'staff', id: null }, request_id: event.request_id, data: { object: { webhook_endpoint_id: endpoint.id } } })
  assert.equal(rx.received[0]!.headers['webhook-id'], String(delivery.event_id))
  // The event is in the feed like any other, and was delivered nowhere else.
  const feed = (await admin(server, 'GET', '/events?type=webhook.test')).body.events
  assert.deepEqual(feed, [event])
  await sleep(300)
  assert.equal(bystander.received.length, 0)
  assert.equal(rx.received.length, 1, 'posted once: the dispatcher did not post it too')
  assert.deepEqual((await admin(server, 'GET', '/deliveries')).body.deliveries.map((d: any) => d.id), [delivery.id])
})

test('a test that fails is a pending delivery with its retry scheduled; a disabled endpoint is not tested; an unknown one is 404', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = 500
    res.end('not today')
  })
  const endpoint = await registerEndpoint(server, rx.url)
  const res = await admin(server, 'POST', `/webhook_endpoints/${endpoint.id}/test`)
  assert.equal(res.status, 200)
  assert.deepEqual([res.body.state, res.body.attempts[0].status_code, res.body.attempts[0].response_body], ['pending', 500, 'not today'])
  const retryIn = Date.parse(res.body.next_attempt_at) - Date.now()
  assert.ok(retryIn > 5_000 && retryIn <= 12_000, `the first retry of the default 10 s base, in ${retryIn} ms`)

  await admin(server, 'PATCH', `/webhook_endpoints/${endpoint.id}`, { webhook_endpoint: { disabled: true } })
  const refused = await admin(server, 'POST', `/webhook_endpoints/${endpoint.id}/test`)
  assert.deepEqual([refused.status, refused.body], [422, DISABLED])
  assert.equal(rx.received.length, 1)
  assert.equal((await admin(server, 'GET', '/events?type=webhook.test')).body.events.length, 1, 'no event for a refused test')
  assert.deepEqual((await admin(server, 'POST', `/webhook_endpoints/${endpoint.id + 100}/test`)).body, NOT_FOUND)
})
