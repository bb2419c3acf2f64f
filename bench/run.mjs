#!/usr/bin/env node
/**
 * `npm run bench`: replenish against the runtime's own limit (issue 6).
 *
 * One run starts a bare node:http server (a fixed JSON body the size of a subscription with three
 * line items: the ceiling) and replenish on a fresh database of 1,000 users × 10 subscriptions ×
 * 3 line items, then drives both with wrk and the same settings: warm-up, then each scenario for
 * `--seconds` (10) per repetition, `--reps` (3) repetitions, medians reported. With two or more
 * cores the servers share core 0 (only one is loaded at a time) and wrk gets core 1.
 * Any non-2xx answer, socket error or timeout fails the run, and so does an acknowledged write
 * that is missing from the database afterwards.
 *
 * `patch-webhook` (issue 17) is `patch` with one webhook endpoint on `*`, registered through the
 * admin API before each of its measurements and deleted after, so no other scenario runs with
 * webhooks. Its receiver (bench/lib/receiver.mjs: node:http answering 200 `ok`) is a process of
 * its own on wrk's core: it stands for a machine elsewhere, so its work is not charged to
 * replenish's core. After each measurement the bench waits for the backlog to drain (/metrics
 * `replenish_webhook_deliveries_pending` at 0) and fails unless the receiver got an event for
 * every PATCH acknowledged.
 *
 * `--db postgres` (issue 24) runs the same scenarios on PostgreSQL: a throwaway cluster the bench
 * starts itself (bench/lib/postgres.mjs), durable like the SQLite run (fsync on,
 * synchronous_commit on), seeded with the same rows (bench/lib/seed-postgres.mjs), and pinned to
 * the servers' core: replenish and its database share core 0 as replenish and its SQLite file do,
 * and wrk keeps core 1. `--db postgres://…` uses an existing server instead (a fresh schema of
 * its database, dropped afterwards; not pinned). `--instances 2` starts two `serve` processes on
 * the one database, both on the servers' core, and drives each with its own wrk process on half
 * the connections and half the users. Results go to bench/results/latest-postgres.* (see `variant`).
 *
 *   npm run bench                      # the full run (about 6 minutes)
 *   npm run bench -- --quick           # 2 s × 1 repetition, while developing
 *   npm run bench -- --scenarios get,patch --seconds 5
 *   npm run bench -- --db postgres     # the same on PostgreSQL
 */
import { randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { availableParallelism, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { cpuSecondsOfTree, evictFromPageCache, hasCommand, memoryPoller, pinned, startServer } from './lib/process.mjs'
import { INSTALL_HINT, runWrk } from './lib/wrk.mjs'
import { benchEnv } from './lib/env.mjs'
import { renderMarkdown, renderTable, summarize, variantOf } from './lib/report.mjs'
import { renderProfile, summarizeProfile } from './lib/profile-summary.mjs'
import { deleteEndpoint, drain, endpointMetrics, receiverStats, registerEndpoint, resetReceiver } from './lib/webhooks.mjs'
import { cpuBusyShare, fsType, machine, waitQuiet } from './lib/machine.mjs'

/**
 * REPLENISH_DB_POOL unless --pool says otherwise: the product's default. Against 20 (2026-11-25,
 * one cluster, a pool-10 and a pool-20 instance measured alternately, 4 × 3 s each) 20 was no
 * better: median req/s ratios 20/10 of 1.08 (GET), 1.00 (PATCH), 0.98 (skip), 0.96 (create),
 * within the noise. With replenish and PostgreSQL on one core, more connections only queue more
 * transactions for the same core, and each costs a backend's memory.
 */
const DEFAULT_POOL = 10
/** The bench's own cluster; two instances × a pool of 20 and the bench's few stay well under it. */
const MAX_CONNECTIONS = 100

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const SCENARIOS = {
  get: 'GET subscription',
  list: 'GET list',
  patch: 'PATCH line item quantity',
  'patch-webhook': 'PATCH line item quantity, 1 webhook endpoint on *',
  skip: 'POST skip',
  create: 'POST create (2 line items)',
}

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    seconds: { type: 'string' },
    reps: { type: 'string' },
    warmup: { type: 'string' },
    connections: { type: 'string', default: '64' },
    threads: { type: 'string', default: '1' },
    scenarios: { type: 'string', default: Object.keys(SCENARIOS).join(',') },
    dir: { type: 'string' },
    'no-pin': { type: 'boolean', default: false },
    'keep-db': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    db: { type: 'string', default: 'sqlite' },
    pool: { type: 'string', default: String(DEFAULT_POOL) },
    instances: { type: 'string', default: '1' },
    'db-cpu': { type: 'string' },
    'wrk-cpu': { type: 'string' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})

if (opts.help) {
  process.stdout.write(`usage: npm run bench [-- options]
  --quick             2 s per scenario, 1 repetition, 1 s warm-up (development)
  --seconds N         seconds per scenario and repetition (default 10)
  --reps N            repetitions; medians are reported (default 3)
  --warmup N          warm-up seconds per scenario before the first repetition (default 3)
  --connections N     wrk connections (default 64)
  --threads N         wrk threads (default 1: wrk has one core to itself)
  --scenarios a,b     some of: ${Object.keys(SCENARIOS).join(', ')}
  --dir PATH          where the temporary database goes (default: the OS temp dir); put it on a real disk
  --no-pin            do not pin the servers and wrk to separate cores
  --keep-db           keep the database afterwards
  --profile           run replenish from source under --cpu-prof and summarise its hottest functions
                      (self time) into bench/results/profile-*.md; use with --scenarios to profile one
  --db sqlite         the database: sqlite (default), postgres (a throwaway cluster the bench starts,
                      pinned beside replenish) or a postgres:// URL (a fresh schema there, dropped after)
  --pool N            PostgreSQL: REPLENISH_DB_POOL of each instance (default ${DEFAULT_POOL})
  --instances N       PostgreSQL: serve processes on the one database, each driven by its own wrk (default 1)
  --db-cpu N          PostgreSQL: the core the bench's cluster is pinned to (default: the servers' core, 0)
  --wrk-cpu N         the core wrk (and the webhook receiver) run on (default 1); with --db-cpu 1 --wrk-cpu 0
                      PostgreSQL has a core to itself and wrk shares the servers' (issue 30's instances curve)
`)
  process.exit(0)
}

const seconds = Number(opts.seconds ?? (opts.quick ? 2 : 10))
const reps = Number(opts.reps ?? (opts.quick ? 1 : 3))
const warmup = Number(opts.warmup ?? (opts.quick ? 1 : 3))
const connections = Number(opts.connections)
const threads = Number(opts.threads)
const pool = Number(opts.pool)
const instances = Number(opts.instances)
const scenarios = opts.scenarios.split(',').map((s) => s.trim()).filter(Boolean)
for (const s of scenarios) if (!(s in SCENARIOS)) die(`unknown scenario ${s}; known: ${Object.keys(SCENARIOS).join(', ')}`)
const backend = opts.db === 'sqlite' ? 'sqlite' : opts.db === 'postgres' || /^postgres(ql)?:\/\//.test(opts.db) ? 'postgres' : undefined
if (backend === undefined) die(`--db must be sqlite, postgres or a postgres:// URL, not ${opts.db}`)
if (backend === 'sqlite' && instances !== 1) die('--instances needs PostgreSQL: a SQLite file is served by one process')
for (const [name, n] of Object.entries({ seconds, reps, connections, threads, pool, instances })) {
  if (!Number.isInteger(n) || n < 1) die(`--${name} must be a whole number of at least 1`)
}
if (!Number.isInteger(warmup) || warmup < 0) die('--warmup must be a whole number')
if (connections < threads * instances) die('--connections must be at least --threads × --instances')

if (Number(process.versions.node.split('.')[0]) < 24) {
  die(`the bench needs Node 24 (node:sqlite); this is ${process.version}. Run it as \`npm run bench\` (npm puts node_modules/.bin first on PATH).`)
}
if (!hasCommand('wrk', '-v')) die(INSTALL_HINT)
const { seed, writeLuaData, countEvents, sqliteVersion, USERS, SUBSCRIPTIONS_PER_USER, LINE_ITEMS_PER_SUBSCRIPTION } = await import('./lib/seed.mjs')

const cores = availableParallelism()
const pin = !opts['no-pin'] && cores >= 2 && hasCommand('taskset', '-V')
const cpuOption = (name, fallback) => {
  if (opts[name] === undefined) return fallback
  const n = Number(opts[name])
  if (!Number.isInteger(n) || n < 0 || n >= cores) die(`--${name} must be a core number from 0 to ${cores - 1}`)
  return n
}
const serverCpu = pin ? 0 : undefined
const wrkCpu = pin ? cpuOption('wrk-cpu', 1) : undefined
const databaseCpu = pin ? cpuOption('db-cpu', serverCpu) : undefined
if (opts['db-cpu'] !== undefined && opts.db !== 'postgres') die('--db-cpu pins the bench\'s own cluster: use it with --db postgres')

const binary = join(ROOT, 'dist', 'replenish')
const replenish = existsSync(binary) && !opts.profile
  ? { mode: 'binary (dist/replenish)', command: binary, prefix: [] }
  : { mode: 'source (node --import tsx src/main.ts)', command: process.execPath, prefix: ['--import', 'tsx', join(ROOT, 'src', 'main.ts')] }

const work = mkdtempSync(join(opts.dir ?? tmpdir(), 'replenish-bench-'))
const dbFile = join(work, 'bench.db')
const dataFile = join(work, 'keys.txt')
const profileDir = join(work, 'profile')
// For the admin API (webhook endpoints, /metrics) of this database only; never printed.
const adminToken = randomBytes(24).toString('hex')
const webhooks = scenarios.includes('patch-webhook')

const started = []
let database
let exitCode = 0
try {
  // Another process loading the machine takes cores from the servers and wrk alike: the ratios
  // stay meaningful only so far, so say so beside the numbers.
  const busy = await cpuBusyShare(1000)
  database = await openDatabase()
  log(`replenish: ${replenish.mode}; database ${database.shown}`)
  if (busy > 0.1) log(`warning: the CPUs are ${(busy * 100).toFixed(0)}% busy before the bench starts; expect lower and noisier numbers`)
  const env = benchEnv(database.location, {
    REPLENISH_ADMIN_TOKEN: adminToken,
    ...(backend === 'postgres' ? { REPLENISH_DB_POOL: String(pool) } : {}),
  })
  const migrated = spawnSync(replenish.command, [...replenish.prefix, 'migrate'], { cwd: ROOT, env, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`replenish migrate failed:\n${migrated.stdout}${migrated.stderr}`)
  const t0 = performance.now()
  const users = await database.seed(new Date().toISOString().slice(0, 10))
  writeLuaData(dataFile, users)
  log(`seeded ${USERS} users × ${SUBSCRIPTIONS_PER_USER} subscriptions × ${LINE_ITEMS_PER_SUBSCRIPTION} line items in ${Math.round(performance.now() - t0)} ms`)

  const [bareCmd, bareArgs] = pinned(serverCpu, process.execPath, [join(ROOT, 'bench', 'lib', 'bare-server.mjs')])
  const bare = await startServer('bare node:http', bareCmd, bareArgs, { cwd: ROOT })
  started.push(bare)
  const profileArgs = opts.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []
  const evicted = replenish.command === binary && evictFromPageCache(binary)
  if (replenish.command === binary) log(evicted ? 'dist/replenish dropped from the page cache before it starts (see evictFromPageCache)' : 'could not drop dist/replenish from the page cache (no GNU dd): its peak RSS includes ~20 MB of cached text')
  const [appCmd, appArgs] = pinned(serverCpu, replenish.command, [...profileArgs, ...replenish.prefix, 'serve'])
  const apps = []
  for (let i = 0; i < instances; i++) {
    const instance = await startServer(instances === 1 ? 'replenish' : `replenish ${i + 1}`, appCmd, appArgs, { cwd: ROOT, env })
    started.push(instance)
    apps.push(instance)
  }
  // The admin API and /metrics of any instance see the one database: the first one serves them.
  const app = apps[0]
  await checkBodies(bare.url, app.url, users[0])
  log(`bare ${bare.url} (pid ${bare.pid}), replenish ${apps.map((a) => `${a.url} (pid ${a.pid})`).join(', ')}; ` +
    (pin ? `servers on cpu ${serverCpu}${database.pid === undefined ? '' : `, PostgreSQL on cpu ${databaseCpu}`}, wrk on cpu ${wrkCpu}` : `not pinned (${cores} core${cores === 1 ? '' : 's'})`))

  let receiver
  if (webhooks) {
    receiver = await startServer('receiver', ...pinned(wrkCpu, process.execPath, [join(ROOT, 'bench', 'lib', 'receiver.mjs')]), { cwd: ROOT })
    started.push(receiver)
    log(`webhook receiver ${receiver.url} (pid ${receiver.pid})${pin ? ` on cpu ${wrkCpu}, beside wrk` : ''}`)
  }

  const targets = [{ key: 'bare', label: 'bare node:http (ceiling)', servers: [bare], scenario: 'get' }]
  for (const s of scenarios) {
    const webhook = s === 'patch-webhook'
    targets.push({ key: s, label: SCENARIOS[s], servers: apps, scenario: webhook ? 'patch' : s, webhook })
  }
  let run = 0
  const acknowledged = { patch: 0, 'patch-webhook': 0, skip: 0, create: 0 }
  let busyStarts = 0
  const measure = async (target, secs) => {
    // Between two measurements our own servers idle, so CPU time now is someone else's: wait
    // (a minute at most) for it to pass, and count the measurements that had to start anyway.
    if (!(await waitQuiet(60_000, log))) busyStarts++
    const endpointId = target.webhook ? await startWebhook() : undefined
    const memory = target.servers.map((s) => memoryPoller(s.pid))
    const n = target.servers.length
    // CPU time per request, of the servers and of PostgreSQL's processes: unlike req/s it does not
    // count time spent waiting for a core someone else had, and it is what sizing needs (issue 30).
    const cpuOf = () => ({
      server: target.servers.reduce((t, s) => t + (cpuSecondsOfTree(s.pid) ?? NaN), 0),
      database: database.pid === undefined ? undefined : cpuSecondsOfTree(database.pid),
    })
    const cpuBefore = cpuOf()
    ++run
    const r = combineWrk(await Promise.all(target.servers.map((server, i) => runWrk({
      url: server.url, scenario: target.scenario, dataFile, run, seconds: secs,
      connections: Math.floor(connections / n) + (i < connections % n ? 1 : 0), threads, cpu: wrkCpu, slice: i, slices: n,
    }))))
    const cpuAfter = cpuOf()
    const perRequest = (key) => (cpuBefore[key] === undefined || r.requests === 0 ? undefined : ((cpuAfter[key] - cpuBefore[key]) / r.requests) * 1e6)
    r.cpuUs = perRequest('server')
    r.dbCpuUs = perRequest('database')
    for (const s of target.servers) if (!s.alive()) throw new Error(`${s.name} died during ${target.label}:\n${s.stderr()}`)
    if (r.non2xx > 0 || r.status_errors > 0 || r.socketErrors > 0) {
      throw new Error(`${target.label}: ${r.non2xx} non-2xx answers, ${r.socketErrors} socket errors or timeouts of ${r.requests} requests; every answer must be 2xx`)
    }
    if (target.servers === apps && target.key in acknowledged) acknowledged[target.key] += r.requests
    // The drain belongs to the webhook scenario's cost: its memory is measured through it.
    const webhook = endpointId === undefined ? undefined : await finishWebhook(endpointId, r.requests)
    const mems = memory.map((m) => m.stop())
    const mem = { peakRssMB: Math.max(...mems.map((m) => m.peakRssMB)), hwmMB: Math.max(...mems.map((m) => m.hwmMB)), peakAnonMB: Math.max(...mems.map((m) => m.peakAnonMB)) }
    return { ...r, ...mem, ...(webhook ? { webhook } : {}) }
  }

  /** A fresh endpoint on `*` to the receiver, which forgets what it got before. */
  const startWebhook = async () => {
    await resetReceiver(receiver.url)
    // Answered once committed: from here on every event's outbox trigger finds the endpoint.
    return registerEndpoint(app.url, adminToken, receiver.url)
  }

  /**
   * After wrk: the backlog left at its end, the time until nothing is pending, and the check that
   * every acknowledged PATCH reached the receiver; then the endpoint goes. Bounded: a drain
   * slower than 500/s fails the run.
   */
  const finishWebhook = async (endpointId, patches) => {
    const duringLoad = (await receiverStats(receiver.url)).distinct
    const left = await endpointMetrics(app.url, adminToken, endpointId)
    const from = performance.now()
    const done = await drain({
      appUrl: app.url, adminToken, endpointId, receiverUrl: receiver.url, expected: patches,
      limitMs: Math.max(60_000, left.pending * 2),
    })
    const seconds = (done.at - from) / 1000
    await deleteEndpoint(app.url, adminToken, endpointId)
    if (done.receiver.distinct < patches) throw new Error(`webhooks: the receiver got ${done.receiver.distinct} events for ${patches} PATCHes acknowledged`)
    return {
      acknowledged: patches,
      received: done.receiver.distinct,
      duplicates: done.receiver.duplicates,
      delivered: done.metrics.delivered,
      receivedDuringLoad: duringLoad,
      backlogAtEnd: left.pending,
      drainSeconds: seconds,
      drainPerSecond: seconds > 0 ? left.pending / seconds : null,
    }
  }

  if (warmup > 0) {
    log(`warm-up: ${warmup} s per scenario`)
    for (const t of targets) await measure(t, warmup)
  }
  const runs = Object.fromEntries(targets.map((t) => [t.key, []]))
  for (let rep = 1; rep <= reps; rep++) {
    // Repetitions interleave the scenarios, so a slow minute of the machine hits all of them alike.
    for (const t of targets) {
      const r = await measure(t, seconds)
      runs[t.key].push(r)
      log(`rep ${rep}/${reps} ${t.label.padEnd(28)} ${Math.round(r.rps).toString().padStart(7)} req/s  p50 ${ms(r.p50_us)}  p99 ${ms(r.p99_us)}  rss ${r.peakRssMB.toFixed(0)} MB`)
      if (r.webhook) {
        const w = r.webhook
        log(`  webhooks: ${w.received} events received for ${w.acknowledged} PATCHes (${w.receivedDuringLoad} during the load); ` +
          `backlog ${w.backlogAtEnd} drained in ${w.drainSeconds.toFixed(1)} s = ${Math.round(w.drainPerSecond ?? 0)}/s`)
      }
    }
  }

  const appHwm = Math.max(...apps.map((a) => memoryPoller(a.pid).stop().hwmMB))
  const appAnon = Math.max(0, ...targets.filter((t) => t.servers === apps).flatMap((t) => runs[t.key]).map((r) => r.peakAnonMB ?? 0))
  for (const a of apps) await a.stop()
  await bare.stop()
  await receiver?.stop()
  started.length = 0
  const durability = checkDurability(await database.countEvents(), acknowledged)

  // Each backend (and instance count) is compared with its own last run and recorded apart.
  const variant = variantOf({ backend, instances })
  const latest = `latest${variant}`
  const previous = existsSync(join(ROOT, 'bench', 'results', `${latest}.json`))
    ? JSON.parse(readFileSync(join(ROOT, 'bench', 'results', `${latest}.json`), 'utf8'))
    : undefined
  const result = summarize({
    targets, runs, previous, appHwm, appAnon, durability,
    settings: {
      seconds, reps, warmup, connections, threads, pinned: pin, serverCpu, wrkCpu, replenish: replenish.mode, busyStarts, evicted, cpuPerRequest: true,
      backend, ...database.settings,
    },
    machine: { ...machine(work, sqliteVersion()), ...database.machine },
  })
  // Only a full run of every scenario becomes latest.*: quick, partial and profiled runs
  // (a profiler slows the server) are kept under their own names, and so are runs against a
  // PostgreSQL server other than the bench's own (its core and disk are not this machine's budget).
  const full = !opts.quick && !opts.profile && seconds >= 10 && reps >= 3 && scenarios.length === Object.keys(SCENARIOS).length &&
    (backend === 'sqlite' || opts.db === 'postgres')
  const tag = opts.profile ? '-profile' : opts.quick ? '-quick' : full ? '' : '-partial'
  const stamp = new Date().toISOString().replace(/[:.]/g, '-') + variant + tag
  const dir = join(ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const md = renderMarkdown(result)
  writeFileSync(join(dir, `${stamp}.json`), JSON.stringify(result, null, 2) + '\n')
  writeFileSync(join(dir, `${stamp}.md`), md)
  if (full) {
    writeFileSync(join(dir, `${latest}.json`), JSON.stringify(result, null, 2) + '\n')
    writeFileSync(join(dir, `${latest}.md`), md)
  }
  process.stdout.write('\n' + renderTable(result) + '\n')
  log(`written to bench/results/${stamp}.{md,json}${full ? ` (and ${latest}.*)` : ''}`)
  if (opts.profile) {
    // The main thread's profile is the big one (tsx's loader thread writes a small one beside it).
    const file = readdirSync(profileDir).filter((f) => f.endsWith('.cpuprofile'))
      .sort((a, b) => statSync(join(profileDir, b)).size - statSync(join(profileDir, a)).size)[0]
    if (!file) throw new Error(`replenish wrote no .cpuprofile into ${profileDir}`)
    const summary = renderProfile(summarizeProfile(JSON.parse(readFileSync(join(profileDir, file), 'utf8'))))
    const name = `${stamp}-${scenarios.join('-')}.cpuprofile.md`
    writeFileSync(join(dir, name), `# replenish --cpu-prof: ${scenarios.join(', ')}\n\n${md}\n${summary}\n`)
    process.stdout.write(`\n${summary}\n`)
    log(`profile summary written to bench/results/${name}`)
  }
  if (!durability.ok) {
    exitCode = 1
    log(`FAILED: acknowledged writes missing from the database: ${durability.text}`)
  }
} catch (err) {
  exitCode = 1
  process.stderr.write(`bench failed: ${err instanceof Error ? err.message : String(err)}\n`)
} finally {
  for (const s of started) await s.stop().catch(() => undefined)
  await database?.close().catch((err) => log(`closing the database: ${err instanceof Error ? err.message : String(err)}`))
  if (!opts['keep-db']) rmSync(work, { recursive: true, force: true })
  else log(`database kept in ${database?.kept ?? work}`)
}
process.exit(exitCode)

/**
 * The database of this run: where replenish finds it (REPLENISH_DB), how it is seeded and its
 * events counted, what the results record of it, and `close()` at the end. PostgreSQL's modules
 * (and the pg driver) load only for a PostgreSQL run.
 */
async function openDatabase() {
  if (backend === 'sqlite') {
    return {
      location: dbFile,
      shown: `${dbFile} (${fsType(work)})`,
      seed: async (today) => seed(dbFile, today),
      countEvents: async () => countEvents(dbFile),
      settings: { synchronous: 'FULL' },
      machine: {},
      close: async () => {},
    }
  }
  const { freshSchema, maskedUrl, serverFacts, startCluster } = await import('./lib/postgres.mjs')
  const { countEventsPostgres, seedPostgres } = await import('./lib/seed-postgres.mjs')
  const common = (url) => ({
    location: url,
    seed: (today) => seedPostgres(url, today),
    countEvents: () => countEventsPostgres(url),
  })
  if (opts.db === 'postgres') {
    const cluster = await startCluster({ dir: work, cpu: databaseCpu, maxConnections: MAX_CONNECTIONS })
    const facts = await serverFacts(cluster.url).catch(async (err) => {
      await cluster.stop()
      throw err
    })
    return {
      ...common(cluster.url),
      pid: cluster.pid,
      shown: `PostgreSQL ${facts.version}, the bench's own cluster ${cluster.url} in ${cluster.dataDir} (${fsType(work)}), ` +
        `${facts.durability}, max_connections ${MAX_CONNECTIONS}${databaseCpu === undefined ? '' : `, pinned to cpu ${databaseCpu}${databaseCpu === serverCpu ? ' beside replenish' : ''}`}`,
      settings: { pool, instances, synchronous: facts.durability, postgres: 'cluster', postgresCpu: databaseCpu, maxConnections: MAX_CONNECTIONS },
      machine: { postgres: facts.version },
      close: () => cluster.stop(),
      kept: `${work} (the cluster stopped; its data directory is ${cluster.dataDir})`,
    }
  }
  const schema = await freshSchema(opts.db)
  const facts = await serverFacts(schema.url)
  return {
    ...common(schema.url),
    shown: `PostgreSQL ${facts.version} at ${maskedUrl(opts.db)}, schema ${schema.schema}, ${facts.durability} (not pinned: the bench does not own that server)`,
    settings: { pool, instances, synchronous: facts.durability, postgres: 'existing server' },
    machine: { postgres: facts.version, databaseFilesystem: 'an existing server' },
    close: () => (opts['keep-db'] ? Promise.resolve() : schema.drop()),
    kept: `schema ${schema.schema} of ${maskedUrl(opts.db)}, and ${work}`,
  }
}

/**
 * One measurement from the wrk processes that ran it side by side, one per instance: requests and
 * rates add up; their latency distributions cannot be merged from percentiles, so each percentile
 * is the worse of the processes' (one process: its own numbers).
 */
function combineWrk(parts) {
  if (parts.length === 1) return parts[0]
  const sum = (k) => parts.reduce((n, p) => n + p[k], 0)
  const max = (k) => Math.max(...parts.map((p) => p[k]))
  return {
    requests: sum('requests'), duration_us: max('duration_us'), bytes: sum('bytes'), rps: sum('rps'),
    non2xx: sum('non2xx'), status_errors: sum('status_errors'), socketErrors: sum('socketErrors'),
    connect_errors: sum('connect_errors'), read_errors: sum('read_errors'), write_errors: sum('write_errors'), timeouts: sum('timeouts'),
    p50_us: max('p50_us'), p90_us: max('p90_us'), p99_us: max('p99_us'), max_us: max('max_us'),
    mean_us: parts.reduce((n, p) => n + p.mean_us * p.requests, 0) / Math.max(1, sum('requests')),
  }
}

/** Both servers answer a first request with 200 and a body of about the same size. */
async function checkBodies(bareUrl, appUrl, user) {
  const a = await fetch(`${bareUrl}/`)
  const b = await fetch(`${appUrl}/api/v1/subscriptions/${user.subscriptions[0]}`, { headers: { authorization: `Bearer ${user.key}` } })
  const [ta, tb] = [await a.text(), await b.text()]
  if (a.status !== 200 || b.status !== 200) throw new Error(`first requests answered ${a.status} (bare) and ${b.status} (replenish): ${tb}`)
  log(`response bodies: bare ${ta.length} bytes, replenish GET subscription ${tb.length} bytes`)
}

/** Every write wrk saw acknowledged (2xx) must have left its event: none may be lost. */
function checkDurability(events, acknowledged) {
  const rows = [
    ['patch', 'line_item.updated', acknowledged.patch + acknowledged['patch-webhook']],
    ['skip', 'subscription.skipped', acknowledged.skip],
    ['create', 'subscription.created', acknowledged.create],
  ].filter(([, , n]) => n > 0)
  const lines = rows.map(([k, type, n]) => ({ scenario: k, event: type, acknowledged: n, stored: events[type] ?? 0 }))
  const ok = lines.every((l) => l.stored >= l.acknowledged)
  return { ok, lines, text: lines.map((l) => `${l.event}: ${l.stored} stored for ${l.acknowledged} acknowledged`).join('; ') }
}

function ms(us) {
  return `${(us / 1000).toFixed(2)} ms`.padStart(9)
}

function log(line) {
  process.stderr.write(`bench: ${line}\n`)
}

function die(message) {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}
