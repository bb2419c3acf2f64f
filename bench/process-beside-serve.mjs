#!/usr/bin/env node
/**
 * `replenish process` beside a running `serve` on the same file (issue 15, item 6), run by hand:
 *
 *   npm run build && node bench/process-beside-serve.mjs
 *   node bench/process-beside-serve.mjs --binary /tmp/base/dist/replenish   # another build
 *   node bench/process-beside-serve.mjs --count 300000
 *
 * Seeds a migrated database with the HTTP bench's users (bench/lib/seed.mjs: 1,000 users × 10
 * subscriptions, not due) plus `--count` due subscriptions with two line items each, starts
 * `serve` on it, and runs `process --as-of` against the same file while a client on one
 * keep-alive connection alternates GET of a subscription and PATCH of a line item's quantity,
 * one request at a time, and another connection asks /healthz every 20 ms. Prints p50, p99 and
 * max of the client's requests during the run (GET and PATCH apart, then together), the worst
 * /healthz, and the run's own time. Any answer other than 200 is counted and reported.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { Agent, request } from 'node:http'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { seed } from './lib/seed.mjs'
import { startServer } from './lib/process.mjs'
import { benchEnv } from './lib/env.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const AS_OF = '2026-03-01'
/** Stops the client after this long even if the run has not ended (bounded load). */
const MAX_RUN_MS = 5 * 60_000

const { values: opts } = parseArgs({
  options: {
    binary: { type: 'string', default: join(ROOT, 'dist', 'replenish') },
    count: { type: 'string', default: '100000' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: node bench/process-beside-serve.mjs [--binary PATH] [--count N]\n')
  process.exit(0)
}
const count = Number(opts.count)
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: expected a positive whole number')

const dir = mkdtempSync(join(tmpdir(), 'replenish-beside-'))
const db = join(dir, 'bench.db')
// The server must not run the processor itself (benchEnv turns the schedule off): the CLI's run is what is measured.
const env = benchEnv(db, { REPLENISH_TIME_ZONE: 'UTC' })
const log = (line) => process.stderr.write(line + '\n')

let server
try {
  const migrated = spawnSync(opts.binary, ['migrate'], { env, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  const users = seed(db, AS_OF)
  seedDue(db, count)
  log(`seeded ${count} due subscriptions beside ${users.length * 10} others (${db})`)
  const user = users[0]

  server = await startServer('serve', opts.binary, ['serve'], { env })
  const client = sequentialClient(server.url, user)
  const health = healthProbe(server.url)
  // Warm the server's caches and connections before the run starts.
  await client.run(() => false, 200)
  client.reset()

  const started = performance.now()
  const run = spawn(opts.binary, ['process', '--as-of', AS_OF], { env, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  run.stdout.on('data', (c) => (out += c))
  run.stderr.on('data', (c) => (err += c))
  let running = true
  const exited = new Promise((r) => run.once('exit', (code) => {
    running = false
    r(code)
  }))
  const deadline = started + MAX_RUN_MS
  const [code] = await Promise.all([exited, client.run(() => running && performance.now() < deadline), health.run(() => running && performance.now() < deadline)])
  const runSeconds = (performance.now() - started) / 1000
  if (code !== 0) throw new Error(`process exited with ${code}: ${err}`)

  log(out.trim())
  const all = [...client.get, ...client.patch]
  const line = (name, xs) => `${name.padEnd(7)} n=${String(xs.length).padStart(6)}  p50 ${ms(pct(xs, 0.5))}  p99 ${ms(pct(xs, 0.99))}  max ${ms(Math.max(...xs))}`
  process.stdout.write([
    `binary ${opts.binary}`,
    `process run: ${runSeconds.toFixed(1)} s for ${count} due`,
    line('GET', client.get),
    line('PATCH', client.patch),
    line('all', all),
    `healthz n=${health.times.length}  max ${ms(Math.max(...health.times))}`,
    `answers other than 200: ${client.bad + health.bad}`,
  ].join('\n') + '\n')
} finally {
  if (server) await server.stop()
  rmSync(dir, { recursive: true, force: true })
}

/** `n` monthly subscriptions due in February, two line items each, after the seeded ones. */
function seedDue(file, n) {
  const conn = new DatabaseSync(file)
  const now = new Date().toISOString()
  const first = conn.prepare('SELECT max(id) AS m FROM subscriptions').get().m
  conn.exec('BEGIN')
  conn.exec(`
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day,
        currency, created_on, created_at, updated_at)
      SELECT ${first} + i, (i % 1000) + 1, 'active', 0, 1, 'month', printf('2026-02-%02d', (i % 28) + 1), (i % 28) + 1,
        'USD', '2026-01-01', '${now}', '${now}' FROM k;
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT s.id, k.item, 1, '${now}', '${now}' FROM subscriptions s, (SELECT 1 AS item UNION ALL SELECT 2) k
      WHERE s.id > ${first} ORDER BY s.id, k.item;
  `)
  conn.exec('COMMIT')
  conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  conn.close()
}

/** One connection, one request at a time: GET a subscription, then PATCH a line item, and so on. */
function sequentialClient(base, user) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const state = { get: [], patch: [], bad: 0 }
  let n = 0
  return Object.assign(state, {
    reset() {
      state.get.length = 0
      state.patch.length = 0
      state.bad = 0
    },
    async run(more, limit = Infinity) {
      for (let i = 0; i < limit && (limit !== Infinity || more()); i++) {
        n++
        const isGet = n % 2 === 1
        const sub = user.subscriptions[n % user.subscriptions.length]
        const item = user.lineItems[n % user.lineItems.length]
        const t = performance.now()
        const status = isGet
          ? await send(agent, base, 'GET', `/api/v1/subscriptions/${sub}`, user.key)
          : await send(agent, base, 'PATCH', `/api/v1/line_items/${item}`, user.key, { subscription_line_item: { quantity: (n % 97) + 1 } })
        ;(isGet ? state.get : state.patch).push(performance.now() - t)
        if (status !== 200) state.bad++
      }
    },
  })
}

/** GET /healthz every 20 ms on its own connection: the event loop's worst stall. */
function healthProbe(base) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const state = { times: [], bad: 0 }
  return Object.assign(state, {
    async run(more) {
      while (more()) {
        const t = performance.now()
        if ((await send(agent, base, 'GET', '/healthz')) !== 200) state.bad++
        state.times.push(performance.now() - t)
        await new Promise((r) => setTimeout(r, 20))
      }
    },
  })
}

function send(agent, base, method, path, key, json) {
  const body = json === undefined ? undefined : JSON.stringify(json)
  const headers = { ...(key ? { authorization: `Bearer ${key}` } : {}), ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}) }
  return new Promise((resolvePromise, reject) => {
    const req = request(new URL(path, base), { method, agent, headers }, (res) => {
      res.resume()
      res.once('end', () => resolvePromise(res.statusCode))
    })
    req.once('error', reject)
    req.end(body)
  })
}

function pct(xs, p) {
  if (xs.length === 0) return NaN
  const sorted = [...xs].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]
}

function ms(x) {
  return `${x.toFixed(1).padStart(7)} ms`
}
