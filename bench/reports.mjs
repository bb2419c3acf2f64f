#!/usr/bin/env node
/**
 * `npm run bench:reports`: C16's two reports on a big shop (issue 26), through a real `serve`.
 *
 * Seeds a fresh, migrated SQLite database straight through node:sqlite: 1,000 users, a catalog of
 * 20 items priced in USD and EUR (some with a discount, one without a USD price), 1,000,000
 * subscriptions made over the 3 years before the run (mixed intervals and currencies, 85 %
 * acting of which some paused, the rest canceled or ended at a later date), two line items each,
 * their `subscription.created` events and one `subscription.canceled` for each canceled one, and
 * one month of installments (one per acting subscription), fulfilled. The migration's triggers
 * keep the monthly counts as the rows go in, as they would in production. Then times
 * `GET /admin/api/v1/reports/recurring` and `/reports/monthly` over the 36 months (several runs
 * each, after one warm-up) against `replenish serve` on that database. The last line is exactly:
 *
 *   reports on <N> subscriptions: recurring <S> s, monthly <S> s (median of <R>; server CPU <S> s and <S> s)
 *
 * The server's CPU time per request (from /proc) is given beside the wall time: on a machine
 * others share, it is the figure that does not depend on them.
 *
 *   npm run bench:reports                      # 1,000,000
 *   npm run bench:reports -- --count 100000    # while developing
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { startServer } from './lib/process.mjs'
import { replenishCommand } from './lib/replenish-command.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const TOKEN = 'bench-reports-admin-token-0123456789'

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    runs: { type: 'string', default: '5' },
    dir: { type: 'string' },
    'keep-db': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npm run bench:reports [-- --count N] [--runs R] [--dir DIR] [--keep-db]\n')
  process.exit(0)
}
const count = Number(opts.count)
const runs = Number(opts.runs)
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: expected a positive whole number')
if (!Number.isSafeInteger(runs) || runs < 1) throw new Error('--runs: expected a positive whole number')

const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'replenish-bench-reports-'))
const db = join(dir, 'bench.db')
const { command, prefix, label } = replenishCommand(ROOT)
const env = { ...process.env, REPLENISH_DB: db, REPLENISH_TIME_ZONE: 'UTC', REPLENISH_ADMIN_TOKEN: TOKEN, REPLENISH_PROCESS_EVERY: '0', REPLENISH_PORT: '0' }
delete env.REPLENISH_TODAY

const log = (line) => process.stderr.write(line + '\n')
log(`running ${label}`)

const now = new Date()
const thisMonth = now.toISOString().slice(0, 7)
const monthsAgo = (n) => {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 1))
  return d.toISOString().slice(0, 7)
}

let server
try {
  const migrated = spawnSync(command, [...prefix, 'migrate'], { env, cwd: ROOT, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  let t = performance.now()
  seed(db, count)
  log(`seeded ${count} subscriptions over 36 months in ${((performance.now() - t) / 1000).toFixed(1)} s (${db})`)

  server = await startServer('replenish', command, [...prefix, 'serve'], { env, cwd: ROOT })
  const time = async (path) => {
    const started = performance.now()
    const cpu = serverCpu(server.pid)
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } })
    const body = await res.text()
    const seconds = (performance.now() - started) / 1000
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${body}`)
    return { seconds, cpu: serverCpu(server.pid) - cpu, body: JSON.parse(body) }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
  const measure = async (path) => {
    const first = await time(path) // warm-up: the first read loads the pages from disk
    const done = []
    for (let i = 0; i < runs; i++) done.push(await time(path))
    log(`${path}: warm-up ${first.seconds.toFixed(3)} s, runs ${done.map((d) => d.seconds.toFixed(3)).join(' ')} s (server CPU ${done.map((d) => d.cpu.toFixed(2)).join(' ')} s)`)
    return { seconds: median(done.map((d) => d.seconds)), cpu: median(done.map((d) => d.cpu)), body: first.body }
  }
  const recurring = await measure('/admin/api/v1/reports/recurring?currency=USD')
  log(`recurring: ${JSON.stringify(recurring.body)}`)
  const monthly = await measure(`/admin/api/v1/reports/monthly?currency=USD&from=${monthsAgo(35)}&to=${thisMonth}`)
  const last = monthly.body.months.at(-1)
  log(`monthly: ${monthly.body.months.length} months; the last: ${JSON.stringify(last)}`)
  if (recurring.body.active_subscriptions === 0 || monthly.body.months.length !== 36) throw new Error('the reports read nothing: the seed is wrong')
  process.stdout.write(`reports on ${count} subscriptions: recurring ${recurring.seconds.toFixed(2)} s, monthly ${monthly.seconds.toFixed(3)} s (median of ${runs}; ` +
    `server CPU ${recurring.cpu.toFixed(2)} s and ${monthly.cpu.toFixed(2)} s)\n`)
} finally {
  await server?.stop()
  if (!opts['keep-db'] && !opts.dir) rmSync(dir, { recursive: true, force: true })
}

/** The server's CPU time so far (user + system, /proc), in seconds: what a request cost, whatever else runs on the machine. */
function serverCpu(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/**
 * The shop, as described above. Subscription i was made on day (i mod 28) + 1 of the month
 * (i mod 36) months ago; the canceled and ended ones changed (i mod 5) months after that, or this
 * month when that is later.
 */
function seed(file, n) {
  const conn = new DatabaseSync(file)
  const stamp = now.toISOString()
  conn.exec('PRAGMA synchronous = OFF')
  conn.exec('PRAGMA cache_size = -1500000')
  // Made `k` months before this one, on `day`: SQLite's date arithmetic, at 10:00 UTC.
  const madeAt = (k, day) => `strftime('%Y-%m-', '${thisMonth}-01', '-' || (${k}) || ' months') || printf('%02d', ${day}) || 'T10:00:00.000Z'`
  conn.exec('BEGIN')
  conn.exec(`
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
    INSERT INTO users (id, email, created_at, updated_at) SELECT i, 'bench' || i || '@example.com', '${stamp}', '${stamp}' FROM k;
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20)
    INSERT INTO subscribables (id, sku, name, subscribable, discount_bp, discount_percent, created_at, updated_at)
      SELECT i, 'ITEM-' || i, 'Item ' || i, 1, CASE WHEN i % 4 = 0 THEN 1000 WHEN i % 7 = 0 THEN 1250 ELSE 0 END,
        CASE WHEN i % 4 = 0 THEN '10' WHEN i % 7 = 0 THEN '12.5' ELSE '0' END, '${stamp}', '${stamp}' FROM k;
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 20)
    INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit)
      SELECT subscribable_id, currency, amount, printf('%d.%02d', amount / 100, amount % 100), 100
      FROM (SELECT i AS subscribable_id, 'USD' AS currency, 199 + i * 137 AS amount FROM k WHERE i <> 20 UNION ALL SELECT i, 'EUR', 189 + i * 131 FROM k);
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day,
        currency, created_on, created_at, updated_at)
      SELECT i, (i % 1000) + 1,
        CASE WHEN i % 20 < 17 THEN 'active' WHEN i % 20 < 19 THEN 'canceled' ELSE 'inactive' END,
        CASE WHEN i % 20 < 17 AND i % 13 = 0 THEN 1 ELSE 0 END,
        CASE i % 4 WHEN 0 THEN 1 WHEN 1 THEN 2 WHEN 2 THEN 1 ELSE 3 END,
        CASE i % 9 WHEN 0 THEN 'week' WHEN 1 THEN 'day' WHEN 2 THEN 'year' ELSE 'month' END,
        CASE WHEN i % 20 < 17 THEN '2099-01-' || printf('%02d', (i % 28) + 1) END, (i % 28) + 1,
        CASE WHEN i % 10 = 0 THEN 'EUR' ELSE 'USD' END,
        substr(${madeAt('i % 36', '(i % 28) + 1')}, 1, 10), ${madeAt('i % 36', '(i % 28) + 1')},
        CASE WHEN i % 20 < 17 THEN ${madeAt('i % 36', '(i % 28) + 1')} ELSE ${madeAt('max(i % 36 - (i % 5), 0)', '28')} END
      FROM k;
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT s.id, ((s.id + k.j * 7) % 20) + 1, k.j + (s.id % 3), s.created_at, s.created_at FROM subscriptions s, (SELECT 0 AS j UNION ALL SELECT 1) k
      ORDER BY s.id, k.j;
    -- Their events: created (the chain's first link), then canceled for the canceled ones.
    INSERT INTO events (id, type, subscription_id, data, created_at, prev_id)
      SELECT id, 'subscription.created', id, '{"object":{}}', created_at, NULL FROM subscriptions ORDER BY id;
    INSERT INTO events (id, type, subscription_id, data, created_at, prev_id)
      SELECT ${n} + id, 'subscription.canceled', id, '{"object":{}}', updated_at, id FROM subscriptions WHERE state = 'canceled' ORDER BY id;
    -- One month of installments, made on the 1st of last month, fulfilled the day after.
    INSERT INTO installments (subscription_id, due_date, state, line_items, currency, subtotal, discount_total, total, created_at, updated_at)
      SELECT id, '${monthsAgo(1)}-01', 'pending', '[]', currency, '10.00', '0.00', '10.00', '${monthsAgo(1)}-01T06:00:00.000Z', '${monthsAgo(1)}-01T06:00:00.000Z'
      FROM subscriptions WHERE state = 'active' ORDER BY id;
    INSERT INTO report_months (currency, month, installments_made) SELECT currency, substr(created_at, 1, 7), count(*) FROM installments WHERE true GROUP BY 1, 2
      ON CONFLICT (currency, month, shard) DO UPDATE SET installments_made = installments_made + excluded.installments_made;
    UPDATE installments SET state = 'fulfilled', updated_at = '${monthsAgo(1)}-02T06:00:00.000Z';
  `)
  conn.exec('COMMIT')
  conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  conn.close()
}
