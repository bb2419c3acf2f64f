import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { TestContext } from 'node:test'
import { webhookDispatcher, type Dispatcher, type DispatcherOptions } from '../../src/processing/webhooks/dispatcher.ts'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, type TestServer } from './server.ts'

/** A request a receiver got: when, its headers, its raw body. */
export interface Received {
  readonly at: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface Receiver {
  readonly url: string
  readonly received: Received[]
  /** Resolves once `n` requests have arrived (rejects after `ms`, a minute unless told: a hang, not a slow machine). */
  waitFor(n: number, ms?: number): Promise<Received[]>
  close(): Promise<void>
}

/**
 * A real HTTP receiver on 127.0.0.1: `answer` decides each reply (status, body), given the request
 * and how many came before it; it may also never answer (a hanging receiver).
 */
export async function startReceiver(
  t: TestContext | undefined,
  answer: (req: IncomingMessage, res: ServerResponse, index: number, body: string) => void = (_q, res) => res.end('ok'),
): Promise<Receiver> {
  const received: Received[] = []
  const waiters: { n: number; resolve: () => void }[] = []
  const server = createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8')
      const index = received.length
      received.push({ at: Date.now(), headers: req.headers, body })
      for (const w of [...waiters]) if (received.length >= w.n) w.resolve()
      answer(req, res, index, body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
  t?.after(close)
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    close,
    waitFor(n: number, ms = 60_000) {
      if (received.length >= n) return Promise.resolve(received.slice())
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`receiver got ${received.length} of ${n} requests in ${ms} ms`)), ms)
        waiters.push({ n, resolve: () => {
          clearTimeout(timer)
          resolve(received.slice())
        } })
      })
    },
  }
}

/** serve's dispatcher on a test server's store, told of endpoint changes as serve's is; stopped when the server closes, before its store. */
export function startDispatcher(server: TestServer, options: Partial<DispatcherOptions> = {}): Dispatcher {
  const dispatcher = webhookDispatcher({ store: server.store, retryBaseSeconds: 1, log: (e) => server.errors.push(e), pollMs: 20, ...options })
  server.app.endpointsChanged.add(() => dispatcher.refresh())
  dispatcher.start()
  server.beforeClose(() => dispatcher.stop(100))
  return dispatcher
}

/** Registers an endpoint through the admin API (201 required) and answers its body, secret included. */
export async function registerEndpoint(server: TestServer, url: string, events: string[] = ['*']): Promise<{ id: number; secret: string } & Record<string, any>> {
  const res = await server.request('POST', '/admin/api/v1/webhook_endpoints', { key: ADMIN_TOKEN, json: { webhook_endpoint: { url, events } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** `n` events: a `subscription.created` each, for one new customer. */
export async function makeEvents(server: TestServer, n: number): Promise<void> {
  const user = await seedUser(server.store)
  for (let i = 0; i < n; i++) await createSubscription(server, user.key)
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Reads until `done` holds of what was read, and answers it; fails after `ms` (a minute unless told: a hang, not a slow machine). */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not within ${ms} ms: ${JSON.stringify(value).slice(0, 500)}`)
    await sleep(25)
  }
}
