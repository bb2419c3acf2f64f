#!/usr/bin/env node
/**
 * `npm run bench:webhooks`: webhook delivery of the built binary (issue 17), on a fresh database,
 * to a local receiver (bench/lib/receiver.mjs, a separate node:http process answering 200 `ok`).
 *
 * (a) Backlog drain. One endpoint on `*` is registered through the admin API, `serve` is stopped,
 *     and `replenish process` moves `--events` (100,000) due subscriptions: one
 *     `installment.created` each, so as many deliveries wait in the outbox, written by the real
 *     code path (the outbox trigger, in the processor's own units) while no dispatcher runs.
 *     Then `serve` starts with the receiver already up: deliveries/s is the backlog divided by the
 *     time from `serve` listening to /metrics showing nothing pending. Not chosen: a receiver
 *     that is down or paused while the events are made, since failed attempts back off (10 s, then
 *     60 s…) and the drain would measure the retry schedule, not the dispatcher.
 * (b) Lag. On the same `serve`, PATCH line item quantity at `--rate` (1,000/s) for `--seconds` (20),
 *     paced open loop (bench/lib/paced-patch.mjs); each PATCH makes one event. Lag per event is
 *     its arrival at the receiver − its `created_at`.
 * (c) Peak RSS of `serve` over (a) and (b).
 *
 * Pinning as in `npm run bench`: replenish (serve, process) on cpu 0, the outside world
 * (receiver, load) on cpu 1. Fails on any failed or unsigned delivery, any non-2xx PATCH, or an
 * event the receiver never got.
 *
 *   npm run bench:webhooks
 *   npm run bench:webhooks -- --quick          # 10,000 events, 5 s of load (development)
 *   npm run bench:webhooks -- --profile        # serve from source under --cpu-prof
 *   npm run bench:webhooks -- --flaky          # a receiver that hangs 3 % and fails 8 % (issue 25)
 *
 * `--flaky` replaces (a) and (b) with their counterparts for a receiver that leaves 3 % of the
 * requests unanswered and answers 8 % with a 500, retries at a 1 s base: the drain's rate of
 * accepted deliveries, and whether retries go out on schedule under the steady load
 * (bench/lib/flaky.mjs says how each is measured).
 */
import { randomBytes } from 'node:crypto'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { cpuSecondsOf, evictFromPageCache, hasCommand, memoryPoller, pinned, runForResult, startServer } from './lib/process.mjs'
import { benchEnv } from './lib/env.mjs'
import { machine, waitQuiet } from './lib/machine.mjs'
import { countDeliveries, drain, registerEndpoint, resetReceiver } from './lib/webhooks.mjs'
import { renderWebhookMarkdown, summarizeWebhooks } from './lib/webhook-report.mjs'
import { renderProfile, summarizeProfile } from './lib/profile-summary.mjs'
import { acceptedOrTimeout, FLAKY, flakyDrain, lastDeliveryId, renderFlakyMarkdown, retryGaps, summarizeFlaky } from './lib/flaky.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    events: { type: 'string' },
    rate: { type: 'string', default: '1000' },
    seconds: { type: 'string' },
    dir: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    'keep-db': { type: 'boolean', default: false },
    binary: { type: 'string' },
    profile: { type: 'boolean', default: false },
    flaky: { type: 'boolean', default: false },
    synchronous: { type: 'string', default: 'FULL' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write(`usage: npm run bench:webhooks [-- options]
  --events N     backlog to drain (default 100000; 10000 with --quick)
  --rate N       events per second for the lag measurement (default 1000)
  --seconds N    how long the lag load runs (default 20; 5 with --quick)
  --quick        the smaller defaults above, while developing
  --dir PATH     where the temporary database goes (default: the OS temp dir)
  --no-pin       do not pin replenish and the outside world to separate cores
  --keep-db      keep the database afterwards
  --binary PATH  another build of replenish (an A/B against an earlier commit's dist/replenish)
  --profile      run serve from source under --cpu-prof and summarise its hottest functions
  --flaky        the receiver leaves 3 % unanswered and fails 8 %; retries at a 1 s base (issue 25)
  --synchronous NORMAL   diagnosis only: commits without waiting for the disk (the targets are for FULL)
`)
  process.exit(0)
}
const events = Number(opts.events ?? (opts.quick ? 10_000 : 100_000))
const rate = Number(opts.rate)
const seconds = Number(opts.seconds ?? (opts.quick ? 5 : 20))
for (const [name, n] of Object.entries({ events, rate, seconds })) {
  if (!Number.isInteger(n) || n < 1) die(`--${name} must be a whole number of at least 1`)
}
if (opts.synchronous !== 'FULL' && opts.synchronous !== 'NORMAL') die('--synchronous must be FULL or NORMAL')
if (Number(process.versions.node.split('.')[0]) < 24) {
  die(`the bench needs Node 24 (node:sqlite); this is ${process.version}. Run it as \`npm run bench:webhooks\`.`)
}
const { seed, writeLuaData, sqliteVersion } = await import('./lib/seed.mjs')
const { seedDue } = await import('./lib/seed-due.mjs')

const cores = availableParallelism()
const pin = !opts['no-pin'] && cores >= 2 && hasCommand('taskset', '-V')
const serverCpu = pin ? 0 : undefined
const outsideCpu = pin ? 1 : undefined
const binary = opts.binary ? resolve(opts.binary) : join(ROOT, 'dist', 'replenish')
const built = existsSync(binary)
if (!built && !opts.profile) die('dist/replenish is missing: run `npm run build` first (this bench measures the built binary)')
const replenish = opts.profile
  ? { mode: 'source (node --import tsx src/main.ts) under --cpu-prof', command: process.execPath, prefix: ['--import', 'tsx', join(ROOT, 'src', 'main.ts')] }
  : { mode: opts.binary ? `binary (${binary})` : 'binary (dist/replenish)', command: binary, prefix: [] }

const work = mkdtempSync(join(opts.dir ?? tmpdir(), 'replenish-bench-webhooks-'))
const dbFile = join(work, 'bench.db')
const dataFile = join(work, 'keys.txt')
const profileDir = join(work, 'profile')
// The bench's own admin token, for this database only; it is never printed.
const adminToken = randomBytes(24).toString('hex')
const env = benchEnv(dbFile, {
  REPLENISH_ADMIN_TOKEN: adminToken, REPLENISH_SYNCHRONOUS: opts.synchronous,
  ...(opts.flaky ? { REPLENISH_WEBHOOK_RETRY_BASE_SECONDS: String(FLAKY.retryBaseSeconds) } : {}),
})
const today = new Date().toISOString().slice(0, 10)

const started = []
let exitCode = 0
try {
  log(`replenish: ${replenish.mode}; database ${dbFile}; ${pin ? 'replenish on cpu 0, receiver and load on cpu 1' : 'not pinned'}`)
  const migrated = spawnSync(replenish.command, [...replenish.prefix, 'migrate'], { cwd: ROOT, env, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`replenish migrate failed:\n${migrated.stdout}${migrated.stderr}`)
  let t = performance.now()
  writeLuaData(dataFile, seed(dbFile, today))
  seedDue(dbFile, events, today)
  log(`seeded 10,000 subscriptions to PATCH and ${events} due ones in ${Math.round(performance.now() - t)} ms`)

  const misbehave = opts.flaky ? ['--hang', String(FLAKY.hang), '--fail', String(FLAKY.fail)] : []
  const receiver = await startServer('receiver', ...pinned(outsideCpu, process.execPath, [join(ROOT, 'bench', 'lib', 'receiver.mjs'), ...misbehave]), { cwd: ROOT })
  started.push(receiver)
  const startServe = (extraArgs = []) => startServer('replenish serve', ...pinned(serverCpu, replenish.command, [...extraArgs, ...replenish.prefix, 'serve']), { cwd: ROOT, env })

  // (a) the backlog: the endpoint exists while the events are made, and no dispatcher runs.
  let app = await startServe()
  const endpointId = await registerEndpoint(app.url, adminToken, receiver.url)
  await app.stop()
  t = performance.now()
  const processed = spawnSync(...pinned(serverCpu, replenish.command, [...replenish.prefix, 'process', '--as-of', today]), { cwd: ROOT, env, encoding: 'utf8' })
  if (processed.status !== 0) throw new Error(`replenish process failed:\n${processed.stdout}${processed.stderr}`)
  const processSeconds = (performance.now() - t) / 1000
  const backlog = countDeliveries(dbFile).pending
  log(`${processed.stdout.trim()} (${processSeconds.toFixed(1)} s); ${backlog} deliveries pending`)
  if (backlog < events) throw new Error(`expected at least ${events} pending deliveries, found ${backlog}`)

  const evicted = !opts.profile && evictFromPageCache(binary)
  const busy = []
  if (!(await waitQuiet(60_000, log))) busy.push('drain')
  const scenario = opts.flaky ? flakyScenario : drainAndLag
  if (!(await scenario({ receiver, startServe, endpointId, backlog, busy, evicted, processSeconds }))) exitCode = 1
} catch (err) {
  exitCode = 1
  process.stderr.write(`bench:webhooks failed: ${err instanceof Error ? err.message : String(err)}\n`)
} finally {
  for (const s of started) await s.stop().catch(() => undefined)
  if (!opts['keep-db']) rmSync(work, { recursive: true, force: true })
  else log(`database kept in ${work}`)
}
process.exit(exitCode)

/** Runs bench/lib/paced-patch.mjs (pinned beside the receiver) to its end; resolves with its result. */
function pacedPatch(url, perSecond, secs, cpu) {
  const [command, args] = pinned(cpu, process.execPath, [join(ROOT, 'bench', 'lib', 'paced-patch.mjs'), url, dataFile, String(perSecond), String(secs), '1'])
  return runForResult(command, args, 'PACED_RESULT', 'paced-patch')
}

/** CPU seconds serve and the receiver used since `before`, and as a share of one core over `seconds`. */
function cpuShares(servePid, receiverPid, before, seconds) {
  const serve = cpuSecondsOf(servePid)
  const receiver = cpuSecondsOf(receiverPid)
  const used = (now, then) => (now === undefined || then === undefined ? undefined : now - then)
  const serveSeconds = used(serve, before.serve)
  const receiverSeconds = used(receiver, before.receiver)
  return {
    serveSeconds, receiverSeconds,
    serveShare: serveSeconds === undefined ? undefined : serveSeconds / seconds,
    receiverShare: receiverSeconds === undefined ? undefined : receiverSeconds / seconds,
  }
}

/** Writes a result as bench/results/<stamp><tag>.{json,md} and prints the markdown. */
function writeResult(tag, result, md) {
  const stamp = new Date().toISOString().replace(/[:.]/g, '-') + tag
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(dir, `${stamp}.md`), md)
  process.stdout.write('\n' + md)
  log(`written to bench/results/${stamp}.{md,json}`)
  return stamp
}

function log(line) {
  process.stderr.write(`bench:webhooks: ${line}\n`)
}

function die(message) {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}

/** (a) the backlog drained and (b) the lag at a steady rate, to a receiver that answers 200 at once. */
async function drainAndLag({ receiver, startServe, endpointId, backlog, busy, evicted, processSeconds }) {
  const profileArgs = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const serveStarted = performance.now()
  const app = await startServe(profileArgs)
  const listening = performance.now()
  const listeningWall = Date.now()
  started.push(app)
  const cpuAtStart = { serve: cpuSecondsOf(app.pid), receiver: cpuSecondsOf(receiver.pid) }
  const memory = memoryPoller(app.pid)
  const memoryOfDrain = memoryPoller(app.pid)
  const drained = await drain({
    appUrl: app.url, adminToken, endpointId, receiverUrl: receiver.url, expected: backlog,
    limitMs: Math.max(60_000, backlog), // under 1,000/s is a failure in itself
    onProgress: (n) => log(`drain: ${n} of ${backlog} received`),
  })
  const drainSeconds = (drained.at - listening) / 1000
  // CPU used over the drain: whether serve was the bottleneck (near 1 s per s) or waited on something.
  const cpuDrain = cpuShares(app.pid, receiver.pid, cpuAtStart, drainSeconds)
  const memoryDrain = memoryOfDrain.stop()
  log(`drain: ${backlog} deliveries in ${drainSeconds.toFixed(1)} s = ${Math.round(backlog / drainSeconds)}/s`)
  const drainResult = {
    backlog,
    startupMs: listening - serveStarted,
    seconds: drainSeconds,
    perSecond: backlog / drainSeconds,
    firstArrivalMs: drained.receiver.firstMs - listeningWall,
    receiverSpanS: (drained.receiver.lastMs - drained.receiver.firstMs) / 1000,
    received: drained.receiver.distinct,
    duplicates: drained.receiver.duplicates,
    delivered: drained.metrics.delivered,
    peakRssMB: memoryDrain.peakRssMB,
    cpu: cpuDrain,
    serveCpuUsPerDelivery: cpuDrain.serveSeconds === undefined ? undefined : (cpuDrain.serveSeconds * 1e6) / backlog,
  }

  // (b) lag at a fixed rate of events.
  if (!(await waitQuiet(60_000, log))) busy.push('lag')
  await resetReceiver(receiver.url)
  log(`lag: PATCH at ${rate}/s for ${seconds} s`)
  const cpuBeforeLoad = { serve: cpuSecondsOf(app.pid), receiver: cpuSecondsOf(receiver.pid) }
  const load = await pacedPatch(app.url, rate, seconds, outsideCpu)
  const cpuLoad = cpuShares(app.pid, receiver.pid, cpuBeforeLoad, load.elapsedS)
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`paced PATCH: ${load.non2xx} non-2xx answers and ${load.errors} errors of ${load.requests} (${load.firstErrors.join('; ')})`)
  }
  const lagDrained = await drain({ appUrl: app.url, adminToken, endpointId, receiverUrl: receiver.url, expected: load.acknowledged, limitMs: 60_000 })
  const mem = memory.stop()
  const lag = lagDrained.receiver.lagMs
  log(`lag: ${lag.count} events, p50 ${lag.p50} ms, p99 ${lag.p99} ms, max ${lag.max} ms; PATCH p99 ${load.latencyMs.p99.toFixed(1)} ms`)
  if (!app.alive()) throw new Error(`serve died:\n${app.stderr()}`)
  await app.stop()
  await receiver.stop()
  started.length = 0
  const stored = countDeliveries(dbFile)
  if (stored.pending > 0 || stored.failed > 0) throw new Error(`after both runs: ${stored.pending} deliveries pending, ${stored.failed} failed`)

  const result = summarizeWebhooks({
    drain: drainResult,
    lag: { rate, seconds, events: lag.count, received: lagDrained.receiver.distinct, duplicates: lagDrained.receiver.duplicates, acknowledged: load.acknowledged, lagMs: lag, patchLatencyMs: load.latencyMs, slowestDueAtS: load.slowestDueAtS, over100Ms: load.over100Ms, loadElapsedS: load.elapsedS, cpu: cpuLoad },
    memory: { ...mem, evicted },
    stored,
    settings: { replenish: replenish.mode, events, rate, seconds, pinned: pin, synchronous: opts.synchronous, processSeconds, startedBusy: busy },
    machine: machine(work, sqliteVersion()),
  })
  const tag = opts.profile ? '-webhooks-profile' : opts.quick || events < 100_000 || seconds < 20 || opts.synchronous !== 'FULL' ? '-webhooks-quick' : '-webhooks'
  const md = renderWebhookMarkdown(result)
  const stamp = writeResult(tag, result, md)
  if (opts.profile) {
    const file = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))
      .sort((a, b) => statSync(join(profileDir, b)).size - statSync(join(profileDir, a)).size)[0]
    if (!file) throw new Error(`serve wrote no .cpuprofile into ${profileDir}`)
    const summary = renderProfile(summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8'))))
    writeFileSync(join(ROOT, 'bench', 'results', `${stamp}.cpuprofile.md`), `# replenish serve --cpu-prof: webhook drain and lag\n\n${md}\n${summary}\n`)
    process.stdout.write(`\n${summary}\n`)
  }
  return result.met
}

/**
 * `--flaky` (issue 25): the backlog drained to a receiver that hangs 3 % and fails 8 %, then
 * events at `--rate` for `--seconds` to the same receiver, and the retries' gaps read back from
 * the delivery log (bench/lib/flaky.mjs).
 */
async function flakyScenario({ receiver, startServe, backlog, busy, processSeconds }) {
  const app = await startServe()
  const listening = performance.now()
  started.push(app)
  const memory = memoryPoller(app.pid)
  const cpuAtStart = cpuSecondsOf(app.pid)
  const drained = await flakyDrain({
    receiverUrl: receiver.url, expected: backlog, startedAt: listening,
    limitMs: Math.max(300_000, backlog * 2), // long enough to measure a build from before issue 25
    onProgress: (got) => log(`drain: ${got.distinct} of ${backlog} posted, ${got.accepted} accepted (${got.hung} left hanging, ${got.failed} failed)`),
  })
  // CPU serve used over the drain (to the moment it stopped waiting for the last retries).
  const cpuAfter = cpuSecondsOf(app.pid)
  drained.serveCpuS = cpuAfter === undefined || cpuAtStart === undefined ? undefined : cpuAfter - cpuAtStart
  log(`drain: every one of ${backlog} posted within ${drained.allAttemptedS.toFixed(1)} s = ${Math.round(drained.deliveriesPerSecond)}/s`)

  if (!app.alive()) throw new Error(`serve died during the drain:\n${app.stderr()}`)
  if (!(await waitQuiet(60_000, log))) busy.push('steady load')
  const afterId = lastDeliveryId(dbFile)
  await resetReceiver(receiver.url)
  log(`steady load: PATCH at ${rate}/s for ${seconds} s`)
  const load = await pacedPatch(app.url, rate, seconds, outsideCpu)
  if (load.non2xx > 0 || load.errors > 0) {
    throw new Error(`paced PATCH: ${load.non2xx} non-2xx answers and ${load.errors} errors of ${load.requests} (${load.firstErrors.join('; ')})${app.alive() ? '' : `; serve died:\n${app.stderr()}`}`)
  }
  // The first two retries of the last events (1 s and 6 s, after up to two 10 s time-outs) have gone by then.
  const got = await acceptedOrTimeout(receiver.url, load.acknowledged, 60_000)
  const retries = retryGaps(dbFile, afterId, FLAKY.retryBaseSeconds)
  const mem = memory.stop()
  if (!app.alive()) throw new Error(`serve died:\n${app.stderr()}`)
  await app.stop()
  await receiver.stop()
  started.length = 0

  const result = summarizeFlaky({
    drain: { backlog, ...drained },
    lag: { rate, seconds, acknowledged: load.acknowledged, lagMs: got.lagMs, acceptedLagMs: got.acceptedLagMs, receiver: got },
    retries,
    memory: mem,
    stored: countDeliveries(dbFile),
    settings: { replenish: replenish.mode, events, rate, seconds, pinned: pin, synchronous: opts.synchronous, processSeconds, startedBusy: busy },
    machine: machine(work, sqliteVersion()),
  })
  const tag = opts.quick || events < 100_000 || seconds < 20 ? '-webhooks-flaky-quick' : '-webhooks-flaky'
  writeResult(tag, result, renderFlakyMarkdown(result))
  return result.met
}
