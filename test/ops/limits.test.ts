import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { connect, type Socket } from 'node:net'
import { ADMIN_TOKEN, countRows, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { requestLimits } from '../../src/api/kit/limits.ts'
import { HttpError } from '../../src/http/http-error.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

interface RawAnswer {
  status: number
  headers: http.IncomingHttpHeaders
  body: unknown
}

/** A request through node:http, so the body can be sent in pieces, with or without a length. */
function send(server: TestServer, path: string, options: { key?: string; chunks: string[]; length?: number; headers?: Record<string, string> }): Promise<RawAnswer> {
  const url = new URL(path, server.url)
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/json', ...options.headers }
    if (options.key) headers['authorization'] = `Bearer ${options.key}`
    if (options.length !== undefined) headers['content-length'] = options.length
    const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers, agent: false }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }))
    })
    req.on('error', reject)
    for (const chunk of options.chunks) req.write(chunk)
    req.end()
  })
}

/** Raw bytes over TCP; resolves with everything the server sent once it closes the connection. */
function rawExchange(server: TestServer, bytes: string): Promise<string> {
  const url = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(url.port), url.hostname)
    let received = ''
    socket.setEncoding('utf8').on('data', (d: string) => (received += d))
    socket.on('error', reject)
    socket.on('close', () => resolve(received))
    socket.write(bytes)
  })
}

function parseRaw(text: string): { status: number; headers: Record<string, string>; body: unknown } {
  const [head, body] = text.split('\r\n\r\n') as [string, string]
  const [statusLine, ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine?.split(' ')[1]), headers, body: JSON.parse(body) }
}

const paddedBody = (bytes: number): string => {
  const base = JSON.stringify({ subscription: { interval_length: 1, note: '' } })
  return JSON.stringify({ subscription: { interval_length: 1, note: 'x'.repeat(bytes - base.length) } })
}

test('a body over the limit is a 413 and creates nothing, whether its length is declared or not', async (t) => {
  const server = await startTestServer(t, { REPLENISH_MAX_BODY_BYTES: '1024' })
  const user = await seedUser(server.store)
  const over = paddedBody(1025)
  assert.equal(Buffer.byteLength(over), 1025)
  for (const declared of [true, false]) {
    const res = await send(server, '/api/v1/subscriptions', { key: user.key, chunks: [over.slice(0, 500), over.slice(500)], ...(declared ? { length: 1025 } : {}) })
    assert.equal(res.status, 413)
    assert.deepEqual(res.body, { error: 'Request body too large' })
    assert.equal(res.headers['content-type'], JSON_TYPE)
    assert.equal(res.headers['connection'], 'close')
  }
  assert.equal(await countRows(server.store, 'subscriptions'), 0)
  // Exactly the limit is accepted.
  const at = await send(server, '/api/v1/subscriptions', { key: user.key, chunks: [paddedBody(1024)] })
  assert.equal(at.status, 200)
  assert.equal(await countRows(server.store, 'subscriptions'), 1)
})

test('the default body limit is 64 KiB', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  assert.equal((await send(server, '/api/v1/subscriptions', { key: user.key, chunks: [paddedBody(65_537)] })).status, 413)
  assert.equal((await send(server, '/api/v1/subscriptions', { key: user.key, chunks: [paddedBody(65_536)] })).status, 200)
})

test('a client that does not finish its headers in time gets a JSON 408 and is disconnected', async (t) => {
  const server = await startTestServer(t, { REPLENISH_HEADERS_TIMEOUT_MS: '200', REPLENISH_REQUEST_TIMEOUT_MS: '5000' })
  const answer = parseRaw(await rawExchange(server, 'GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: '))
  assert.equal(answer.status, 408)
  assert.deepEqual(answer.body, { error: 'Request timeout: the request was not received in time' })
  assert.equal(answer.headers['content-type'], JSON_TYPE)
  assert.equal(answer.headers['connection'], 'close')
  assert.deepEqual(server.log.map((e) => [e.method, e.route, e.status]), [['-', 'unmatched', 408]])
})

test('a client that does not finish its body in time gets a JSON 408, logged as such and not as an error', async (t) => {
  const server = await startTestServer(t, { REPLENISH_HEADERS_TIMEOUT_MS: '200', REPLENISH_REQUEST_TIMEOUT_MS: '400' })
  const user = await seedUser(server.store)
  const head = `POST /api/v1/subscriptions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n`
  const answer = parseRaw(await rawExchange(server, head + '{"subscription":'))
  assert.equal(answer.status, 408)
  assert.deepEqual(answer.body, { error: 'Request timeout: the request was not received in time' })
  // The handler saw its body cut off: one 408 line, no error, nothing stored.
  while (server.log.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.deepEqual(server.log.map((e) => [e.method, e.route, e.status]), [['POST', '/api/v1/subscriptions', 408]])
  assert.deepEqual(server.errors, [])
  assert.equal(await countRows(server.store, 'subscriptions'), 0)
})

test('a client that hangs up mid-body is logged as 499, not as an error', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const url = new URL(server.url)
  const socket = connect(Number(url.port), url.hostname)
  // Expect: 100-continue makes the server say when the request has reached its handler.
  socket.write(`POST /api/v1/subscriptions HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${user.key}\r\nContent-Type: application/json\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n`)
  const [interim] = (await once(socket, 'data')) as [Buffer]
  assert.match(interim.toString(), /^HTTP\/1\.1 100 Continue/)
  socket.write('{"subscr')
  socket.destroy()
  while (server.log.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
  assert.deepEqual(server.log.map((e) => [e.method, e.route, e.status]), [['POST', '/api/v1/subscriptions', 499]])
  assert.deepEqual(server.errors, [])
})

test('headers larger than Node allows get a JSON 431', async (t) => {
  const server = await startTestServer(t)
  const answer = parseRaw(await rawExchange(server, `GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
  assert.equal(answer.status, 431)
  assert.deepEqual(answer.body, { error: 'Request header fields too large' })
})

test('a malformed request line gets a JSON 400', async (t) => {
  const server = await startTestServer(t)
  const answer = parseRaw(await rawExchange(server, 'HELLO\r\n\r\n'))
  assert.equal(answer.status, 400)
  assert.deepEqual(answer.body, { error: 'Bad request' })
})

test('each API key has its own token bucket: past the burst it gets 429 with Retry-After, other keys do not', async (t) => {
  const server = await startTestServer(t, { REPLENISH_RATE_LIMIT: '1', REPLENISH_RATE_BURST: '3' })
  const ann = await seedUser(server.store)
  const bob = await seedUser(server.store)
  for (let i = 0; i < 3; i++) assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: ann.key })).status, 200)
  const limited = await server.request('GET', '/api/v1/subscriptions', { key: ann.key })
  assert.equal(limited.status, 429)
  assert.deepEqual(limited.body, { error: 'Rate limit exceeded. Try again later.' })
  assert.equal(limited.headers.get('retry-after'), '1')
  assert.equal(limited.headers.get('content-type'), JSON_TYPE)
  // A refused write does nothing.
  const refused = await server.request('POST', '/api/v1/subscriptions', { key: ann.key, json: { subscription: { interval_length: 1 } } })
  assert.equal(refused.status, 429)
  assert.equal(await countRows(server.store, 'subscriptions'), 0)
  assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: bob.key })).status, 200)
  // The access log still names the caller of a refused request.
  assert.deepEqual(server.log.filter((e) => e.status === 429).map((e) => e.user_id), [ann.id, ann.id])
})

test('REPLENISH_RATE_LIMIT=0 turns the rate limit off', async (t) => {
  const server = await startTestServer(t, { REPLENISH_RATE_LIMIT: '0', REPLENISH_RATE_BURST: '1' })
  const ann = await seedUser(server.store)
  for (let i = 0; i < 20; i++) assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: ann.key })).status, 200)
})

test('the token bucket refills at the configured rate (50/s, burst 100 by default)', () => {
  let now = 1_000_000
  const limits = requestLimits({ rate: 50, burst: 100, authFailures: 0, now: () => now })
  for (let i = 0; i < 100; i++) limits.take('k')
  assert.throws(() => limits.take('k'), (e: unknown) => e instanceof HttpError && e.status === 429 && e.headers?.['retry-after'] === '1')
  now += 20 // one token's worth at 50/s
  limits.take('k')
  assert.throws(() => limits.take('k'), HttpError)
  now += 10_000 // a long pause refills to the burst, not beyond it
  for (let i = 0; i < 100; i++) limits.take('k')
  assert.throws(() => limits.take('k'), HttpError)
})

test('bad keys from one address: past the threshold it gets 429 with Retry-After, even for a key that would be valid', async (t) => {
  const server = await startTestServer(t, { REPLENISH_AUTH_FAILURE_LIMIT: '3' })
  const ann = await seedUser(server.store)
  for (let i = 0; i < 3; i++) {
    const res = await server.request('GET', '/api/v1/subscriptions', { key: `rpl_guess-${i}` })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { error: 'Invalid API key specified.' })
  }
  for (const key of ['rpl_guess-4', ann.key]) {
    const res = await server.request('GET', '/api/v1/subscriptions', { key })
    assert.equal(res.status, 429)
    assert.deepEqual(res.body, { error: 'Too many failed authentication attempts. Try again later.' })
    const wait = Number(res.headers.get('retry-after'))
    assert.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After ${wait}`)
  }
  // No key at all is still told what is missing: there is nothing to guess.
  assert.equal((await server.request('GET', '/api/v1/subscriptions')).status, 401)
})

test('bad admin tokens count too', async (t) => {
  const server = await startTestServer(t, { REPLENISH_AUTH_FAILURE_LIMIT: '2' })
  for (let i = 0; i < 2; i++) assert.equal((await server.request('GET', '/admin/api/v1/users', { key: `guess-${i}` })).status, 401)
  const res = await server.request('GET', '/admin/api/v1/users', { key: 'guess-3' })
  assert.equal(res.status, 429)
  assert.deepEqual(res.body, { error: 'Too many failed authentication attempts. Try again later.' })
  // The configured token still opens the admin API: it is compared before any lookup.
  assert.equal((await server.request('GET', '/admin/api/v1/users', { key: ADMIN_TOKEN })).status, 200)
})

test('behind a proxy (REPLENISH_TRUST_PROXY=1) bad keys are counted per X-Forwarded-For client, not per proxy', async (t) => {
  const server = await startTestServer(t, { REPLENISH_AUTH_FAILURE_LIMIT: '2', REPLENISH_TRUST_PROXY: '1' })
  const ann = await seedUser(server.store)
  const from = (ip: string) => ({ 'x-forwarded-for': `203.0.113.99, ${ip}` })
  for (let i = 0; i < 2; i++) await server.request('GET', '/api/v1/subscriptions', { key: `rpl_guess-${i}`, headers: from('198.51.100.7') })
  assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: 'rpl_guess-3', headers: from('198.51.100.7') })).status, 429)
  assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: ann.key, headers: from('198.51.100.8') })).status, 200)
})

test('without REPLENISH_TRUST_PROXY a client cannot dodge the count with X-Forwarded-For', async (t) => {
  const server = await startTestServer(t, { REPLENISH_AUTH_FAILURE_LIMIT: '2' })
  for (let i = 0; i < 3; i++) await server.request('GET', '/api/v1/subscriptions', { key: `rpl_guess-${i}`, headers: { 'x-forwarded-for': `10.0.0.${i}` } })
  assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: 'rpl_guess-9', headers: { 'x-forwarded-for': '10.0.0.9' } })).status, 429)
})

test('an address is let through again once its minute has passed; 0 turns the slow-down off', () => {
  let now = 0
  const limits = requestLimits({ rate: 0, burst: 1, authFailures: 2, now: () => now })
  limits.recordFailure('a')
  limits.recordFailure('a')
  assert.throws(() => limits.checkAddress('a'), (e: unknown) => e instanceof HttpError && e.status === 429 && e.headers?.['retry-after'] === '60')
  limits.checkAddress('b')
  now = 45_000
  assert.throws(() => limits.checkAddress('a'), (e: unknown) => e instanceof HttpError && e.headers?.['retry-after'] === '15')
  now = 60_000
  limits.checkAddress('a')
  const off = requestLimits({ rate: 0, burst: 1, authFailures: 0, now: () => now })
  for (let i = 0; i < 100; i++) off.recordFailure('a')
  off.checkAddress('a')
})
