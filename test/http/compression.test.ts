/**
 * Issue 28 item 6 (C18 "Transfer"): answers of 1 KiB or more, when they are text (JSON, assets),
 * go out gzip-compressed, or br when Accept-Encoding weighs br higher, with `Vary:
 * Accept-Encoding`; smaller ones, and what the client refuses (q=0) or does not ask for, as they
 * are. Assets (and /favicon.ico) are compressed once, not per request. Streamed answers keep
 * memory bounded (backpressure) and stop reading when their client leaves.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import zlib from 'node:zlib'
import type { AddressInfo } from 'node:net'
import { listen } from '../../src/http/server.ts'
import { negotiateCoding, precompress } from '../../src/http/compression.ts'
import type { AccessLogEntry, Route } from '../../src/http/types.ts'
import { FAVICON_ICO } from '../../src/web/favicon.ts'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer } from '../helpers/server.ts'
import { rawGet } from '../helpers/raw-http.ts'
import { until } from '../helpers/wait.ts'

test('negotiateCoding: q-values decide, br only when weighed above gzip, q=0 refuses, identity or nothing is none', () => {
  const cases: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['deflate', undefined],
    ['gzip', 'gzip'],
    ['GZip', 'gzip'],
    ['x-gzip', 'gzip'],
    ['br', 'br'],
    ['gzip, deflate, br', 'gzip'],
    ['br, gzip', 'gzip'],
    ['gzip;q=0.5, br', 'br'],
    ['br;q=1.0, gzip;q=0.999', 'br'],
    ['gzip;q=1, br;q=1', 'gzip'],
    ['gzip;q=0, br;q=0.1', 'br'],
    ['gzip;q=0', undefined],
    ['gzip;q=0, br;q=0', undefined],
    ['*', 'gzip'],
    ['*;q=0', undefined],
    ['br;q=0.8, *;q=0.9', 'gzip'],
    ['gzip;q=0, *', 'br'],
    ['identity;q=1, *;q=0', undefined],
    ['gzip ; q=0.7 , br ; q=0.6', 'gzip'],
    // A malformed q-value makes its entry count for nothing.
    ['gzip;q=2, br;q=0.1', 'br'],
    ['gzip;q=abc', undefined],
  ]
  for (const [header, expected] of cases) assert.equal(negotiateCoding(header), expected, String(header))
})

interface Stub {
  readonly url: string
  readonly log: AccessLogEntry[]
  readonly errors: Record<string, unknown>[]
}

async function stub(t: TestContext, routes: Route[]): Promise<Stub> {
  const log: AccessLogEntry[] = []
  const errors: Record<string, unknown>[] = []
  const server = await listen(
    {
      routes,
      maxBodyBytes: 1000,
      headersTimeoutMs: 5000,
      requestTimeoutMs: 10_000,
      keepAliveTimeoutMs: 1000,
      onResponse: (e) => log.push(e),
      logError: (e) => errors.push(e as Record<string, unknown>),
    },
    '127.0.0.1',
    0,
  )
  t.after(() => server.close(100))
  return { url: `http://127.0.0.1:${(server.server.address() as AddressInfo).port}`, log, errors }
}

/** A JSON body of exactly `n` bytes. */
const jsonOf = (n: number): string => JSON.stringify({ s: 'x'.repeat(n - 8) })

const ACCEPT_ALL = { 'accept-encoding': 'gzip, deflate, br' }

test('the threshold: 1023 bytes go as they are, without Vary; 1024 bytes are compressed, with Vary, and decompress to the same', async (t) => {
  const s = await stub(t, [['GET', '/json/:n', (ctx) => ({ status: 200, body: undefined, raw: jsonOf(Number(ctx.params['n'])) })]])
  const small = await rawGet(`${s.url}/json/1023`, ACCEPT_ALL)
  assert.equal(small.bytes.length, 1023)
  assert.equal(small.headers['content-encoding'], undefined)
  assert.equal(small.headers['vary'], undefined)
  assert.equal(small.headers['content-length'], '1023')
  const large = await rawGet(`${s.url}/json/1024`, ACCEPT_ALL)
  assert.equal(large.headers['content-encoding'], 'gzip')
  assert.equal(large.headers['vary'], 'Accept-Encoding')
  assert.equal(large.headers['content-length'], String(large.bytes.length))
  assert.equal(large.headers['content-type'], 'application/json; charset=utf-8')
  assert.equal(zlib.gunzipSync(large.bytes).toString('utf8'), jsonOf(1024))
  assert.ok(large.bytes.length < 200)
})

test('br when preferred, nothing when refused (q=0) or not asked for (no header, identity, deflate), but Vary all the same', async (t) => {
  const body = jsonOf(5000)
  const s = await stub(t, [['GET', '/big', () => ({ status: 200, body: JSON.parse(body) })]])
  const br = await rawGet(`${s.url}/big`, { 'accept-encoding': 'gzip;q=0.8, br' })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.equal(zlib.brotliDecompressSync(br.bytes).toString('utf8'), body)
  for (const header of [undefined, 'identity', 'deflate', 'gzip;q=0', '*;q=0', 'gzip;q=0, br;q=0']) {
    const res = await rawGet(`${s.url}/big`, header === undefined ? {} : { 'accept-encoding': header })
    assert.equal(res.headers['content-encoding'], undefined, header)
    assert.equal(res.headers['vary'], 'Accept-Encoding', header)
    assert.equal(res.bytes.toString('utf8'), body, header)
  }
})

test('HEAD: the headers GET would send (encoding, compressed length, Vary), no body', async (t) => {
  const s = await stub(t, [['GET', '/big', () => ({ status: 200, body: JSON.parse(jsonOf(5000)) })]])
  const get = await rawGet(`${s.url}/big`, { 'accept-encoding': 'gzip' })
  const head = await rawGet(`${s.url}/big`, { 'accept-encoding': 'gzip' }, 'HEAD')
  assert.equal(head.status, 200)
  assert.equal(head.bytes.length, 0)
  for (const name of ['content-encoding', 'content-length', 'content-type', 'vary']) assert.equal(head.headers[name], get.headers[name], name)
})

test('only text is compressed (an image is not, and gets no Vary); a Vary of its own is kept beside Accept-Encoding; errors and 204s as any answer', async (t) => {
  const s = await stub(t, [
    ['GET', '/png', () => ({ status: 200, body: Buffer.alloc(5000, 7), contentType: 'image/png' })],
    ['GET', '/text', () => ({ status: 200, body: 'metric 1\n'.repeat(500), contentType: 'text/plain; version=0.0.4' })],
    ['GET', '/cors', () => ({ status: 200, body: JSON.parse(jsonOf(3000)), headers: { vary: 'Origin' } })],
    ['GET', '/empty', () => ({ status: 204, body: '', contentType: 'text/plain', encoded: { gzip: Buffer.from('x'), br: Buffer.from('y') } })],
  ])
  const png = await rawGet(`${s.url}/png`, ACCEPT_ALL)
  assert.deepEqual([png.headers['content-encoding'], png.headers['vary'], png.bytes.length], [undefined, undefined, 5000])
  const text = await rawGet(`${s.url}/text`, ACCEPT_ALL)
  assert.equal(text.headers['content-encoding'], 'gzip')
  const cors = await rawGet(`${s.url}/cors`, ACCEPT_ALL)
  assert.equal(cors.headers['vary'], 'Accept-Encoding, Origin')
  const empty = await rawGet(`${s.url}/empty`, ACCEPT_ALL)
  assert.deepEqual([empty.status, empty.headers['content-encoding'], empty.headers['vary'], empty.bytes.length], [204, undefined, 'Accept-Encoding', 0])
})

test('a streamed answer waits for its client (memory stays bounded), and stops reading when the client leaves', async (t) => {
  const piece = 'y'.repeat(256 * 1024)
  let produced = 0
  let ended = false
  const s = await stub(t, [['GET', '/stream', () => ({
    status: 200,
    body: undefined,
    contentType: 'text/csv; charset=utf-8',
    stream: (async function* () {
      try {
        for (;;) {
          produced++
          yield piece
        }
      } finally {
        ended = true
      }
    })(),
  })]])
  const { promise: gone, resolve: left } = Promise.withResolvers<void>()
  const req = http.get(`${s.url}/stream`, (res) => {
    res.pause()
    // The client reads nothing: the server must stop asking for pieces once the socket and the
    // stream's small read-ahead are full. Then the client leaves.
    let last = -1
    const settle = setInterval(() => {
      if (produced !== last) {
        last = produced
        return
      }
      clearInterval(settle)
      // Socket buffers of a few MB at most (Linux autotuning), never the endless stream.
      assert.ok(produced * piece.length < 32 * 1024 * 1024, `${produced} pieces produced for a client that read nothing`)
      req.destroy()
      left()
    }, 200)
  })
  req.on('error', () => {})
  await gone
  await until('the stream to be ended when its client left', () => ended)
  await until('the request to be logged', () => s.log.length > 0)
  assert.deepEqual(s.log.map((e) => e.status), [499])
  assert.deepEqual(s.errors, [])
})

test('a stream that fails halfway: the connection is cut (no complete-looking file), and the failure is logged as a 500', async (t) => {
  const s = await stub(t, [['GET', '/broken', () => ({
    status: 200,
    body: undefined,
    contentType: 'text/csv; charset=utf-8',
    stream: (async function* () {
      yield 'id\r\n1\r\n'
      throw new Error('the database went away')
    })(),
  })]])
  const outcome = await new Promise<string>((resolve) => {
    http.get(`${s.url}/broken`, (res) => {
      res.on('data', () => {})
      res.on('end', () => resolve('complete'))
      res.on('error', (err) => resolve(`aborted: ${(err as NodeJS.ErrnoException).code}`))
    }).on('error', (err) => resolve(`aborted: ${(err as NodeJS.ErrnoException).code}`))
  })
  assert.match(outcome, /^aborted/)
  await until('the request to be logged', () => s.log.length > 0)
  assert.equal(s.log[0]?.status, 500)
  assert.equal(s.errors.length, 1)
  assert.equal(s.errors[0]?.['message'], 'the database went away')
  assert.equal(s.errors[0]?.['request_id'], s.log[0]?.request_id)
})

// ---- the real server, on the test backend ---------------------------------------------------------

test('GET of one subscription (under 1 KiB) is sent as it is; an admin list over 1 KiB compressed, the same JSON once decompressed', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const subs = []
  for (let i = 0; i < 5; i++) subs.push(await createSubscription(server, user.key, {}))
  const one = await rawGet(`${server.url}/api/v1/subscriptions/${subs[0].id}`, { ...ACCEPT_ALL, authorization: `Bearer ${user.key}` })
  assert.equal(one.status, 200)
  assert.ok(one.bytes.length < 1024, `${one.bytes.length} bytes`)
  assert.deepEqual([one.headers['content-encoding'], one.headers['vary']], [undefined, undefined])
  assert.deepEqual(JSON.parse(one.bytes.toString('utf8')), subs[0])

  const list = await rawGet(`${server.url}/admin/api/v1/subscriptions`, { ...ACCEPT_ALL, authorization: `Bearer ${ADMIN_TOKEN}` })
  const plain = await rawGet(`${server.url}/admin/api/v1/subscriptions`, { authorization: `Bearer ${ADMIN_TOKEN}` })
  assert.ok(plain.bytes.length >= 1024, `${plain.bytes.length} bytes`)
  assert.deepEqual([list.headers['content-encoding'], list.headers['vary']], ['gzip', 'Accept-Encoding'])
  assert.deepEqual(JSON.parse(zlib.gunzipSync(list.bytes).toString('utf8')), JSON.parse(plain.bytes.toString('utf8')))
  assert.equal(JSON.parse(plain.bytes.toString('utf8')).subscriptions.length, 5)
})

test('/favicon.ico: the icon, compressed once (the bytes of the best settings, the same every time), HEAD and revalidation', async (t) => {
  const server = await startTestServer(t)
  const plain = await rawGet(`${server.url}/favicon.ico`)
  assert.equal(plain.status, 200)
  assert.equal(plain.headers['content-type'], 'image/x-icon')
  assert.ok(plain.bytes.equals(FAVICON_ICO))
  assert.equal(plain.headers['vary'], 'Accept-Encoding')
  assert.equal(plain.bytes.readUInt16LE(2), 1, 'an ICO file (type 1: icon)')
  const best = await precompress(FAVICON_ICO, 'image/x-icon')
  assert.ok(best)
  const br = await rawGet(`${server.url}/favicon.ico`, { 'accept-encoding': 'br;q=1, gzip;q=0.5' })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.ok(br.bytes.equals(best.br), 'the precompressed bytes (quality 11), not a per-request compression')
  assert.ok(zlib.brotliDecompressSync(br.bytes).equals(FAVICON_ICO))
  const gzip = await rawGet(`${server.url}/favicon.ico`, ACCEPT_ALL)
  assert.equal(gzip.headers['content-encoding'], 'gzip')
  assert.ok(gzip.bytes.equals(best.gzip))
  const head = await rawGet(`${server.url}/favicon.ico`, ACCEPT_ALL, 'HEAD')
  assert.deepEqual([head.status, head.headers['content-length'], head.bytes.length], [200, String(best.gzip.length), 0])
  const again = await rawGet(`${server.url}/favicon.ico`, { ...ACCEPT_ALL, 'if-none-match': String(plain.headers['etag']) })
  assert.deepEqual([again.status, again.headers['vary'], again.headers['content-encoding'], again.bytes.length], [304, 'Accept-Encoding', undefined, 0])
})

test('console assets: precompressed at start (br quality 11), picked per Accept-Encoding; the page itself is small and sent as it is', async (t) => {
  const server = await startTestServer(t)
  const plain = await rawGet(`${server.url}/assets/portal.js`)
  assert.equal(plain.headers['content-encoding'], undefined)
  const best = await precompress(plain.bytes.toString('utf8'), 'text/javascript; charset=utf-8')
  assert.ok(best)
  const br = await rawGet(`${server.url}/assets/portal.js`, { 'accept-encoding': 'gzip;q=0.9, br' })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.ok(br.bytes.equals(best.br))
  assert.equal(br.headers['etag'], plain.headers['etag'])
  const gzip = await rawGet(`${server.url}/assets/portal.js`, ACCEPT_ALL)
  assert.ok(gzip.bytes.equals(best.gzip))
  assert.ok(gzip.bytes.length < plain.bytes.length / 2)
})
