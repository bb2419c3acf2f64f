import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { listen } from '../../src/http/server.ts'
import type { Route } from '../../src/http/types.ts'
import { runCli, spawnCli, tempDir } from '../cli/harness.ts'
import { until } from '../helpers/wait.ts'

interface Answer {
  status: number
  headers: http.IncomingHttpHeaders
  body: any
}

function collect(res: http.IncomingMessage): Promise<Answer> {
  return new Promise((resolve) => {
    let text = ''
    res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) }))
  })
}

test('SIGTERM: a slow request in flight finishes, new connections are refused, the database is closed, exit 0', async (t) => {
  const db = join(tempDir(t), 'r.db')
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
  assert.equal((await runCli(['users', 'create', '--email', 'ann@example.com'], { REPLENISH_DB: db })).status, 0)
  const key = (await runCli(['keys', 'create', '--user', '1'], { REPLENISH_DB: db })).stdout.at(-1) as string
  const child = spawnCli(t, ['serve'], { env: { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_PROCESS_EVERY: '0', REPLENISH_ADMIN_TOKEN: 'an-admin-token-for-this-test' } })
  const url = (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string

  // Headers now (Expect: 100-continue tells us the server has the request in hand), the body later.
  const body = JSON.stringify({ subscription: { interval_length: 3, interval_units: 'week' } })
  const req = http.request(`${url}/api/v1/subscriptions`, {
    method: 'POST',
    agent: false,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  })
  const answered = once(req, 'response').then(([res]) => collect(res as http.IncomingMessage))
  req.flushHeaders()
  await once(req, 'continue')
  req.write(body.slice(0, 10))

  child.kill('SIGTERM')
  await until('serve to say it received SIGTERM', () => child.stderr().includes('SIGTERM received'))
  await assert.rejects(fetch(`${url}/healthz`), (e: Error) => (e.cause as NodeJS.ErrnoException | undefined)?.code === 'ECONNREFUSED')

  req.end(body.slice(10))
  const res = await answered
  assert.equal(res.status, 200)
  assert.equal(res.body.interval_length, 3)
  assert.equal(res.body.interval_units, 'week')
  assert.equal(res.headers['connection'], 'close')
  assert.deepEqual(await child.exited, { code: 0, signal: null })

  // Closed cleanly: the last connection to a WAL database checkpoints and removes the -wal file.
  assert.equal(existsSync(`${db}-wal`), false)
  // The answered write is in the database, and the last log line is that request.
  const raw = new DatabaseSync(db, { readOnly: true })
  assert.deepEqual({ ...(raw.prepare('SELECT id, interval_length FROM subscriptions').get() as object) }, { id: res.body.id, interval_length: 3 })
  raw.close()
  const last = JSON.parse(child.stdout().trimEnd().split('\n').at(-1) as string)
  assert.deepEqual([last.method, last.route, last.status, last.user_id], ['POST', '/api/v1/subscriptions', 200, 1])
  assert.equal(child.stderr(), 'replenish: SIGTERM received, finishing in-flight requests\n')
})

test('SIGINT closes idle kept-alive connections at once instead of waiting for their time-out', async (t) => {
  const db = join(tempDir(t), 'r.db')
  // An idle connection left alone would hold shutdown until the 10 s cap.
  const child = spawnCli(t, ['serve'], { env: { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_PROCESS_EVERY: '0', REPLENISH_KEEP_ALIVE_TIMEOUT_MS: '60000' } })
  const url = (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  const agent = new http.Agent({ keepAlive: true })
  t.after(() => agent.destroy())
  const req = http.get(`${url}/healthz`, { agent })
  const [res] = (await once(req, 'response')) as [http.IncomingMessage]
  const socket = res.socket
  assert.deepEqual((await collect(res)).body, { status: 'ok' })
  assert.equal(res.headers['connection'], 'keep-alive')
  const closed = once(socket, 'close')

  const signalled = Date.now()
  child.kill('SIGINT')
  await closed
  assert.deepEqual(await child.exited, { code: 0, signal: null })
  assert.ok(Date.now() - signalled < 8000, 'exited well before the 10 s cap')
})

function testServer(routes: Route[]) {
  return listen({ routes, maxBodyBytes: 1024, headersTimeoutMs: 5000, requestTimeoutMs: 5000, keepAliveTimeoutMs: 5000, onResponse: () => {}, logError: () => {} }, '127.0.0.1', 0)
}

test('while draining, an answer on a kept-alive connection carries Connection: close', async (t) => {
  let release!: () => void
  let started = false
  const server = await testServer([['GET', '/slow', async () => {
    started = true
    await new Promise<void>((resolve) => (release = resolve))
    return { status: 200, body: { done: true } }
  }]])
  const agent = new http.Agent({ keepAlive: true })
  t.after(() => agent.destroy())
  const req = http.get(`${server.url}/slow`, { agent })
  const answered = once(req, 'response').then(([res]) => collect(res as http.IncomingMessage))
  await until('the handler to start', () => started)
  const closing = server.close(5000)
  release()
  const res = await answered
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { done: true })
  assert.equal(res.headers['connection'], 'close')
  await closing
})

test('a request still running when the grace period ends is cut off, and close resolves', async () => {
  let started = false
  const server = await testServer([['GET', '/hang', () => {
    started = true
    return new Promise(() => {})
  }]])
  const pending = fetch(`${server.url}/hang`).then(() => 'answered', (e: Error) => (e.cause as NodeJS.ErrnoException | undefined)?.code ?? e.message)
  await until('the handler to start', () => started)
  await server.close(100)
  assert.equal(await pending, 'UND_ERR_SOCKET')
})
