#!/usr/bin/env node
/**
 * `npm run bench:mail`: customers' mails (C17, issue 27) from the built binary to a local SMTP sink
 * (bench/lib/smtp-sink.mjs, its own process), on a fresh database.
 *
 * (a) Announce. `--mails` (100,000) subscriptions are due two days after today, and
 *     `replenish process` (with e-mail configured) writes a `subscription.upcoming` event for each
 *     and queues its mail in the same unit: upcoming/s.
 * (b) Drain. `serve` starts with the sink up and nothing else to do: mails/s is the backlog divided
 *     by the time from `serve` listening to the sink having taken every mail; serve's peak RSS over
 *     it. Each mail is rendered (in one of four languages), gets its one-time portal link (a row
 *     written in the claiming unit) and goes over one of four pooled SMTP connections.
 * (c) Requests while mails drain. PATCH line item quantity at `--rate` (500/s) for `--seconds`
 *     (20), paced open loop (bench/lib/paced-patch.mjs): once with the outbox empty, once while a
 *     second backlog (`--during`, 50,000: more than the load's seconds can drain) is being sent.
 *     The target: PATCH p99 during the drain within 2× of without. Each measurement follows
 *     3 s of the same load, not counted: the second case runs on a `serve` started just before
 *     it (the backlog is queued by a `process` run in between), and a cold server's first
 *     requests (JIT, the binary's pages) made most of its p99 beside the first case's warm one.
 *
 * Pinning as in `npm run bench`: replenish (serve, process) on cpu 0; the sink and the load on cpu 1.
 * Fails on a mail not taken, a mail taken twice, a failed mail or a non-2xx PATCH.
 *
 *   npm run bench:mail
 *   npm run bench:mail -- --quick      # 10,000 mails, 5,000 during 5 s of load (development)
 */
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { cpuSecondsOf, hasCommand, memoryPoller, pinned, runForResult, startServer } from './lib/process.mjs'
import { benchEnv } from './lib/env.mjs'
import { machine, waitQuiet } from './lib/machine.mjs'
import { seed, writeLuaData, sqliteVersion } from './lib/seed.mjs'
import { renderProfile, summarizeProfile } from './lib/profile-summary.mjs'
import { readdirSync, readFileSync, statSync } from 'node:fs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    mails: { type: 'string' },
    during: { type: 'string' },
    rate: { type: 'string', default: '500' },
    seconds: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write(`usage: npm run bench:mail [-- options]
  --mails N      the backlog drained alone (default 100000; 10000 with --quick)
  --during N     the backlog drained under PATCH load (default 50000; 5000 with --quick)
  --rate N       PATCH per second (default 500)
  --seconds N    how long each PATCH load runs (default 20; 5 with --quick)
  --no-pin       do not pin replenish and the outside world to separate cores
  --profile      the drain only, serve from source under --cpu-prof: its hottest functions
`)
  process.exit(0)
}
const mails = Number(opts.mails ?? (opts.quick ? 10_000 : 100_000))
const during = Number(opts.during ?? (opts.quick ? 5_000 : 50_000))
const rate = Number(opts.rate)
/** Seconds of the PATCH load before each measured one, not counted (see (c) above). */
const WARM_UP_SECONDS = 3
const seconds = Number(opts.seconds ?? (opts.quick ? 5 : 20))
const binary = join(ROOT, 'dist', 'replenish')
if (!existsSync(binary)) die('dist/replenish is missing: run `npm run build` first (this bench measures the built binary)')
const pin = !opts['no-pin'] && availableParallelism() >= 2 && hasCommand('taskset', '-V')
const serverCpu = pin ? 0 : undefined
const outsideCpu = pin ? 1 : undefined

const work = mkdtempSync(join(tmpdir(), 'replenish-bench-mail-'))
const dbFile = join(work, 'bench.db')
const dataFile = join(work, 'keys.txt')
const adminToken = randomBytes(24).toString('hex')
const today = new Date().toISOString().slice(0, 10)
const addDays = (date, n) => new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10)
const started = []
let exitCode = 0
try {
  const sink = await startServer('smtp sink', ...pinned(outsideCpu, process.execPath, [join(ROOT, 'bench', 'lib', 'smtp-sink.mjs')]), { cwd: ROOT })
  started.push(sink)
  const smtpPort = (await count(sink.url)).smtp_port
  const env = benchEnv(dbFile, {
    REPLENISH_ADMIN_TOKEN: adminToken,
    REPLENISH_SMTP_URL: `smtp://127.0.0.1:${smtpPort}`,
    REPLENISH_MAIL_FROM: 'Bench Shop <shop@bench.example>',
    REPLENISH_PUBLIC_URL: 'https://shop.bench.example',
    REPLENISH_SHOP_NAME: 'Bench Shop',
  })
  log(`replenish: ${binary}; database ${dbFile}; ${pin ? 'replenish on cpu 0, sink and load on cpu 1' : 'not pinned'}`)
  const migrated = spawnSync(binary, ['migrate'], { cwd: ROOT, env, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`replenish migrate failed:\n${migrated.stdout}${migrated.stderr}`)
  let t = performance.now()
  writeLuaData(dataFile, seed(dbFile, today))
  // The first backlog is due in 2 days (told as of today), the second in 4 (told as of tomorrow).
  seedUpcoming(dbFile, mails, addDays(today, 2))
  seedUpcoming(dbFile, during, addDays(today, 4))
  log(`seeded 10,000 subscriptions to PATCH, ${mails} due on ${addDays(today, 2)} and ${during} on ${addDays(today, 4)} in ${Math.round(performance.now() - t)} ms`)

  // (a) announce: process writes the events and queues the mails, no sender running.
  const announced = processAsOf(binary, env, today)
  if (announced.queued !== mails) throw new Error(`expected ${mails} mails queued, found ${announced.queued}`)
  log(`announce: ${announced.line} (${announced.seconds.toFixed(1)} s = ${Math.round(mails / announced.seconds)}/s)`)

  // (b) the drain alone.
  const busy = []
  if (!(await waitQuiet(60_000, log))) busy.push('drain')
  const profileDir = join(work, 'profile')
  const serveCommand = opts.profile
    ? [process.execPath, ['--cpu-prof', `--cpu-prof-dir=${profileDir}`, '--import', 'tsx', join(ROOT, 'src', 'main.ts'), 'serve']]
    : [binary, ['serve']]
  const startServe = () => startServer('replenish serve', ...pinned(serverCpu, serveCommand[0], serveCommand[1]), { cwd: ROOT, env })
  const serveStarted = performance.now()
  let app = await startServe()
  started.push(app)
  const listening = Date.now()
  const memory = memoryPoller(app.pid)
  const cpuBefore = cpuSecondsOf(app.pid)
  const drained = await untilSent(sink.url, mails, Math.max(120_000, mails * 2))
  const drainSeconds = (drained.last_ms - listening) / 1000
  const serveCpuSeconds = cpuSecondsOf(app.pid) - cpuBefore
  const mem = memory.stop()
  log(`drain: ${mails} mails in ${drainSeconds.toFixed(1)} s = ${Math.round(mails / drainSeconds)}/s; serve peak RSS ${mem.peakRssMB} MB (anonymous ${mem.peakAnonMB} MB)`)
  await settledOutbox(app.url, 0)
  if (opts.profile) {
    await app.stop()
    const file = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile')).sort((a, b) => statSync(join(profileDir, b)).size - statSync(join(profileDir, a)).size)[0]
    process.stdout.write(renderProfile(summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8')))) + '\n')
    for (const s of started.reverse()) await s.stop().catch(() => undefined)
    rmSync(work, { recursive: true, force: true })
    process.exit(0)
  }

  // (c) PATCH p99 with the outbox empty, then while the second backlog drains.
  if (!(await waitQuiet(60_000, log))) busy.push('load without mail')
  await pacedPatch(app.url, WARM_UP_SECONDS)
  const without = await pacedPatch(app.url)
  log(`PATCH ${rate}/s without mail: p50 ${without.latencyMs.p50.toFixed(1)} ms, p99 ${without.latencyMs.p99.toFixed(1)} ms`)
  await app.stop()
  started.pop()
  const second = processAsOf(binary, env, addDays(today, 1))
  if (second.queued !== during) throw new Error(`expected ${during} more mails queued, found ${second.queued}`)
  await post(`${sink.url}/reset`)
  if (!(await waitQuiet(60_000, log))) busy.push('load during mail')
  app = await startServe()
  started.push(app)
  await pacedPatch(app.url, WARM_UP_SECONDS)
  const sentBeforeLoad = (await count(sink.url)).count
  const withMail = await pacedPatch(app.url)
  const sentDuringLoad = (await count(sink.url)).count - sentBeforeLoad
  log(`PATCH ${rate}/s while mails drain: p50 ${withMail.latencyMs.p50.toFixed(1)} ms, p99 ${withMail.latencyMs.p99.toFixed(1)} ms; ${sentDuringLoad} mails sent meanwhile`)
  const rest = await untilSent(sink.url, during, Math.max(120_000, during * 2))
  await settledOutbox(app.url, 0)
  const metrics = await get(`${app.url}/metrics`, { authorization: `Bearer ${adminToken}` })
  const failed = Number(/^replenish_emails_total\{state="failed"\} (\d+)$/m.exec(metrics)?.[1])
  const sentTotal = Number(/^replenish_emails_total\{state="sent"\} (\d+)$/m.exec(metrics)?.[1])
  await app.stop()
  started.pop()
  if (failed !== 0 || sentTotal !== mails + during) throw new Error(`mails: ${sentTotal} sent, ${failed} failed; expected ${mails + during} sent`)
  if (drained.distinct !== mails || rest.distinct !== during) throw new Error(`a mail was taken twice: ${drained.count}/${drained.distinct}, ${rest.count}/${rest.distinct}`)
  for (const load of [without, withMail]) {
    if (load.non2xx > 0 || load.errors > 0) throw new Error(`paced PATCH: ${load.non2xx} non-2xx and ${load.errors} errors (${load.firstErrors.join('; ')})`)
  }

  const ratio = withMail.latencyMs.p99 / without.latencyMs.p99
  const result = {
    announce: { subscriptions: mails, seconds: announced.seconds, perSecond: mails / announced.seconds },
    drain: { mails, startupMs: drained.first_ms - listening, seconds: drainSeconds, perSecond: mails / drainSeconds, peakRssMB: mem.peakRssMB, hwmMB: mem.hwmMB, serveCpuSeconds, serveCpuUsPerMail: (serveCpuSeconds * 1e6) / mails },
    patch: { rate, seconds, withoutMs: without.latencyMs, duringMs: withMail.latencyMs, p99Ratio: ratio, mailsSentDuringLoad: sentDuringLoad, backlogDuring: during },
    met: { p99WithinTwice: ratio <= 2 },
    settings: { binary, pinned: pin, startedBusy: busy, serveStartMs: performance.now() - serveStarted },
    machine: machine(work, sqliteVersion()),
  }
  const md = [
    `# bench:mail ${new Date().toISOString()}`,
    '',
    `| measure | value |`,
    `|---|---|`,
    `| announce (\`replenish process\`: ${mails.toLocaleString('en')} subscription.upcoming events, their mails queued) | ${announced.seconds.toFixed(1)} s, ${Math.round(result.announce.perSecond).toLocaleString('en')}/s |`,
    `| drain (${mails.toLocaleString('en')} mails to the local SMTP sink) | ${drainSeconds.toFixed(1)} s, **${Math.round(result.drain.perSecond).toLocaleString('en')} mails/s**, ${result.drain.serveCpuUsPerMail.toFixed(0)} µs of serve CPU per mail |`,
    `| serve's peak RSS over the drain | **${Math.round(mem.peakRssMB)} MB** (${Math.round(mem.peakAnonMB)} MB of it anonymous: heaps and caches, the rest the executable's pages) |`,
    `| PATCH ${rate}/s p99 without mail / while ${during.toLocaleString('en')} mails drain | ${without.latencyMs.p99.toFixed(1)} ms / ${withMail.latencyMs.p99.toFixed(1)} ms (${ratio.toFixed(2)}×; target ≤ 2×: ${ratio <= 2 ? 'met' : 'NOT met'}); ${sentDuringLoad.toLocaleString('en')} mails sent during the ${seconds} s |`,
    '',
    busy.length > 0 ? `The machine was busy when these started: ${busy.join(', ')}.` : '',
  ].join('\n')
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/g, '-') + (opts.quick ? '-mail-quick' : '-mail')
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(dir, `${stamp}.md`), md + '\n')
  process.stdout.write('\n' + md + '\n')
  if (!result.met.p99WithinTwice) exitCode = 1
} catch (err) {
  exitCode = 1
  process.stderr.write(`bench:mail failed: ${err instanceof Error ? err.message : String(err)}\n`)
} finally {
  for (const s of started.reverse()) await s.stop().catch(() => undefined)
  rmSync(work, { recursive: true, force: true })
}
process.exit(exitCode)

/** `n` monthly subscriptions due on `date`, one per new customer (a mail each), two line items, in one transaction. */
function seedUpcoming(file, n, date) {
  const db = new DatabaseSync(file)
  const now = new Date().toISOString()
  try {
    db.exec('PRAGMA synchronous = OFF')
    db.exec('BEGIN')
    const firstUser = db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM users').get().id
    const firstSub = db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM subscriptions').get().id
    db.prepare(`WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?1 - 1)
      INSERT INTO users (id, email, locale, created_at, updated_at)
        SELECT ?2 + i, 'customer' || (?2 + i) || '@bench.example', CASE i % 4 WHEN 0 THEN NULL WHEN 1 THEN 'es' WHEN 2 THEN 'fr' ELSE 'de' END, ?3, ?3 FROM k`)
      .run(n, firstUser, now)
    db.prepare(`WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?1 - 1)
      INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
        SELECT ?2 + i, ?3 + i, 'active', 0, 1, 'month', ?4, CAST(strftime('%d', ?4) AS INTEGER), 'USD', ?5, ?6, ?6 FROM k`)
      .run(n, firstSub, firstUser, date, today, now)
    db.prepare(`INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
        SELECT s.id, k.item, k.quantity, ?2, ?2 FROM subscriptions s, (SELECT 1 AS item, 2 AS quantity UNION ALL SELECT 2, 1) k
        WHERE s.id >= ?1 ORDER BY s.id, k.item`).run(firstSub, now)
    db.exec('COMMIT')
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } finally {
    db.close()
  }
}

/** `replenish process --as-of DATE` pinned as serve is; answers its summary, how long it took, and the mails pending after it. */
function processAsOf(binaryPath, env, asOf) {
  const t = performance.now()
  const r = spawnSync(...pinned(serverCpu, binaryPath, ['process', '--as-of', asOf]), { cwd: ROOT, env, encoding: 'utf8' })
  const secs = (performance.now() - t) / 1000
  if (r.status !== 0) throw new Error(`replenish process failed:\n${r.stdout}${r.stderr}`)
  const db = new DatabaseSync(dbFile, { readOnly: true })
  try {
    const queued = db.prepare("SELECT count(*) AS n FROM emails WHERE state = 'pending'").get().n
    return { line: r.stdout.trim(), seconds: secs, queued }
  } finally {
    db.close()
  }
}

function pacedPatch(url, secs = seconds) {
  const [command, args] = pinned(outsideCpu, process.execPath, [join(ROOT, 'bench', 'lib', 'paced-patch.mjs'), url, dataFile, String(rate), String(secs), String(Date.now() % 1000)])
  return runForResult(command, args, 'PACED_RESULT', 'paced-patch')
}

async function untilSent(sinkUrl, n, limitMs) {
  const deadline = Date.now() + limitMs
  let last = -1
  let lastLog = Date.now()
  for (;;) {
    const c = await count(sinkUrl)
    if (c.count >= n) return c
    if (Date.now() > deadline) throw new Error(`the sink took ${c.count} of ${n} mails within ${limitMs} ms`)
    if (Date.now() - lastLog > 5000 && c.count !== last) {
      log(`${c.count} of ${n} mails taken`)
      lastLog = Date.now()
      last = c.count
    }
    await new Promise((r) => setTimeout(r, 50))
  }
}

/** Waits until serve's log API shows no pending mail (the results of the last ones written). */
async function settledOutbox(appUrl, expected) {
  for (let i = 0; i < 600; i++) {
    const metrics = await get(`${appUrl}/metrics`, { authorization: `Bearer ${adminToken}` })
    if (Number(/^replenish_emails_pending (\d+)$/m.exec(metrics)?.[1]) === expected) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error('mails still pending after the sink took them all')
}

async function count(sinkUrl) {
  return JSON.parse(await get(`${sinkUrl}/count`))
}

async function get(url, headers = {}) {
  const res = await fetch(url, { headers })
  if (!res.ok) throw new Error(`GET ${url}: ${res.status}`)
  return res.text()
}

async function post(url) {
  const res = await fetch(url, { method: 'POST' })
  if (!res.ok) throw new Error(`POST ${url}: ${res.status}`)
}

function log(line) {
  process.stderr.write(`bench:mail: ${line}\n`)
}

function die(message) {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}
