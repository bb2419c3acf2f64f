import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { once } from 'node:events'
import net, { type AddressInfo } from 'node:net'
import { listen } from '../../src/http/server.ts'
import type { AccessLogEntry, Handler, Route } from '../../src/http/types.ts'
import { ADMIN_TOKEN, seedPayment, seedUser, startTestServer } from '../helpers/server.ts'
import { refuseWrites } from '../helpers/database.ts'

/**
 * Issue 15 item 1, C1: every unexpected error is a 500 with `{"error": "Internal server error",
 * "request_id": …}` and one error log entry with the request id and the stack, however the
 * request's bytes arrived. Only a body read that was really cut off is a 408/499, unlogged.
 * The requests are raw bytes on a socket, so each test decides what arrives together.
 */

interface StubServer {
  readonly port: number
  readonly log: AccessLogEntry[]
  readonly errors: Record<string, unknown>[]
  handlerCalls: number
}

async function stubServer(t: TestContext, handler: Handler, timeouts = { headersTimeoutMs: 5000, requestTimeoutMs: 10_000 }): Promise<StubServer> {
  const stub: StubServer = { port: 0, log: [], errors: [], handlerCalls: 0 }
  const counted: Handler = (ctx) => {
    stub.handlerCalls++
    return handler(ctx)
  }
  const routes: Route[] = ['GET', 'POST', 'PATCH', 'DELETE'].map((m) => [m as Route[0], '/things/:id', counted])
  const server = await listen(
    {
      routes,
      maxBodyBytes: 1000,
      ...timeouts,
      keepAliveTimeoutMs: 1000,
      onResponse: (e) => stub.log.push(e),
      logError: (e) => stub.errors.push(e as Record<string, unknown>),
    },
    '127.0.0.1',
    0,
  )
  t.after(() => server.close(100))
  return Object.assign(stub, { port: (server.server.address() as AddressInfo).port })
}

interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `parts` on one connection (each its own write, `pauseMs` apart) and reads the answer until the server closes. */
function exchange(port: number, parts: string[], pauseMs = 0): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = ''
    socket.setEncoding('utf8').on('data', (d: string) => (data += d))
    socket.on('error', reject)
    socket.on('close', () => {
      const [head = '', body = ''] = data.split('\r\n\r\n', 2)
      const [statusLine = '', ...lines] = head.split('\r\n')
      const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]))
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body })
    })
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs))
        socket.write(part)
      }
    })
  })
}

const BODY = '{"thing":{"name":"x"}}'
const head = (method: string, extra = ''): string =>
  `${method} /things/1 HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-request-id: req-15-1\r\ncontent-type: application/json\r\n${extra}\r\n`

/** The request shapes that reach a handler; each must make a thrown error C1's 500. */
const SHAPES: [string, string[]][] = [
  ['a PATCH whose body came with its headers', [head('PATCH', `content-length: ${BODY.length}\r\n`) + BODY]],
  ['a GET (no body is read)', [head('GET')]],
  ['a DELETE with content-length: 0', [head('DELETE', 'content-length: 0\r\n')]],
  ['a POST with a chunked body, in one write', [head('POST', 'transfer-encoding: chunked\r\n') + `${BODY.length.toString(16)}\r\n${BODY}\r\n0\r\n\r\n`]],
  ['a POST whose body follows its headers in a later write', [head('POST', `content-length: ${BODY.length}\r\n`), BODY]],
]

function assertLoggedAs500(stub: StubServer, answer: RawAnswer, message: string): void {
  assert.equal(answer.status, 500)
  assert.equal(answer.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(answer.headers['x-request-id'], 'req-15-1')
  assert.deepEqual(JSON.parse(answer.body), { error: 'Internal server error', request_id: 'req-15-1' })
  assert.equal(stub.errors.length, 1, 'exactly one error log entry')
  const entry = stub.errors[0] as Record<string, unknown>
  assert.equal(entry['request_id'], 'req-15-1')
  assert.equal(entry['level'], 'error')
  assert.equal(entry['message'], message)
  assert.match(String(entry['stack']), new RegExp(`^Error: ${message}\\n\\s+at `))
  assert.deepEqual(stub.log.map((e) => [e.status, e.request_id]), [[500, 'req-15-1']])
}

for (const [shape, parts] of SHAPES) {
  test(`a handler that throws on ${shape} answers C1's 500 and logs it once with the request id and stack`, async (t) => {
    const stub = await stubServer(t, () => {
      throw new Error('database is locked')
    })
    const answer = await exchange(stub.port, parts, 20)
    assertLoggedAs500(stub, answer, 'database is locked')
  })

  test(`a handler that rejects later on ${shape} answers C1's 500 and logs it once`, async (t) => {
    const stub = await stubServer(t, async () => {
      await new Promise((r) => setTimeout(r, 5))
      throw new Error('disk I/O error')
    })
    assertLoggedAs500(stub, await exchange(stub.port, parts, 20), 'disk I/O error')
  })
}

test('a reply that cannot be encoded is C1\'s 500, logged once, not an empty answer', async (t) => {
  const stub = await stubServer(t, () => ({ status: 200, body: { total: 10n } }))
  const answer = await exchange(stub.port, [head('GET')])
  assert.equal(answer.status, 500)
  assert.deepEqual(JSON.parse(answer.body), { error: 'Internal server error', request_id: 'req-15-1' })
  assert.equal(stub.errors.length, 1)
  assert.equal(stub.errors[0]?.['request_id'], 'req-15-1')
  assert.match(String(stub.errors[0]?.['stack']), /^TypeError: .*BigInt/)
  assert.deepEqual(stub.log.map((e) => e.status), [500])
})

const waitForLog = async (stub: StubServer): Promise<void> => {
  while (stub.log.length === 0) await new Promise((r) => setTimeout(r, 5))
}

test('a client that goes away mid-body is logged as 499, not as an error, and its handler never runs', async (t) => {
  const stub = await stubServer(t, () => ({ status: 200, body: {} }))
  const socket = net.connect(stub.port, '127.0.0.1')
  // Expect: 100-continue makes the server say when the request is waiting for its body.
  socket.write(head('PATCH', `content-length: ${BODY.length}\r\nexpect: 100-continue\r\n`))
  const [interim] = (await once(socket, 'data')) as [Buffer]
  assert.match(interim.toString(), /^HTTP\/1\.1 100 Continue/)
  socket.write(BODY.slice(0, 5))
  socket.destroy()
  await waitForLog(stub)
  assert.deepEqual(stub.log.map((e) => [e.method, e.route, e.status, e.request_id]), [['PATCH', '/things/:id', 499, 'req-15-1']])
  assert.deepEqual(stub.errors, [])
  assert.equal(stub.handlerCalls, 0)
})

test('a body our request time-out cuts off is answered and logged as 408, not as an error', async (t) => {
  const stub = await stubServer(t, () => ({ status: 200, body: {} }), { headersTimeoutMs: 100, requestTimeoutMs: 200 })
  const answer = await exchange(stub.port, [head('POST', `content-length: ${BODY.length}\r\n`) + BODY.slice(0, 5)])
  assert.equal(answer.status, 408)
  await waitForLog(stub)
  assert.deepEqual(stub.log.map((e) => [e.method, e.route, e.status]), [['POST', '/things/:id', 408]])
  assert.deepEqual(stub.errors, [])
  assert.equal(stub.handlerCalls, 0)
})

test('end to end: a write the database refuses is C1\'s 500 with one error log entry, not a 499', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const { methodId } = await seedPayment(server.store, user.id)
  // The database refuses every write from here on, as a read-only database does.
  const refused = await refuseWrites(server.store)
  const body = JSON.stringify({ payment_method: { active: false } })
  const port = Number(new URL(server.url).port)
  const answer = await exchange(port, [
    `PATCH /admin/api/v1/payment_methods/${methodId} HTTP/1.1\r\nhost: x\r\nconnection: close\r\nx-request-id: req-15-1\r\n` +
      `authorization: Bearer ${ADMIN_TOKEN}\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
  ])
  assert.equal(answer.status, 500)
  assert.deepEqual(JSON.parse(answer.body), { error: 'Internal server error', request_id: 'req-15-1' })
  assert.equal(server.errors.length, 1)
  const entry = server.errors[0] as Record<string, unknown>
  assert.equal(entry['request_id'], 'req-15-1')
  assert.match(String(entry['stack']), new RegExp(`${refused.message.source}[^]*\\n\\s+at `))
  assert.ok(!answer.body.includes(refused.word), 'no SQL error text in the answer')
})
