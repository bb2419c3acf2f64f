import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import type { TestServer } from './server.ts'

/**
 * Raw HTTP/1.1 over kept-alive sockets, to put a known set of requests into the server's hands at
 * once: `burst` writes them all in one synchronous loop, so the server's next poll of the event
 * loop finds every one of them readable and handles them all before a batch's COMMIT (queued
 * with setImmediate) runs, their handlers interleaving at each await.
 */

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly key: string
  readonly json?: unknown
}

export interface RawResponse {
  readonly status: number
  readonly body: any
}

/** Opens `n` keep-alive connections and makes one round trip on each, so the server holds them all. */
export async function connections(server: TestServer, n: number): Promise<net.Socket[]> {
  const { hostname, port } = new URL(server.url)
  const sockets = await Promise.all(
    Array.from({ length: n }, () =>
      new Promise<net.Socket>((resolve, reject) => {
        const s = net.connect(Number(port), hostname, () => resolve(s))
        s.setNoDelay(true)
        s.once('error', reject)
      }),
    ),
  )
  for (const s of sockets) s.write(`GET /no-such-path HTTP/1.1\r\nhost: test\r\n\r\n`)
  const warm = await Promise.all(sockets.map(readResponse))
  assert.ok(warm.every((r) => r.status === 404))
  return sockets
}

/** Sends one request on each socket, all in one synchronous loop, and collects the answers. */
export async function burst(sockets: net.Socket[], requests: readonly RawRequest[]): Promise<RawResponse[]> {
  assert.ok(requests.length <= sockets.length)
  const answers = requests.map((_, i) => readResponse(sockets[i] as net.Socket))
  requests.forEach((r, i) => {
    const body = r.json === undefined ? '' : JSON.stringify(r.json)
    ;(sockets[i] as net.Socket).write(
      `${r.method} ${r.path} HTTP/1.1\r\nhost: test\r\nauthorization: Bearer ${r.key}\r\n` +
        `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    )
  })
  return Promise.all(answers)
}

/** Reads one HTTP/1.1 response with a content-length body off a socket. */
export function readResponse(socket: net.Socket): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0)
    const onData = (chunk: Buffer): void => {
      buffer = Buffer.concat([buffer, chunk])
      const end = buffer.indexOf('\r\n\r\n')
      if (end === -1) return
      const head = buffer.subarray(0, end).toString('latin1')
      const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0)
      if (buffer.length < end + 4 + length) return
      socket.off('data', onData)
      socket.off('error', reject)
      const text = buffer.subarray(end + 4, end + 4 + length).toString('utf8')
      resolve({ status: Number(head.slice(9, 12)), body: text.length > 0 ? JSON.parse(text) : undefined })
    }
    socket.on('data', onData)
    socket.once('error', reject)
  })
}

export function closeAll(sockets: net.Socket[]): void {
  for (const s of sockets) s.destroy()
}

export interface RawAnswer {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  /** The body as sent: compressed when it was (fetch would decompress it). */
  readonly bytes: Buffer
}

/** One request through node:http, its answer's bytes kept as they came. */
export function rawGet(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, bytes: Buffer.concat(chunks) }))
      res.on('error', reject)
    })
    req.on('error', reject)
    req.end()
  })
}
