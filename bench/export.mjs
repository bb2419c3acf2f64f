#!/usr/bin/env node
/**
 * `npm run bench:export`: the CSV export of 1,000,000 subscriptions (C18, issue 28) streamed out
 * of a running `replenish serve` on SQLite, with the server's resident memory sampled the whole
 * time: the export reads the store in batches by id and writes each once the client has taken
 * the one before, so the RSS must stay flat however many rows go out.
 *
 * Seeds with the bench's helpers (seed.mjs: 1,000 users and 10,000 subscriptions of 3 line items;
 * seed-due.mjs: 990,000 more of 2), then, against one server: an export read as fast as it comes
 * (identity), the same with gzip, and a slow client (reading 2 MB/s) for a while, cut off. Each
 * run checks the rows it received. Prints a Markdown summary; the last line is exactly:
 *
 *   exported <N> subscriptions in <S> s, serve RSS <A> → <B> MB (peak <P> MB)
 *
 * (A: after half the rows, B: at the end.) RSS rises at the start of the first run while V8
 * grows its young generation to the allocation rate (up to 64 MB semi-spaces here; live data
 * after each scavenge stays about 19 MB, `--trace-gc`), then stays flat: docs/performance.md.
 *
 *   npm run bench:export                     # 1,000,000
 *   npm run bench:export -- --count 100000   # while developing
 */
import http from 'node:http'
import { once } from 'node:events'
import { StringDecoder } from 'node:string_decoder'
import { createGunzip } from 'node:zlib'
import { mkdtempSync, rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { seed } from './lib/seed.mjs'
import { seedDue } from './lib/seed-due.mjs'
import { benchEnv } from './lib/env.mjs'
import { memoryOf, startServer } from './lib/process.mjs'
import { cpuBusyShare } from './lib/machine.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const TODAY = '2026-03-01'
const TOKEN = 'bench-export-admin-token-0123456789'
const SEEDED = 10_000 // seed.mjs: 1,000 users × 10
/** Where in each run serve's RSS is shown: after this share of its rows. */
const SHARES = [0.05, 0.25, 0.5, 0.75, 1]

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    'slow-seconds': { type: 'string', default: '20' },
    'keep-db': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npm run bench:export [-- --count N] [--slow-seconds S] [--keep-db]\n')
  process.exit(0)
}
const count = Number(opts.count)
if (!Number.isSafeInteger(count) || count < SEEDED) throw new Error(`--count: a whole number of at least ${SEEDED}`)
const slowSeconds = Number(opts['slow-seconds'])

const log = (line) => process.stderr.write(line + '\n')
const dir = mkdtempSync(join(tmpdir(), 'replenish-bench-export-'))
const db = join(dir, 'bench.db')
const command = [process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')]]

let server
try {
  const env = benchEnv(db, { REPLENISH_ADMIN_TOKEN: TOKEN, REPLENISH_TODAY: TODAY })
  const migrated = spawnSync(command[0], [...command[1], 'migrate'], { env, cwd: ROOT, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  let t = performance.now()
  seed(db, TODAY)
  seedDue(db, count - SEEDED, TODAY)
  log(`seeded ${count} subscriptions in ${((performance.now() - t) / 1000).toFixed(1)} s (${db})`)

  server = await startServer('replenish', command[0], [...command[1], 'serve'], { cwd: ROOT, env })
  // One small request first: what the server holds before any export is its baseline.
  await get(`${server.url}/admin/api/v1/subscriptions?limit=1`, {}, () => {})
  await new Promise((r) => setTimeout(r, 1000))
  const idle = memoryOf(server.pid)
  log(`serve (pid ${server.pid}) idle: RSS ${idle.rssMB.toFixed(1)} MB`)

  const runs = []
  for (const [name, headers, pace] of [['identity, read at full speed', {}, undefined], ['gzip, read at full speed', { 'accept-encoding': 'gzip' }, undefined], [`identity, a slow client (2 MB/s) cut off after ${slowSeconds} s`, {}, { bytesPerSecond: 2e6, seconds: slowSeconds }]]) {
    runs.push(await exportRun(name, headers, pace))
    log(JSON.stringify(runs[runs.length - 1]))
  }
  const [full] = runs
  const busy = await cpuBusyShare(1000)
  const table = [
    `| run | rows | bytes sent | seconds | rows/s | serve's RSS after ${SHARES.map((x) => `${x * 100} %`).join(' / ')} of the rows (MB) | peak RSS (MB) |`,
    '|---|---:|---:|---:|---:|---|---:|',
    ...runs.map((r) => `| ${r.name} | ${r.rows.toLocaleString('en')} | ${(r.bytes / 1e6).toFixed(1)} MB | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en')} | ${r.rssAt.map((m) => m.toFixed(1)).join(' / ')} | ${r.peakRssMB.toFixed(1)} |`),
  ]
  process.stdout.write(`\nserve idle RSS ${idle.rssMB.toFixed(1)} MB; CPU busy after the runs: ${(busy * 100).toFixed(0)} % of all cores\n\n${table.join('\n')}\n\n`)
  process.stdout.write(`exported ${full.rows} subscriptions in ${full.seconds.toFixed(1)} s, serve RSS ${full.rssAt[2].toFixed(0)} → ${full.rssAt[SHARES.length - 1].toFixed(0)} MB (peak ${full.peakRssMB.toFixed(0)} MB)\n`)
} finally {
  await server?.stop()
  if (!opts['keep-db']) rmSync(dir, { recursive: true, force: true })
  else log(`kept ${db}`)
}

/**
 * One export: streamed, its records counted and checked (ids 1…count in order), serve's RSS
 * sampled every 100 ms with the number of rows received so far.
 */
async function exportRun(name, headers, pace) {
  const samples = []
  let rows = -1 // the header
  let bytes = 0
  let lastId = 0
  let tail = ''
  const text = new StringDecoder('utf8')
  const onText = (chunk) => {
    const lines = (tail + text.write(chunk)).split('\r\n')
    tail = lines.pop() ?? ''
    for (const line of lines) {
      rows++
      if (rows === 0) continue
      const id = Number(line.slice(0, line.indexOf(',')))
      if (id !== lastId + 1) throw new Error(`${name}: id ${id} after ${lastId}`)
      lastId = id
    }
  }
  const gunzip = headers['accept-encoding'] === 'gzip' ? createGunzip() : undefined
  gunzip?.on('data', onText)
  const started = performance.now()
  const timer = setInterval(() => {
    const m = memoryOf(server.pid)
    if (m) samples.push({ at: rows, rssMB: m.rssMB })
  }, 100)
  try {
    await get(`${server.url}/admin/api/v1/exports/subscriptions.csv`, headers, (chunk, res) => {
      bytes += chunk.length
      if (gunzip) gunzip.write(chunk)
      else onText(chunk)
      if (pace && performance.now() - started > pace.seconds * 1000) res.destroy()
    }, pace)
  } finally {
    clearInterval(timer)
  }
  if (gunzip) {
    gunzip.end()
    await once(gunzip, 'end')
  }
  const seconds = (performance.now() - started) / 1000
  if (!pace && rows !== count) throw new Error(`${name}: ${rows} rows, expected ${count}`)
  const total = pace ? Math.max(rows, 1) : count
  const at = (share) => samples.find((s) => s.at >= total * share)?.rssMB ?? samples[samples.length - 1]?.rssMB ?? NaN
  return { name, rows, bytes, seconds, rssAt: SHARES.map(at), peakRssMB: Math.max(...samples.map((s) => s.rssMB)) }
}

/** GET with the admin token; `onChunk` sees every chunk as received. A `pace` reads at most so many bytes a second. */
function get(url, headers, onChunk, pace) {
  return new Promise((resolvePromise, reject) => {
    const req = http.get(url, { headers: { authorization: `Bearer ${TOKEN}`, ...headers } }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`))
      const started = performance.now()
      let received = 0
      res.on('data', (chunk) => {
        received += chunk.length
        onChunk(chunk, res)
        if (pace) {
          // Ahead of the pace: stop reading until the pace catches up (the server must wait too).
          const due = (received / pace.bytesPerSecond) * 1000 - (performance.now() - started)
          if (due > 0) {
            res.pause()
            setTimeout(() => res.resume(), due)
          }
        }
      })
      res.on('end', resolvePromise)
      res.on('close', resolvePromise)
      res.on('error', (err) => (pace ? resolvePromise() : reject(err)))
    })
    req.on('error', (err) => (pace ? resolvePromise() : reject(err)))
  })
}
