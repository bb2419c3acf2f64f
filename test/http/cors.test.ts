/**
 * CORS (C13, issue 18 item 6): listed origins get a preflight and CORS headers on the customer
 * API only; unlisted origins, requests without Origin, and every other path get none, and an
 * OPTIONS there is C1's 405 with Allow, as before.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { listen } from '../../src/http/server.ts'
import { PREFLIGHT_MAX_AGE_SECONDS } from '../../src/http/cors.ts'
import type { Route } from '../../src/http/types.ts'
import { ADMIN_TOKEN, createSubscription, request, seedUser, startTestServer, type TestResponse } from '../helpers/server.ts'

const SHOP = 'https://shop.example'
const OTHER = 'https://evil.example'
const EXPOSED = 'X-Request-Id, Retry-After, Idempotent-Replayed, WWW-Authenticate, Replenish-Dry-Run'

/** The CORS headers of an answer; `Vary: Accept-Encoding` (compression, C18) is no CORS header. */
function corsHeaders(res: TestResponse): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [name, value] of res.headers) {
    if (name.startsWith('access-control-')) out[name] = value
    const vary = name === 'vary' ? value.split(',').map((v) => v.trim()).filter((v) => v.toLowerCase() !== 'accept-encoding') : []
    if (vary.length > 0) out[name] = vary.join(', ')
  }
  return out
}

function assertActualCors(res: TestResponse, what: string): void {
  assert.deepEqual(corsHeaders(res), {
    'access-control-allow-origin': SHOP,
    'access-control-expose-headers': EXPOSED,
    vary: 'Origin',
  }, what)
}

const preflight = (origin: string, method = 'PATCH'): Record<string, string> => ({
  origin,
  'access-control-request-method': method,
  'access-control-request-headers': 'authorization, content-type',
})

async function corsServer(t: TestContext, env: Record<string, string> = {}) {
  // Upper case and spaces in the setting: it is stored normalised, and the browser's Origin matches.
  return startTestServer(t, { REPLENISH_CORS_ORIGINS: ` HTTPS://Shop.Example , http://localhost:3000`, ...env })
}

test('a preflight from a listed origin is 204 with the route\'s methods, the headers a client sends, a max age, and no body', async (t) => {
  const server = await corsServer(t)
  for (const [path, allow] of [
    ['/api/v1/subscriptions/1', 'GET, PATCH, PUT'],
    ['/api/v1/line_items/7', 'DELETE, GET, PATCH, PUT'],
    ['/api/v1/subscriptions', 'GET, POST'],
    ['/api/v1/subscriptions/1/skip', 'POST'],
  ] as const) {
    const res = await server.request('OPTIONS', path, { headers: preflight(SHOP) })
    assert.equal(res.status, 204, path)
    assert.equal(res.text, '', path)
    assert.deepEqual(corsHeaders(res), {
      'access-control-allow-origin': SHOP,
      'access-control-allow-methods': allow,
      'access-control-allow-headers': 'Authorization, Content-Type, Idempotency-Key, Accept-Language, X-Request-Id, Replenish-Dry-Run',
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      vary: 'Origin',
    }, path)
    assert.equal(res.headers.get('content-length'), null, `${path}: a 204 has no Content-Length`)
    assert.match(res.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/)
  }
  // The methods are the router's own Allow list: the same as a 405 to that path says.
  const notAllowed = await server.request('DELETE', '/api/v1/subscriptions/1')
  assert.equal(notAllowed.headers.get('allow'), 'GET, PATCH, PUT')
  const second = await server.request('OPTIONS', '/api/v1/subscriptions', { headers: preflight('http://localhost:3000', 'POST') })
  assert.equal(second.headers.get('access-control-allow-origin'), 'http://localhost:3000')
  assert.deepEqual(server.log.map((e) => [e.status, e.route]).slice(0, 4), Array(4).fill([204, 'preflight']))
  // A preflight to a path no route has is the 404 it always was, with the CORS headers of any answer.
  const unknown = await server.request('OPTIONS', '/api/v1/nothing-here', { headers: preflight(SHOP) })
  assert.equal(unknown.status, 404)
  assertActualCors(unknown, 'preflight to an unknown path')
})

test('a preflight needs no credentials, and a bad key is not counted for it', async (t) => {
  const server = await corsServer(t, { REPLENISH_AUTH_FAILURE_LIMIT: '1' })
  for (let i = 0; i < 3; i++) {
    const res = await server.request('OPTIONS', '/api/v1/subscriptions', { key: 'rpl_not_a_key', headers: preflight(SHOP, 'POST') })
    assert.equal(res.status, 204)
  }
  // The limit is live (one bad key a minute): the preflights above were never counted against it.
  const first = await server.request('GET', '/api/v1/subscriptions', { key: 'rpl_not_a_key', headers: { origin: SHOP } })
  assert.equal(first.status, 401)
  const second = await server.request('GET', '/api/v1/subscriptions', { key: 'rpl_not_a_key', headers: { origin: SHOP } })
  assert.equal(second.status, 429)
  assertActualCors(second, '429 after a bad key')
})

test('every /api/v1 answer to a listed origin carries the CORS headers: 200, 401, 404, 422, 429', async (t) => {
  const server = await corsServer(t, { REPLENISH_RATE_LIMIT: '1', REPLENISH_RATE_BURST: '5' })
  const user = await seedUser(server.store)
  const headers = { origin: SHOP }
  const sub = await createSubscription(server, user.key) // no Origin: uses one token of the bucket
  const answers: [number, TestResponse][] = [
    [200, await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key, headers })],
    [401, await server.request('GET', '/api/v1/subscriptions', { headers })],
    [404, await server.request('GET', '/api/v1/nothing-here', { key: user.key, headers })],
    [422, await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: user.key, headers, json: { subscription: { interval_length: 0 } } })],
    [405, await server.request('OPTIONS', '/api/v1/subscriptions', { headers })], // not a preflight: no Access-Control-Request-Method
  ]
  // Empty the bucket (1 a second, burst 5): however slow the machine, a 429 comes within a few requests.
  let limited: TestResponse | undefined
  for (let i = 0; i < 20 && limited?.status !== 429; i++) limited = await server.request('GET', '/api/v1/subscriptions', { key: user.key, headers })
  answers.push([429, limited as TestResponse])
  for (const [status, res] of answers) {
    assert.equal(res.status, status, res.text)
    assertActualCors(res, String(status))
  }
  assert.equal(answers[5]?.[1].headers.get('retry-after') !== null, true)
  assert.equal(answers[1]?.[1].headers.get('www-authenticate'), 'Bearer realm="replenish"')
})

test('a 500 on the customer API carries the CORS headers too', async (t) => {
  const routes: Route[] = [['GET', '/api/v1/boom', () => { throw new Error('bug') }]]
  const errors: object[] = []
  const server = await listen({
    routes, maxBodyBytes: 1000, headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1000,
    onResponse: () => undefined, logError: (e) => errors.push(e), cors: { origins: [SHOP], pathPrefix: '/api/v1/' },
  }, '127.0.0.1', 0)
  t.after(() => server.close(100))
  const res = await request(server.url, 'GET', '/api/v1/boom', { headers: { origin: SHOP }, unchecked: true })
  assert.equal(res.status, 500)
  assertActualCors(res, '500')
  assert.equal(errors.length, 1)
})

test('an unlisted origin, or no Origin, gets no CORS header at all, and its preflight is C1\'s 405 with Allow', async (t) => {
  const server = await corsServer(t)
  const user = await seedUser(server.store)
  const origins: Record<string, string>[] = [{ origin: OTHER }, { origin: 'https://shop.example.evil.example' }, { origin: 'null' }, {}]
  for (const headers of origins) {
    const ok = await server.request('GET', '/api/v1/subscriptions', { key: user.key, headers })
    assert.equal(ok.status, 200)
    assert.deepEqual(corsHeaders(ok), {}, JSON.stringify(headers))
    const pre = await server.request('OPTIONS', '/api/v1/subscriptions/1', { headers: { ...headers, 'access-control-request-method': 'PATCH' } })
    assert.equal(pre.status, 405)
    assert.equal(pre.headers.get('allow'), 'GET, PATCH, PUT')
    assert.deepEqual(pre.body, { error: 'Method OPTIONS is not allowed here' })
    assert.deepEqual(corsHeaders(pre), {}, JSON.stringify(headers))
  }
})

test('never on /admin, /healthz, /readyz or /metrics, even for a listed origin', async (t) => {
  const server = await corsServer(t)
  const gets: [string, number][] = [['/admin/api/v1/users', 200], ['/healthz', 200], ['/readyz', 200], ['/metrics', 200]]
  for (const [path, status] of gets) {
    const res = await server.request('GET', path, { key: ADMIN_TOKEN, headers: { origin: SHOP } })
    assert.equal(res.status, status, path)
    assert.deepEqual(corsHeaders(res), {}, path)
    const pre = await server.request('OPTIONS', path, { headers: preflight(SHOP, 'GET') })
    assert.equal(pre.status, 405, path)
    assert.ok(pre.headers.get('allow')?.includes('GET'), path)
    assert.deepEqual(corsHeaders(pre), {}, path)
  }
})

test('with no origins configured nothing changes: no CORS header, OPTIONS is 405', async (t) => {
  const server = await startTestServer(t)
  const pre = await server.request('OPTIONS', '/api/v1/subscriptions', { headers: preflight(SHOP, 'POST') })
  assert.equal(pre.status, 405)
  assert.equal(pre.headers.get('allow'), 'GET, POST')
  assert.deepEqual(corsHeaders(pre), {})
  const res = await server.request('GET', '/api/v1/subscriptions', { headers: { origin: SHOP } })
  assert.equal(res.status, 401)
  assert.deepEqual(corsHeaders(res), {})
})
