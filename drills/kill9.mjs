#!/usr/bin/env node
/**
 * `npm run drills`: the kill -9 drill (issue 15, C12: an acknowledged write survives kill -9).
 *
 * dist/replenish serves a database of 1,000 users × 10 subscriptions × 3 line items (seeded as the
 * bench seeds it) while a few loopback clients PATCH line item quantities and skip subscriptions
 * (drills/lib/load.mjs). At a random moment the server gets SIGKILL; it is started again on the
 * same file, and the database is checked against every write that was acknowledged so far
 * (drills/lib/verify.mjs: PRAGMA integrity_check, quantities, skip counts). Repeat. After the last
 * round the server is stopped with SIGTERM and the events are counted too.
 * Exit status: 0 nothing lost; 1 a lost write, a failed integrity check, an answer other than 200,
 * or the time limit reached before the rounds were done; 2 a bad option.
 *
 *   npm run drills                                  # 20 rounds, at most 4 minutes
 *   npm run drills -- --rounds 50 --duration 600    # or DRILL_ROUNDS=50 DRILL_DURATION=600
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { startServer } from '../bench/lib/process.mjs'
import { makeLedger, runClient } from './lib/load.mjs'
import { lostCount, makeLosses, verify } from './lib/verify.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const BINARY = join(ROOT, 'dist', 'replenish')
const env = process.env

const { values: opts } = parseArgs({
  options: {
    rounds: { type: 'string', default: env.DRILL_ROUNDS ?? '20' },
    duration: { type: 'string', default: env.DRILL_DURATION ?? '240' },
    clients: { type: 'string', default: env.DRILL_CLIENTS ?? '8' },
    'kill-after': { type: 'string', default: env.DRILL_KILL_AFTER ?? '300-3000' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write(`usage: npm run drills [-- options]
  --rounds N          kill -9 rounds (DRILL_ROUNDS, default 20)
  --duration S        time limit in seconds; reached before the last round, the drill fails (DRILL_DURATION, default 240)
  --clients N         concurrent loopback clients (DRILL_CLIENTS, default 8)
  --kill-after A-B    the kill comes a random A to B ms after the load starts (DRILL_KILL_AFTER, default 300-3000)
  --dir PATH          where the temporary database goes (default: the OS temp dir)
  --keep              keep the database afterwards
`)
  process.exit(0)
}
const rounds = wholeNumber('rounds', opts.rounds)
const duration = wholeNumber('duration', opts.duration)
const clients = wholeNumber('clients', opts.clients)
const [killMin, killMax] = opts['kill-after'].split('-').map(Number)
if (!Number.isInteger(killMin) || !Number.isInteger(killMax) || killMin < 0 || killMax < killMin) die(`--kill-after: expected A-B in ms with A ≤ B, got ${JSON.stringify(opts['kill-after'])}`)
if (Number(process.versions.node.split('.')[0]) < 24) die(`the drill needs Node 24 (node:sqlite); this is ${process.version}: run it as \`npm run drills\``)

buildWhenMissing()
const { seed, USERS } = await import('../bench/lib/seed.mjs')
const work = mkdtempSync(join(opts.dir ?? tmpdir(), 'replenish-drill-'))
const dbFile = join(work, 'drill.db')
// The caller's own REPLENISH_* settings must not leak in; the rest is production's defaults
// (synchronous=FULL, the JSON access log), without the rate limit that would throttle the load.
const serverEnv = {
  ...Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('REPLENISH_'))),
  REPLENISH_DB: dbFile,
  REPLENISH_PORT: '0',
  REPLENISH_RATE_LIMIT: '0',
  REPLENISH_AUTH_FAILURE_LIMIT: '0',
  REPLENISH_PROCESS_EVERY: '0',
}
const deadline = Date.now() + duration * 1000
const totals = { rounds: 0, patch: 0, skip: 0, unanswered: 0, integrityFailures: 0, unexpected: [] }
const losses = makeLosses()
let server
let failed = false
try {
  const migrated = spawnSync(BINARY, ['migrate'], { env: serverEnv, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`replenish migrate failed:\n${migrated.stdout}${migrated.stderr}`)
  const ledger = makeLedger(seed(dbFile, new Date().toISOString().slice(0, 10)), clients)
  log(`dist/replenish on ${dbFile}: ${USERS} users, ${clients} clients, ${rounds} rounds, kill after ${killMin}-${killMax} ms, at most ${duration} s`)

  server = await startServer('replenish', BINARY, ['serve'], { env: serverEnv })
  for (let n = 1; n <= rounds; n++) {
    if (Date.now() > deadline) throw new Error(`time limit of ${duration} s reached after ${n - 1} of ${rounds} rounds`)
    const round = { killed: false, counts: { patch: 0, skip: 0, unanswered: 0 }, unexpected: [] }
    const load = Promise.all(ledger.map((client) => runClient(client, server.url, round)))
    const killAfter = killMin + Math.floor(Math.random() * (killMax - killMin + 1))
    await new Promise((done) => setTimeout(done, killAfter))
    round.killed = true
    process.kill(server.pid, 'SIGKILL')
    await server.stop() // waits for the exit
    await load
    const restartedAt = performance.now()
    server = await startServer('replenish', BINARY, ['serve'], { env: serverEnv })
    const restartMs = performance.now() - restartedAt
    const check = verify(dbFile, ledger, losses)
    record(round, check)
    log(`round ${n}/${rounds}: killed after ${killAfter} ms; acknowledged ${round.counts.patch} PATCH + ${round.counts.skip} skip, ` +
      `${round.counts.unanswered} cut off; restarted in ${Math.round(restartMs)} ms; lost so far ${lostCount(losses)}; integrity ${check.integrity}`)
  }
  // A clean stop, then the whole check once more with the events.
  const stopped = await server.stop()
  server = undefined
  if (stopped.code !== 0) totals.unexpected.push(`SIGTERM after the last round: exit ${stopped.code ?? stopped.signal}`)
  record({ counts: { patch: 0, skip: 0, unanswered: 0 }, unexpected: [] }, verify(dbFile, ledger, losses, { events: true }))
} catch (err) {
  failed = true
  log(`FAILED: ${err instanceof Error ? err.message : String(err)}`)
} finally {
  if (server) await server.stop().catch(() => undefined)
  if (opts.keep) log(`database kept in ${work}`)
  else rmSync(work, { recursive: true, force: true })
}

const acknowledged = totals.patch + totals.skip
process.stdout.write(
  `kill -9 drill: ${totals.rounds} rounds, ${acknowledged} acknowledged writes (${totals.patch} PATCH, ${totals.skip} skip), ` +
    `${totals.unanswered} cut off by the kill, ${lostCount(losses)} lost, ${losses.phantom.size} rows holding what was never sent, ` +
    `integrity_check ${totals.integrityFailures === 0 ? 'ok' : `failed ${totals.integrityFailures} times`}, ${totals.unexpected.length} unexpected answers\n`,
)
for (const line of totals.unexpected.slice(0, 10)) log(`unexpected: ${line}`)
const ok = !failed && lostCount(losses) === 0 && losses.phantom.size === 0 && totals.integrityFailures === 0 && totals.unexpected.length === 0
process.exit(ok ? 0 : 1)

function record(round, check) {
  if (round.killed) totals.rounds++
  totals.patch += round.counts.patch
  totals.skip += round.counts.skip
  totals.unanswered += round.counts.unanswered
  if (check.integrity !== 'ok') totals.integrityFailures++
  totals.unexpected.push(...round.unexpected)
  for (const line of check.details) log(`  ${line}`)
}

/** Builds dist/replenish when it is missing, and says so when src/ is newer than the binary. */
function buildWhenMissing() {
  if (!existsSync(BINARY)) {
    log('dist/replenish is missing: npm run build')
    const built = spawnSync(process.execPath, [join(ROOT, 'build.mjs')], { stdio: 'inherit' })
    if (built.status !== 0) die('the build failed')
    return
  }
  const newest = Math.max(...readdirSync(join(ROOT, 'src'), { recursive: true }).map((f) => statSync(join(ROOT, 'src', f)).mtimeMs))
  if (newest > statSync(BINARY).mtimeMs) log('warning: src/ has changed since dist/replenish was built; run `npm run build` to drill the current code')
}

function wholeNumber(name, raw) {
  const n = Number(raw)
  if (!Number.isInteger(n) || n < 1) die(`--${name}: expected a whole number of at least 1, got ${JSON.stringify(raw)}`)
  return n
}

function log(line) {
  process.stderr.write(`drill: ${line}\n`)
}

function die(message) {
  process.stderr.write(`drill: ${message}\n`)
  process.exit(2)
}
