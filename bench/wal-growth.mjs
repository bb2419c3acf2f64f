/**
 * `node bench/wal-growth.mjs` (Node 24: `npx node bench/wal-growth.mjs`): how large serve's SQLite
 * WAL file (`<database>-wal`) grows under steady writes (issue 25; docs/operations.md, "Durability
 * and memory"). The bench's database (bench/lib/seed.mjs), `serve` (dist/replenish when built,
 * else the sources through tsx) and wrk driving one write scenario of bench/scenarios.lua with 64
 * connections; the WAL's size is sampled every 20 ms from outside. Prints, per scenario: requests
 * per second, the WAL file's largest size in the first second and over the run, its median, how
 * often it was cut back, and how much it grew in all.
 *
 *   npx node bench/wal-growth.mjs                           # patch and create, 30 s each
 *   npx node bench/wal-growth.mjs --scenarios skip --seconds 10
 *
 * Scenarios: those of bench/scenarios.lua (patch, patch-keyed: each with a new Idempotency-Key,
 * skip, create), and patch-webhook: patch with a webhook endpoint on every event.
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { benchEnv } from './lib/env.mjs'
import { pinned, startServer } from './lib/process.mjs'
import { seed, writeLuaData } from './lib/seed.mjs'
import { runWrk } from './lib/wrk.mjs'
import { registerEndpoint } from './lib/webhooks.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const { values: opts } = parseArgs({
  options: {
    scenarios: { type: 'string', default: 'patch,create' },
    seconds: { type: 'string', default: '30' },
    connections: { type: 'string', default: '64' },
  },
})
const seconds = Number(opts.seconds)
const log = (line) => process.stderr.write(line + '\n')
const binary = join(ROOT, 'dist', 'replenish')
const [command, prefix] = existsSync(binary) ? [binary, []] : [process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')]]
const pin = cpus().length >= 2

for (const scenario of opts.scenarios.split(',')) {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-wal-'))
  const db = join(dir, 'bench.db')
  try {
    const env = benchEnv(db, { REPLENISH_ADMIN_TOKEN: 'wal-growth-bench-token' })
    const migrated = spawnSync(command, [...prefix, 'migrate'], { cwd: ROOT, env, encoding: 'utf8' })
    if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
    const dataFile = join(dir, 'keys.txt')
    writeLuaData(dataFile, seed(db, new Date().toISOString().slice(0, 10)))
    const server = await startServer('replenish', ...pinned(pin ? 0 : undefined, command, [...prefix, 'serve']), { cwd: ROOT, env })
    // patch-webhook: every event also gets a delivery, posted to a receiver (bench/lib/receiver.mjs).
    const receiver = scenario === 'patch-webhook'
      ? await startServer('receiver', ...pinned(pin ? 1 : undefined, process.execPath, [join(ROOT, 'bench', 'lib', 'receiver.mjs')]), { cwd: ROOT })
      : undefined
    if (receiver) await registerEndpoint(server.url, 'wal-growth-bench-token', receiver.url)
    const wal = `${db}-wal`
    const samples = []
    const started = performance.now()
    const timer = setInterval(() => {
      let size = 0
      try {
        size = statSync(wal).size
      } catch {}
      samples.push({ at: performance.now() - started, size })
    }, 20)
    const r = await runWrk({ url: server.url, scenario: receiver ? 'patch' : scenario, dataFile, run: 1, seconds, connections: Number(opts.connections), threads: 1, cpu: pin ? 1 : undefined })
    clearInterval(timer)
    await server.stop()
    await receiver?.stop()
    const sizes = samples.map((s) => s.size)
    // The file keeps its length when the WAL starts over from its beginning (SQLite reuses it),
    // and is cut back to journal_size_limit only when it was longer: its length is the disk it
    // takes. While it grows, each request's frames are new bytes at its end.
    let grown = 0
    let cuts = 0
    for (let i = 1; i < sizes.length; i++) {
      const d = sizes[i] - sizes[i - 1]
      if (d > 0) grown += d
      if (d < 0) cuts++
    }
    const sorted = [...sizes].sort((a, b) => a - b)
    const mb = (n) => (n / 1048576).toFixed(1)
    const first = Math.max(0, ...samples.filter((s) => s.at <= 1000).map((s) => s.size))
    log(`${scenario}: ${r.rps.toFixed(0)} req/s, ${r.requests} requests (${r.non2xx ?? 0} not 2xx) in ${seconds} s; WAL file: ` +
      `largest ${mb(sorted.at(-1) ?? 0)} MB (${mb(first)} MB in the first second), median ${mb(sorted[Math.floor(sorted.length / 2)] ?? 0)} MB, ` +
      `cut back ${cuts} times; growth of the file ${mb(grown)} MB (${(grown / r.requests / 1024).toFixed(1)} KiB per request while it grew)`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
