import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { EventEmitter } from 'node:events'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { BodyCutOff, giveBack, readBody } from '../../src/http/body.ts'
import { listen } from '../../src/http/server.ts'
import type { Handler } from '../../src/http/types.ts'

/**
 * readBody takes a body that arrived with its headers straight from node:http's buffer, and
 * streams one that is still arriving. Each test writes raw bytes on a socket, so it decides
 * what arrives together, and the server answers what readBody gave it.
 */
async function bodyServer(t: TestContext, limit: number): Promise<number> {
  const server = http.createServer((req, res) => {
    readBody(req, limit).then(
      (body) => res.end(JSON.stringify({ length: body.length, text: body.toString('utf8') })),
      (err: { status?: number }) => res.writeHead(err.status ?? 500).end(),
    )
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return (server.address() as AddressInfo).port
}

/** Sends `parts` on one connection, `pauseMs` apart, and answers the status line and body. */
function send(port: number, parts: string[], pauseMs = 0): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1')
    let data = ''
    socket.on('data', (chunk) => { data += chunk.toString('utf8') })
    socket.on('error', reject)
    socket.on('close', () => {
      const status = Number(data.slice(9, 12))
      resolve({ status, body: data.slice(data.indexOf('\r\n\r\n') + 4) })
    })
    socket.on('connect', async () => {
      for (const [i, part] of parts.entries()) {
        if (i > 0 && pauseMs > 0) await new Promise((r) => setTimeout(r, pauseMs))
        socket.write(part)
      }
    })
  })
}

const head = (extra: string): string => `POST /x HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\n${extra}\r\n`

test('a body that came with its headers is read whole, from the buffer', async (t) => {
  const port = await bodyServer(t, 1000)
  const body = '{"subscription_line_item":{"quantity":3}}'
  const res = await send(port, [head(`content-length: ${body.length}\r\n`) + body])
  assert.equal(res.status, 200)
  assert.deepEqual(JSON.parse(res.body), { length: body.length, text: body })
})

test('a chunked body is joined, and refused past the limit', async (t) => {
  const port = await bodyServer(t, 10)
  const ok = await send(port, [`${head('transfer-encoding: chunked\r\n')}4\r\n{"a"\r\n4\r\n:12}\r\n0\r\n\r\n`])
  assert.equal(ok.status, 200)
  assert.equal(JSON.parse(ok.body).text, '{"a":12}')
  const over = await send(port, [`${head('transfer-encoding: chunked\r\n')}6\r\n{"a":1\r\n6\r\n23456}\r\n0\r\n\r\n`])
  assert.equal(over.status, 413)
})

test('a body still arriving after the headers is streamed until its end', async (t) => {
  const port = await bodyServer(t, 1000)
  const res = await send(port, [head('content-length: 13\r\n'), '{"a":', '"later"}'], 30)
  assert.equal(res.status, 200)
  assert.deepEqual(JSON.parse(res.body), { length: 13, text: '{"a":"later"}' })
  const over = await send(port, [head('transfer-encoding: chunked\r\n'), '400\r\n' + 'x'.repeat(1024) + '\r\n', '0\r\n\r\n'], 30)
  assert.equal(over.status, 413)
})

test('a declared length over the limit is refused before any byte is read; a zero length is no body', async (t) => {
  const port = await bodyServer(t, 10)
  assert.equal((await send(port, [head('content-length: 11\r\n')])).status, 413)
  const empty = await send(port, [head('content-length: 0\r\n')])
  assert.equal(empty.status, 200)
  assert.equal(JSON.parse(empty.body).length, 0)
})

test('a request already closed when its body is read is a BodyCutOff, not a read that never settles', { timeout: 5000 }, async (t) => {
  let settled!: (outcome: string) => void
  const outcome = new Promise<string>((resolve) => (settled = resolve))
  const server = http.createServer((req) => {
    req.destroy()
    readBody(req, 1000).then(() => settled('read'), (err: Error) => settled(err instanceof BodyCutOff ? 'cut off' : err.name))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  socket.on('error', () => {})
  socket.write(head('content-length: 13\r\n') + '{"a":')
  assert.equal(await outcome, 'cut off')
  socket.destroy()
})

test('a client that goes away mid-body makes the read fail with BodyCutOff', async (t) => {
  let settled!: (outcome: string) => void
  const outcome = new Promise<string>((resolve) => (settled = resolve))
  const server = http.createServer((req) => {
    readBody(req, 1000).then(() => settled('read'), (err: Error) => settled(err instanceof BodyCutOff ? 'cut off' : err.name))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const socket = net.connect((server.address() as AddressInfo).port, '127.0.0.1')
  socket.write(head('content-length: 13\r\n') + '{"a":', () => setTimeout(() => socket.destroy(), 20))
  assert.equal(await outcome, 'cut off')
})

test('issue 25: a body still arriving with its length declared is read into one buffer of that length, alone on its memory', async (t) => {
  let got: Buffer | undefined
  const server = http.createServer((req, res) => {
    readBody(req, 10_000_000).then((body) => {
      got = body
      res.end('ok')
    }, () => res.writeHead(500).end())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const body = 'x'.repeat(3_000_000)
  const res = await send((server.address() as AddressInfo).port, [head(`content-length: ${body.length}\r\n`), body.slice(0, 1000), body.slice(1000)], 20)
  assert.equal(res.status, 200)
  assert.ok(got)
  assert.equal(got.toString('latin1'), body)
  assert.deepEqual([got.byteOffset, got.buffer.byteLength], [0, body.length])
})

test('issue 25: with its length declared, each chunk is copied as it comes and not kept (no second copy of a large body)', async () => {
  // A stand-in for the request, so the test owns the chunks: each is spoiled right after it was
  // handed over. A reader that kept them to join at the end would return the spoiled bytes.
  const req = Object.assign(new EventEmitter(), { headers: { 'content-length': '6' }, destroyed: false, readableLength: 0 })
  const read = readBody(req as unknown as http.IncomingMessage, 100)
  await new Promise((resolve) => setImmediate(resolve))
  for (const text of ['abc', 'def']) {
    const chunk = Buffer.from(text)
    req.emit('data', chunk)
    chunk.fill('z')
  }
  req.emit('end')
  assert.equal((await read).toString(), 'abcdef')
})

test('issue 25: a large body is given back when its request has been answered; a small one, or a slice of a larger buffer, is left alone', async (t) => {
  const seen: Buffer[] = []
  const keep: Handler = (ctx) => {
    seen.push(ctx.rawBody)
    return { status: 200, body: { length: ctx.rawBody.length } }
  }
  const server = await listen({
    routes: [['POST', '/raw', keep, { rawBodyType: 'application/x-ndjson', maxBodyBytes: 10_000_000 }]],
    maxBodyBytes: 1000, headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1000,
    onResponse: () => {}, logError: () => {},
  }, '127.0.0.1', 0)
  t.after(() => server.close(1000))
  const post = async (size: number): Promise<unknown> => {
    const res = await fetch(`${server.url}/raw`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: 'y'.repeat(size) })
    return res.json()
  }
  assert.deepEqual(await post(2_000_000), { length: 2_000_000 })
  assert.deepEqual(await post(500), { length: 500 })
  // The handler had them whole; once answered, the large one's memory is released (a view of it
  // reads as empty), the small one is as it was.
  assert.deepEqual(seen.map((b) => b.length), [0, 500])
  const slice = Buffer.alloc(3_000_000).subarray(0, 2_000_000)
  giveBack(slice)
  assert.equal(slice.length, 2_000_000, 'a slice of a larger buffer is not released')
})
