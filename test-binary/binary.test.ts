/**
 * Black-box tests of the built executable itself (`npm run build && npm run test:binary`): only
 * dist/replenish, its argv, environment, stdout/stderr, HTTP and signals. No node on its PATH.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { once } from 'node:events'
import { existsSync, mkdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import type { TestContext } from 'node:test'
import { request } from '../test/helpers/server.ts'
import { spawnProcess, tempDir, type Child } from '../test/cli/harness.ts'

const BINARY = fileURLToPath(new URL('../dist/replenish', import.meta.url))
const VERSION = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`)

/** A PATH with nothing on it: the binary must not need a node (or anything else) installed. */
function bareEnv(t: TestContext, extra: Record<string, string> = {}): Record<string, string> {
  const empty = join(tempDir(t), 'empty-bin')
  mkdirSync(empty)
  return { PATH: empty, ...extra }
}

function run(t: TestContext, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnProcess(t, BINARY, args, { cwd: options.cwd ?? tempDir(t), env: options.env ?? bareEnv(t) })
  return child.exited.then(({ code }) => ({ code, stdout: child.stdout(), stderr: child.stderr() }))
}

async function startServe(t: TestContext, cwd: string, env: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = spawnProcess(t, BINARY, ['serve', '--port', '0'], { cwd, env })
  const url = (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  return { child, url }
}

async function stop(child: Child, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  child.kill(signal)
  assert.deepEqual(await child.exited, { code: 0, signal: null })
}

test('runs with no node on PATH: --version, --help, and status 2 for a bad value', async (t) => {
  // The commit and the date build.mjs baked in (release.test.ts checks them against git).
  const version = await run(t, ['--version'])
  assert.match(version.stdout, new RegExp(`^replenish ${VERSION.replaceAll('.', '\\.')} \\(commit [0-9a-f]{12}(-dirty)?, built \\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\)\n$`))
  assert.deepEqual({ ...version, stdout: '' }, { code: 0, stdout: '', stderr: '' })
  const help = await run(t, ['--help'])
  assert.equal(help.code, 0)
  assert.match(help.stdout, /^replenish \S+: recurring-delivery subscriptions/)
  const serveHelp = await run(t, ['serve', '--help'])
  assert.match(serveHelp.stdout, /^Usage: replenish serve/)
  assert.match(serveHelp.stdout, /REPLENISH_RATE_LIMIT +default: 50/)
  assert.deepEqual(await run(t, ['serve', '--port', 'abc']), { code: 2, stdout: '', stderr: 'replenish: --port: expected a port number from 0 to 65535, got "abc"\n' })
  assert.deepEqual(await run(t, ['serve', '--db', '/no/such/dir/r.db']), { code: 2, stdout: '', stderr: 'replenish: --db: the directory /no/such/dir does not exist, got "/no/such/dir/r.db"\n' })
  assert.deepEqual(await run(t, ['serve', '--bogus']), { code: 2, stdout: '', stderr: 'replenish: unknown flag --bogus; try replenish --help\n' })
})

test('the heap is capped for a small footprint: a read cache that cannot fit is refused; --node-options raises the cap, NODE_OPTIONS does not', async (t) => {
  const cwd = tempDir(t)
  const env = bareEnv(t, { REPLENISH_READ_CACHE_MB: '100', REPLENISH_PROCESS_EVERY: '0', NODE_OPTIONS: '--max-old-space-size=400' })
  const refused = await run(t, ['serve', '--port', '0'], { cwd, env })
  assert.equal(refused.code, 2)
  assert.match(refused.stderr, /^replenish: --read-cache-mb \/ REPLENISH_READ_CACHE_MB: 100 MB does not fit a V8 heap of \d+ MB .*--node-options=--max-old-space-size=400 …\n$/)
  const child = spawnProcess(t, BINARY, ['--node-options=--max-old-space-size=400', 'serve', '--port', '0'], { cwd, env })
  await child.waitFor(/^replenish listening on (http:\S+)$/m)
  await stop(child)
})

test('the checkpoint thread runs inside the executable: a write is followed by a background checkpoint', async (t) => {
  const cwd = tempDir(t)
  const token = 'binary-test-admin-token-0123456789'
  const { child, url } = await startServe(t, cwd, bareEnv(t, { REPLENISH_ADMIN_TOKEN: token, REPLENISH_METRICS_PUBLIC: '1', REPLENISH_PROCESS_EVERY: '0' }))
  const created = await request(url, 'POST', '/admin/api/v1/users', { headers: { authorization: `Bearer ${token}` }, json: { user: { email: 'wal@example.com' } } })
  assert.equal(created.status, 201, created.text)
  let background = 0
  for (let i = 0; i < 50 && background === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    const metrics = await request(url, 'GET', '/metrics')
    background = Number(/^replenish_wal_checkpoints_total\{where="background"\} (\d+)$/m.exec(metrics.text)?.[1] ?? 0)
  }
  assert.ok(background >= 1, 'a background checkpoint was counted')
  await stop(child)
  assert.equal(existsSync(join(cwd, 'data', 'replenish.db-wal')), false, 'the WAL was removed at shutdown')
})

test('a whole life: first start, admin set-up, customer calls, backup, SIGTERM, restart with the data still there', async (t) => {
  const cwd = tempDir(t)
  const env = bareEnv(t, { REPLENISH_TODAY: '2026-01-31', REPLENISH_PROCESS_EVERY: '0' })

  // Secrets come from the CLI, alone on the last line of stdout, once `migrate` made the database.
  assert.equal((await run(t, ['migrate'], { cwd, env })).code, 0)
  const tokenRun = await run(t, ['admin-tokens', 'create'], { cwd, env })
  assert.equal(tokenRun.code, 0)
  const token = tokenRun.stdout.trimEnd().split('\n').at(-1) as string
  assert.match(token, /^rpladm_\S{43}$/)
  assert.ok(existsSync(join(cwd, 'data', 'replenish.db')), 'the default database is made on first use')

  const first = await startServe(t, cwd, env)
  const admin = (method: string, path: string, json?: unknown) => request(first.url, method, `/admin/api/v1${path}`, { key: token, ...(json === undefined ? {} : { json }) })
  const user = await admin('POST', '/users', { user: { email: 'ann@example.com', external_id: 'spree-7' } })
  assert.equal(user.status, 201)
  const apiKey = await admin('POST', `/users/${user.body.id}/api_keys`)
  assert.equal(apiKey.status, 201)
  const key = apiKey.body.key as string
  const item = await admin('POST', '/subscribables', { subscribable: { sku: 'COFFEE-1KG', name: 'Coffee' } })
  const method = await admin('POST', '/payment_methods', { payment_method: { name: 'Card' } })
  const source = await admin('POST', '/payment_sources', { payment_source: { user_id: user.body.id, payment_method_id: method.body.id, brand: 'visa', last_digits: '4242' } })
  assert.deepEqual([item.status, method.status, source.status], [201, 201, 201])

  const customer = (m: string, path: string, json?: unknown) => request(first.url, m, `/api/v1${path}`, { key, ...(json === undefined ? {} : { json }) })
  const created = await customer('POST', '/subscriptions', {
    subscription: {
      interval_length: 2, interval_units: 'week', payment_method_id: method.body.id, payment_source_id: source.body.id,
      line_items_attributes: [{ subscribable_id: item.body.id, quantity: 2 }],
    },
  })
  assert.equal(created.status, 200)
  assert.equal(created.body.actionable_date, '2026-02-14')
  assert.equal(created.body.payment_source_id, source.body.id)
  const skipped = await customer('POST', `/subscriptions/${created.body.id}/skip`)
  assert.equal(skipped.status, 200)
  assert.equal(skipped.body.actionable_date, '2026-02-28')
  const lineItem = await customer('PATCH', `/line_items/${created.body.line_items[0].id}`, { subscription_line_item: { quantity: 5 } })
  assert.equal(lineItem.status, 200)
  assert.equal(lineItem.body.quantity, 5)
  const invalid = await customer('PATCH', `/subscriptions/${created.body.id}`, { subscription: { interval_length: -1 } })
  assert.equal(invalid.status, 422)
  const shown = await customer('GET', `/subscriptions/${created.body.id}`)
  assert.equal(shown.status, 200)
  assert.equal(shown.body.line_items[0].quantity, 5)

  assert.deepEqual((await request(first.url, 'GET', '/healthz')).body, { status: 'ok' })
  const ready = (await request(first.url, 'GET', '/readyz')).body
  assert.deepEqual([ready.status, Object.keys(ready)], ['ready', ['status', 'oldest_overdue_actionable_date']])
  assert.deepEqual((await request(first.url, 'GET', '/metrics')).body, { error: 'You must specify an admin token.' })
  const metrics = await request(first.url, 'GET', '/metrics', { key: token })
  assert.match(metrics.text, /^replenish_http_requests_total\{method="POST",route="\/api\/v1\/subscriptions\/:id\/skip",status="200"\} 1$/m)

  // An online backup, taken by a second process while the server runs.
  const backup = await run(t, ['backup', 'backup.db'], { cwd, env })
  assert.deepEqual(backup, { code: 0, stdout: 'backup of data/replenish.db written to backup.db\n', stderr: '' })

  await stop(first.child)
  const log = first.child.stdout().trimEnd().split('\n')
  assert.match(log[0] as string, /^replenish listening on /)
  for (const line of log.slice(1)) assert.deepEqual(Object.keys(JSON.parse(line)), ['time', 'method', 'route', 'status', 'ms', 'request_id', 'user_id'])
  for (const secret of [token, key]) assert.ok(!(first.child.stdout() + first.child.stderr()).includes(secret), 'a secret reached the logs')

  // Restart: same database, same answers.
  const second = await startServe(t, cwd, env)
  const again = await request(second.url, 'GET', `/api/v1/subscriptions/${created.body.id}`, { key })
  assert.equal(again.status, 200)
  assert.deepEqual(again.body, shown.body)
  await stop(second.child, 'SIGINT')

  // A server on the backup serves the same data.
  const restored = await startServe(t, cwd, { ...env, REPLENISH_DB: 'backup.db' })
  const fromBackup = await request(restored.url, 'GET', `/api/v1/subscriptions/${created.body.id}`, { key })
  assert.deepEqual(fromBackup.body, shown.body)
  await stop(restored.child)
})

test('SIGTERM lets a slow request finish before exiting 0', async (t) => {
  const cwd = tempDir(t)
  const env = bareEnv(t, { REPLENISH_PROCESS_EVERY: '0' })
  assert.equal((await run(t, ['migrate'], { cwd, env })).code, 0)
  assert.equal((await run(t, ['users', 'create', '--email', 'bo@example.com'], { cwd, env })).code, 0)
  const key = (await run(t, ['keys', 'create', '--user', '1'], { cwd, env })).stdout.trimEnd().split('\n').at(-1) as string
  const { child, url } = await startServe(t, cwd, env)
  const body = JSON.stringify({ subscription: { interval_length: 2 } })
  const req = http.request(`${url}/api/v1/subscriptions`, {
    method: 'POST', agent: false,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), expect: '100-continue' },
  })
  const answered = once(req, 'response').then(async ([res]) => {
    let text = ''
    for await (const chunk of res as http.IncomingMessage) text += chunk
    return { status: (res as http.IncomingMessage).statusCode, body: JSON.parse(text) }
  })
  req.flushHeaders()
  await once(req, 'continue')
  req.write(body.slice(0, 5))
  child.kill('SIGTERM')
  while (!child.stderr().includes('SIGTERM received')) await new Promise((resolve) => setTimeout(resolve, 5))
  req.end(body.slice(5))
  const res = await answered
  assert.equal(res.status, 200)
  assert.equal(res.body.interval_length, 2)
  assert.deepEqual(await child.exited, { code: 0, signal: null })
})

test('a database newer than the binary is refused with both versions named (status 3)', async (t) => {
  const cwd = tempDir(t)
  const env = bareEnv(t)
  const migrated = await run(t, ['migrate', '--db', 'r.db'], { cwd, env })
  assert.equal(migrated.code, 0)
  const schema = Number(/schema version (\d+)/.exec(migrated.stdout)?.[1])
  const raw = new DatabaseSync(join(cwd, 'r.db'))
  raw.exec('PRAGMA user_version = 500')
  raw.close()
  assert.deepEqual(await run(t, ['serve', '--db', 'r.db', '--port', '0'], { cwd, env }), {
    code: 3,
    stdout: '',
    stderr: `replenish: cannot use the database r.db: its schema is version 500, newer than this replenish understands (version ${schema}); run a newer replenish or restore a backup made for this version\n`,
  })
})
