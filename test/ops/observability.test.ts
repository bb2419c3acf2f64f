import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, request, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { startServe, testDb } from '../cli/harness.ts'
import type { StoreKind } from '../../src/store/api.ts'

const JSON_TYPE = 'application/json; charset=utf-8'
/** Why /readyz refuses once the store's connections are closed, in each backend's words. */
const CLOSED: Record<StoreKind, string> = { sqlite: 'database did not answer', postgres: 'the database connection pool is closed' }

test('GET /healthz answers 200 while the process is up, without authentication', async (t) => {
  const server = await startTestServer(t)
  const res = await server.request('GET', '/healthz', { headers: { 'x-request-id': 'probe-1' } })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { status: 'ok' })
  assert.equal(res.headers.get('content-type'), JSON_TYPE)
  assert.equal(res.headers.get('x-request-id'), 'probe-1')
})

test('GET /readyz answers 200 while the database answers and 503 once it does not', async (t) => {
  const server = await startTestServer(t)
  const ready = await server.request('GET', '/readyz')
  assert.equal(ready.status, 200)
  assert.deepEqual(ready.body, { status: 'ready', oldest_overdue_actionable_date: null })
  await server.store.close() // its connections are gone: every query fails from now on
  const gone = await server.request('GET', '/readyz')
  assert.equal(gone.status, 503)
  assert.deepEqual(gone.body, { status: 'not ready', reason: CLOSED[server.store.kind] })
  assert.equal(gone.headers.get('content-type'), JSON_TYPE)
  // The process itself is still up.
  assert.equal((await server.request('GET', '/healthz')).status, 200)
})

test('/metrics needs the admin token: none, a wrong one or a customer key is a 401', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const none = await server.request('GET', '/metrics')
  assert.equal(none.status, 401)
  assert.deepEqual(none.body, { error: 'You must specify an admin token.' })
  assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="replenish"')
  assert.equal(none.headers.get('content-type'), JSON_TYPE)
  for (const key of ['not-the-token', user.key]) {
    const wrong = await server.request('GET', '/metrics', { key })
    assert.equal(wrong.status, 401)
    assert.deepEqual(wrong.body, { error: 'Invalid admin token.' })
  }
  const ok = await server.request('GET', '/metrics', { key: ADMIN_TOKEN })
  assert.equal(ok.status, 200)
  assert.equal(ok.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
})

test('with REPLENISH_METRICS_PUBLIC=1 /metrics needs no token', async (t) => {
  const server = await startTestServer(t, { REPLENISH_METRICS_PUBLIC: '1' })
  const res = await server.request('GET', '/metrics')
  assert.equal(res.status, 200)
  assert.match(res.text, /^replenish_database_size_bytes \d+$/m)
})

test('serve logs one JSON line per request after the listening line, and never a key, token, secret or body', async (t) => {
  const db = await testDb(t)
  const server = await startServe(t, { REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN })
  const customerKey = 'imported-key-SECRET-4242424242'
  const user = await request(server.url, 'POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'ann@example.com' } } })
  await request(server.url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN, json: { api_key: { key: customerKey } } })
  const made = await request(server.url, 'POST', '/admin/api/v1/users/1/api_keys', { key: ADMIN_TOKEN })
  const minted = made.body.key as string
  const sub = await request(server.url, 'POST', '/api/v1/subscriptions?note=QUERY-SECRET', {
    key: customerKey,
    headers: { 'x-request-id': 'trace-abc' },
    json: { subscription: { interval_length: 2, shipping_address_attributes: { firstname: 'BODY-SECRET' } } },
  })
  await request(server.url, 'GET', `/api/v1/subscriptions/${sub.body.id ?? 1}`, { key: minted })
  await request(server.url, 'GET', '/api/v1/subscriptions', { key: 'rpl_wrong-key-SECRET' })
  await request(server.url, 'GET', '/metrics', { key: 'wrong-admin-SECRET' })
  assert.equal(await server.stop(), 0)

  const [first, ...rest] = server.stdout.filter((l) => l.length > 0)
  assert.equal(first, server.stdout[0])
  assert.match(first as string, /^replenish listening on http:\/\/127\.0\.0\.1:\d+$/)
  const entries = rest.map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.equal(entries.length, 7)
  for (const e of entries) {
    assert.deepEqual(Object.keys(e), ['time', 'method', 'route', 'status', 'ms', 'request_id', 'user_id'])
    assert.match(e['time'] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.equal(typeof e['ms'], 'number')
    assert.match(e['request_id'] as string, /^[\w.:@-]+$/)
  }
  const summary = entries.map((e) => [e['method'], e['route'], e['status'], e['user_id']])
  assert.deepEqual(summary, [
    ['POST', '/admin/api/v1/users', 201, null],
    ['POST', '/admin/api/v1/users/:id/api_keys', 201, null],
    ['POST', '/admin/api/v1/users/:id/api_keys', 201, null],
    ['POST', '/api/v1/subscriptions', 422, 1],
    ['GET', '/api/v1/subscriptions/:id', 404, 1],
    ['GET', '/api/v1/subscriptions', 401, null],
    ['GET', '/metrics', 401, null],
  ])
  assert.equal(entries[3]?.['request_id'], 'trace-abc')

  const everything = [...server.stdout, ...server.stderr].join('\n')
  for (const secret of [ADMIN_TOKEN, customerKey, minted, 'rpl_wrong-key-SECRET', 'wrong-admin-SECRET', 'BODY-SECRET', 'QUERY-SECRET']) {
    assert.ok(!everything.includes(secret), `the logs contain ${secret}`)
  }
})

test('REPLENISH_LOG=off keeps stdout to the listening line', async (t) => {
  const db = await testDb(t)
  const server = await startServe(t, { REPLENISH_DB: db, REPLENISH_LOG: 'off' })
  assert.equal((await request(server.url, 'GET', '/healthz')).status, 200)
  assert.equal(await server.stop(), 0)
  assert.deepEqual(server.stdout.filter((l) => l.length > 0), [`replenish listening on ${server.url}`])
})

test('/readyz names the oldest overdue actionable date (C9), null once nothing is overdue', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-15', REPLENISH_PROCESS_EVERY: '0' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  assert.deepEqual((await server.request('GET', '/readyz')).body, { status: 'ready', oldest_overdue_actionable_date: null })
  // Due today and not processed (no schedule here: processing would come from cron).
  const sub = await createSubscription(server, alice.key, { actionable_date: '2026-03-15', line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const ready = await server.request('GET', '/readyz')
  assert.deepEqual([ready.status, ready.body], [200, { status: 'ready', oldest_overdue_actionable_date: '2026-03-15' }])
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })).status, 200)
  assert.deepEqual((await server.request('GET', '/readyz')).body, { status: 'ready', oldest_overdue_actionable_date: null })
})
