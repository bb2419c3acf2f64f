#!/usr/bin/env node
/**
 * `npm run bench:against -- --against PATH`: this build (dist/replenish) against another build of
 * replenish (PATH: its executable) on SQLite, in the same minutes, scenario by scenario.
 *
 * Why: the rule "no scenario more than 5 % below its last recorded run" compares runs made at
 * different times, and on a shared host the same binary measured 5–18 % apart in two full runs
 * 45 minutes apart (docs/performance.md). Here the two builds take turns instead: for each
 * scenario, `--pairs` pairs of measurements, the order swapped every pair (A B, B A, …), each on
 * a fresh copy of its own seeded database (seeded alike, each migrated by its own binary), serve
 * on core 0 and wrk on core 1. The verdict is the median of the pairs' ratios of CPU time per
 * request (every thread of serve: user + system, from /proc), which a slow minute changes far
 * less than req/s; req/s is shown beside it.
 *
 *   npm run build && npm run bench:against -- --against ../old/dist/replenish
 *   npm run bench:against -- --against ../old/dist/replenish --scenarios create --pairs 10
 *
 * The other build is used as it is: build it from its own checkout (npm ci && npm run build).
 */
import { accessSync, constants, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { basename, join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { cpuSecondsOfTree, hasCommand, pinned, startServer } from './lib/process.mjs'
import { INSTALL_HINT, runWrk } from './lib/wrk.mjs'
import { benchEnv } from './lib/env.mjs'
import { seed, sqliteVersion, writeLuaData } from './lib/seed.mjs'
import { machine, waitQuiet } from './lib/machine.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SCENARIOS = ['get', 'list', 'patch', 'skip', 'create']
/** A change of CPU per request beyond this is the bench rule's "more than 5 % below". */
const LIMIT = 0.05

const { values: opts } = parseArgs({
  options: {
    against: { type: 'string' },
    scenarios: { type: 'string', default: 'get,patch,skip,create' },
    pairs: { type: 'string', default: '6' },
    seconds: { type: 'string', default: '4' },
    warmup: { type: 'string', default: '6' },
    connections: { type: 'string', default: '64' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write(`usage: npm run bench:against -- --against PATH [options]
  --against PATH      the other build's executable (dist/replenish of another checkout)
  --scenarios a,b     some of: ${SCENARIOS.join(', ')} (default get,patch,skip,create)
  --pairs N           measurements of each build per scenario, taking turns (default 6)
  --seconds N         seconds per measurement (default 4)
  --warmup N          warm-up seconds before each measurement, on the same server (default 6)
  --connections N     wrk connections (default 64)
`)
  process.exit(0)
}
const count = (name, min) => {
  const n = Number(opts[name])
  if (!Number.isSafeInteger(n) || n < min) die(`--${name}: expected a whole number of at least ${min}, not ${opts[name]}`)
  return n
}
const pairs = count('pairs', 1)
const seconds = count('seconds', 1)
const warmup = count('warmup', 0)
const connections = count('connections', 1)
const scenarios = opts.scenarios.split(',').map((s) => s.trim()).filter((s) => s !== '')
for (const s of scenarios) if (!SCENARIOS.includes(s)) die(`--scenarios: unknown scenario ${s}; known: ${SCENARIOS.join(', ')}`)
if (opts.against === undefined) die('--against PATH is required: the executable of the build to compare with')
const theirs = resolve(opts.against)
const ours = join(ROOT, 'dist', 'replenish')
for (const [file, hint] of [[ours, 'run npm run build first'], [theirs, 'build it in its own checkout']]) {
  try {
    accessSync(file, constants.X_OK)
  } catch {
    die(`${file} is not an executable file: ${hint}`)
  }
}
if (!hasCommand('wrk', '-v')) die(INSTALL_HINT)
if (!hasCommand('taskset', '-V')) die('taskset (util-linux) is needed to pin serve and wrk to their cores')

const work = mkdtempSync(join(tmpdir(), 'replenish-against-'))
const builds = [
  { name: 'this build', command: ours },
  { name: `other (${basename(resolve(theirs, '..', '..'))})`, command: theirs },
]
let exitCode = 0
try {
  const today = new Date().toISOString().slice(0, 10)
  for (const [i, b] of builds.entries()) {
    b.seeded = join(work, `seeded-${i}.db`)
    b.keys = join(work, `keys-${i}.txt`)
    const migrated = spawnSync(b.command, ['migrate'], { env: benchEnv(b.seeded), encoding: 'utf8' })
    if (migrated.status !== 0) throw new Error(`${b.command} migrate failed:\n${migrated.stdout}${migrated.stderr}`)
    writeLuaData(b.keys, seed(b.seeded, today))
  }
  log(`this build ${ours}; other ${theirs}; ${pairs} pairs × ${seconds} s (after ${warmup} s of warm-up each) per scenario; serve on cpu 0, wrk on cpu 1`)

  const rows = []
  for (const scenario of scenarios) {
    const runs = builds.map(() => [])
    for (let p = 0; p < pairs; p++) {
      // Swapped every pair, so that a host slowing down or speeding up favours neither build.
      for (const i of p % 2 === 0 ? [0, 1] : [1, 0]) runs[i].push(await measure(builds[i], scenario))
      log(`${scenario} pair ${p + 1}/${pairs}: this ${fmt(runs[0][p].cpuUs)} µs/req ${Math.round(runs[0][p].rps)} req/s; other ${fmt(runs[1][p].cpuUs)} µs/req ${Math.round(runs[1][p].rps)} req/s`)
    }
    const cpuRatios = runs[0].map((r, p) => r.cpuUs / runs[1][p].cpuUs)
    const rpsRatios = runs[0].map((r, p) => r.rps / runs[1][p].rps)
    rows.push({
      scenario,
      ours: { cpuUs: median(runs[0].map((r) => r.cpuUs)), rps: median(runs[0].map((r) => r.rps)) },
      theirs: { cpuUs: median(runs[1].map((r) => r.cpuUs)), rps: median(runs[1].map((r) => r.rps)) },
      cpuChange: median(cpuRatios) - 1,
      cpuChangeRange: [Math.min(...cpuRatios) - 1, Math.max(...cpuRatios) - 1],
      rpsChange: median(rpsRatios) - 1,
      runs,
    })
  }

  const result = { at: new Date().toISOString(), ours, theirs, pairs, seconds, warmup, connections, limit: LIMIT, machine: machine(work, sqliteVersion()), rows }
  const md = render(result)
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const stamp = result.at.replace(/[:.]/g, '-') + '-against'
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(dir, `${stamp}.md`), md)
  process.stdout.write('\n' + md)
  log(`written to bench/results/${stamp}.{md,json}`)
} catch (err) {
  exitCode = 1
  process.stderr.write(`bench:against failed: ${err instanceof Error ? err.message : String(err)}\n`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
process.exit(exitCode)

/**
 * One measurement: serve on a fresh copy of the build's seeded database, warmed up, then wrk with
 * CPU time read around it. A fresh serve spends more CPU per request for its first seconds: after
 * 2 s of warm-up a GET measured 44–53 µs, after 6 s 25–29 µs (2026-11-28), hence the default.
 */
async function measure(build, scenario) {
  const db = join(work, 'run.db')
  for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true })
  copyFileSync(build.seeded, db)
  // Someone else's CPU time between measurements would land in both builds' numbers alike only by luck.
  await waitQuiet(60_000, log)
  const server = await startServer(build.name, ...pinned(0, build.command, ['serve']), { env: benchEnv(db) })
  try {
    const wrk = (run, secs) => runWrk({ url: server.url, scenario, dataFile: build.keys, run, seconds: secs, connections, threads: 1, cpu: 1 })
    if (warmup > 0) await wrk(1, warmup)
    const before = cpuSecondsOfTree(server.pid)
    const r = await wrk(2, seconds)
    const after = cpuSecondsOfTree(server.pid)
    if (r.non2xx > 0 || r.status_errors > 0 || r.socketErrors > 0) {
      throw new Error(`${build.name}, ${scenario}: ${r.non2xx} non-2xx answers, ${r.socketErrors} socket errors or timeouts of ${r.requests} requests`)
    }
    if (before === undefined || after === undefined || r.requests === 0) throw new Error('CPU time per request needs /proc (Linux) and answered requests')
    return { rps: r.rps, p99Us: r.p99_us, cpuUs: ((after - before) / r.requests) * 1e6 }
  } finally {
    await server.stop()
  }
}

function render(r) {
  const pct = (x) => `${x >= 0 ? '+' : '−'}${Math.abs(x * 100).toFixed(1)} %`
  const lines = [
    `# bench:against, ${r.at}`,
    '',
    `This build \`${r.ours}\` against \`${r.theirs}\`: ${r.pairs} pairs of ${r.seconds} s measurements per scenario (after ${r.warmup} s of warm-up each), ` +
      `the two builds taking turns, each on a fresh copy of its own seeded database; serve on cpu 0, wrk on cpu 1, ${r.connections} connections. ` +
      `CPU µs/req: serve's user + system time, every thread, over the requests answered. Change: the median of the pairs' ratios (this build over the other).`,
    '',
    '| scenario | CPU µs/req, other | CPU µs/req, this | CPU change (range of the pairs) | req/s, other | req/s, this | req/s change | within 5 % |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ]
  for (const row of r.rows) {
    lines.push(`| ${row.scenario} | ${fmt(row.theirs.cpuUs)} | ${fmt(row.ours.cpuUs)} | ${pct(row.cpuChange)} (${pct(row.cpuChangeRange[0])} … ${pct(row.cpuChangeRange[1])}) | ` +
      `${Math.round(row.theirs.rps)} | ${Math.round(row.ours.rps)} | ${pct(row.rpsChange)} | ${row.cpuChange <= r.limit ? 'yes' : '**no**'} |`)
  }
  const m = r.machine
  lines.push('', `${m.cpu}, ${m.cores} cores, ${m.memory}, Node ${m.node}, SQLite ${m.sqlite}, database on ${m.databaseFilesystem}; load average at the end ${m.loadAverageAtEnd.join(' ')}.`, '')
  return lines.join('\n')
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

function fmt(us) {
  return us.toFixed(1)
}

function log(line) {
  process.stderr.write(`bench:against: ${line}\n`)
}

function die(message) {
  process.stderr.write(`bench:against: ${message}\n`)
  process.exit(2)
}
