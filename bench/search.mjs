#!/usr/bin/env node
/**
 * `npm run bench:search`: `GET /admin/api/v1/users?q=` (C18, issue 28) on 1,000,000 users, on
 * SQLite and on PostgreSQL (a throwaway cluster this script starts, as `npm run bench -- --db
 * postgres` does). Each backend: a fresh migrated database, the users inserted in one statement,
 * `replenish serve`, then every query below asked 30 times in a row; the table shows the median
 * and the slowest of the 30 (whole requests, HTTP included) and how many users the prefix
 * matches. The users: `user<i>@<domain>` with 30 % at gmail.com, 10 % at yahoo.com, 5 % at
 * outlook.com and the rest spread over 5,000 small domains; external ids `cus_<i>`.
 *
 *   npm run bench:search                       # 1,000,000 users, both backends
 *   npm run bench:search -- --count 100000 --backend sqlite
 */
import http from 'node:http'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { benchEnv } from './lib/env.mjs'
import { startServer } from './lib/process.mjs'
import { startCluster, withClient } from './lib/postgres.mjs'
import { cpuBusyShare } from './lib/machine.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const TOKEN = 'bench-search-admin-token-0123456789'
const REPEAT = 30

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    backend: { type: 'string', default: 'both' },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npm run bench:search [-- --count N] [--backend sqlite|postgres|both]\n')
  process.exit(0)
}
const count = Number(opts.count)
if (!Number.isSafeInteger(count) || count < 1000) throw new Error('--count: a whole number of at least 1000')

/** What is searched: a few users, a domain's hundred or so, a third of everyone, nobody. */
const QUERIES = ['user123456', 'USER12345', 'cus_98765', 'mail1299.example', 'user1', 'gmail.com', 'g', 'zzz']

const DOMAIN = (i) => `CASE WHEN ${i} % 100 < 30 THEN 'gmail.com' WHEN ${i} % 100 < 40 THEN 'yahoo.com' WHEN ${i} % 100 < 45 THEN 'outlook.com' ELSE 'mail' || (${i} % 5000) || '.example' END`
const AT = "'2026-01-01T00:00:00.000Z'"

const log = (line) => process.stderr.write(line + '\n')
const command = [process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')]]
const dir = mkdtempSync(join(tmpdir(), 'replenish-bench-search-'))
const results = []
let cluster
try {
  if (opts.backend !== 'postgres') {
    const db = join(dir, 'search.db')
    migrate(db)
    const t = performance.now()
    const conn = new DatabaseSync(db)
    conn.exec('PRAGMA synchronous = OFF')
    conn.exec(`WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${count})
      INSERT INTO users (id, email, external_id, created_at, updated_at) SELECT i, 'user' || i || '@' || ${DOMAIN('i')}, 'cus_' || i, ${AT}, ${AT} FROM k`)
    conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    conn.close()
    log(`sqlite: ${count} users in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    results.push(['SQLite', await measure(db)])
  }
  if (opts.backend !== 'sqlite') {
    cluster = await startCluster({ dir, maxConnections: 50 })
    migrate(cluster.url)
    const t = performance.now()
    await withClient(cluster.url, async (c) => {
      await c.query(`INSERT INTO users (id, email, external_id, created_at, updated_at)
        SELECT i, 'user' || i || '@' || ${DOMAIN('i')}, 'cus_' || i, ${AT}, ${AT} FROM generate_series(1, ${count}) AS i`)
      await c.query(`SELECT setval(pg_get_serial_sequence('users', 'id'), ${count})`)
      await c.query('ANALYZE users')
    })
    log(`postgres: ${count} users in ${((performance.now() - t) / 1000).toFixed(1)} s`)
    results.push(['PostgreSQL', await measure(cluster.url)])
  }
  const busy = await cpuBusyShare(1000)
  const lines = [
    `| q | matches | ${results.map(([name]) => `${name} median / slowest (ms)`).join(' | ')} |`,
    `|---|---:|${results.map(() => '---:|').join('')}`,
    ...QUERIES.map((q, i) => `| \`${q}\` | ${(results[0]?.[1][i]?.matches ?? 0).toLocaleString('en')} | ${results.map(([, r]) => `${r[i].median.toFixed(1)} / ${r[i].max.toFixed(1)}`).join(' | ')} |`),
  ]
  process.stdout.write(`\n${count.toLocaleString('en')} users; first page (25) of each search, ${REPEAT} times; CPU busy after: ${(busy * 100).toFixed(0)} % of all cores\n\n${lines.join('\n')}\n`)
} finally {
  await cluster?.stop()
  rmSync(dir, { recursive: true, force: true })
}

function migrate(location) {
  const r = spawnSync(command[0], [...command[1], 'migrate'], { env: benchEnv(location), cwd: ROOT, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`migrate failed: ${r.stderr}`)
}

async function measure(location) {
  const server = await startServer('replenish', command[0], [...command[1], 'serve'], { cwd: ROOT, env: benchEnv(location, { REPLENISH_ADMIN_TOKEN: TOKEN }) })
  try {
    const out = []
    for (const q of QUERIES) {
      const times = []
      let page
      for (let i = 0; i < REPEAT; i++) {
        const t = performance.now()
        page = await getJson(`${server.url}/admin/api/v1/users?q=${encodeURIComponent(q)}`)
        times.push(performance.now() - t)
      }
      times.sort((a, b) => a - b)
      out.push({ q, matches: matchesOf(q), shown: page.users.length, median: times[Math.floor(REPEAT / 2)], max: times[REPEAT - 1] })
      log(JSON.stringify(out[out.length - 1]))
    }
    return out
  } finally {
    await server.stop()
  }
}

/** How many of the seeded users a prefix matches (computed, not asked of the database being measured). */
function matchesOf(q) {
  const p = q.toLowerCase()
  let n = 0
  for (let i = 1; i <= count; i++) {
    const d = i % 100 < 30 ? 'gmail.com' : i % 100 < 40 ? 'yahoo.com' : i % 100 < 45 ? 'outlook.com' : `mail${i % 5000}.example`
    if (`user${i}@${d}`.startsWith(p) || `cus_${i}`.startsWith(p) || d.startsWith(p)) n++
  }
  return n
}

function getJson(url) {
  return new Promise((resolvePromise, reject) => {
    http.get(url, { headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (c) => (body += c))
      res.on('end', () => (res.statusCode === 200 ? resolvePromise(JSON.parse(body)) : reject(new Error(`${url}: ${res.statusCode} ${body}`))))
    }).on('error', reject)
  })
}
