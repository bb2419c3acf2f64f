#!/usr/bin/env node
/**
 * `node bench/import.mjs` (Node 24: `npx node bench/import.mjs`): one `replenish import` of a
 * generated file of 100,000 subscriptions (docs/import.md, issue 18), into a fresh database.
 *
 * The file is what the export SQL writes for a shop of that size: 20,000 customers with an API
 * key and a card each, two catalog items, and 100,000 subscriptions (five per customer), each
 * with two line items, a shipping address, payment, past dates and counters. The run is the real
 * CLI (`dist/replenish` when it is built and newer than every source file, else the sources
 * through tsx), timed from spawn to exit, with the child's peak resident set size. Afterwards
 * the database is checked: every row is there. The last line is exactly:
 *
 *   imported <N> subscriptions (<L> lines, <MB> MB) in <S> s, peak RSS <M> MB
 *
 *   npx node bench/import.mjs                   # 100,000
 *   npx node bench/import.mjs --count 10000     # while developing
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { runTimed } from './lib/process.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '100000' },
    'keep-db': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npx node bench/import.mjs [--count N] [--keep-db]\n')
  process.exit(0)
}
const count = Number(opts.count)
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: expected a positive whole number')

const dir = mkdtempSync(join(tmpdir(), 'replenish-bench-import-'))
const db = join(dir, 'bench.db')
const file = join(dir, 'shop.jsonl')
const binary = join(ROOT, 'dist', 'replenish')
const [command, prefix] = builtAndFresh(binary) ? [binary, []] : [process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')]]
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REPLENISH_')))
env.REPLENISH_DB = db
const log = (line) => process.stderr.write(line + '\n')
log(`running ${command === binary ? binary : 'src/main.ts through tsx'}`)

try {
  const lines = generate(count)
  writeFileSync(file, lines.join('\n') + '\n')
  const mb = statSync(file).size / 1048576
  log(`wrote ${lines.length} lines (${mb.toFixed(1)} MB) to ${file}`)
  // `import` works on a database that is there (issue 25): make it first.
  const migrated = spawnSync(command, [...prefix, 'migrate'], { env, cwd: ROOT, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  const t = performance.now()
  const { code, peakKb, stdout } = await runTimed(command, [...prefix, 'import', file], { env, cwd: ROOT, rssFile: join(dir, 'rss.txt') })
  const seconds = (performance.now() - t) / 1000
  if (code !== 0) throw new Error(`replenish import exited with ${code}`)
  log(stdout.trim())
  check(db, count)
  process.stdout.write(`imported ${count} subscriptions (${lines.length} lines, ${mb.toFixed(1)} MB) in ${seconds.toFixed(1)} s, peak RSS ${Math.round(peakKb / 1024)} MB\n`)
} finally {
  if (!opts['keep-db']) rmSync(dir, { recursive: true, force: true })
}

/** The file: customers (key, card) first, then the catalog, then five subscriptions per customer. */
function generate(n) {
  const users = Math.ceil(n / 5)
  const out = []
  const pad = (v) => String(v).padStart(2, '0')
  const at = (year, i) => `${year}-${pad((i % 12) + 1)}-${pad((i % 28) + 1)}T${pad(i % 24)}:${pad(i % 60)}:00.000Z`
  for (let u = 1; u <= users; u++) out.push(JSON.stringify({ type: 'user', id: u, email: `customer${u}@example.com`, external_id: String(u), created_at: at(2020, u), updated_at: at(2024, u) }))
  for (let u = 1; u <= users; u++) out.push(JSON.stringify({ type: 'api_key', user_id: u, key: `${String(u).padStart(8, '0')}${'0123456789abcdef'.repeat(2)}` }))
  out.push(JSON.stringify({ type: 'payment_method', id: 1, name: 'Credit Card', active: true, created_at: at(2019, 1), updated_at: at(2019, 1) }))
  for (let u = 1; u <= users; u++) {
    out.push(JSON.stringify({ type: 'payment_source', id: u, user_id: u, payment_method_id: 1, kind: 'credit_card', brand: 'visa', last_digits: '4242', month: (u % 12) + 1, year: 2030, gateway_reference: `cus_${u}/pm_${u}`, created_at: at(2021, u), updated_at: at(2021, u) }))
  }
  out.push(JSON.stringify({ type: 'subscribable', id: 1, sku: 'COFFEE-1KG', name: 'Coffee beans, 1 kg', created_at: at(2019, 2), updated_at: at(2019, 2) }))
  out.push(JSON.stringify({ type: 'subscribable', id: 2, sku: 'TEA-250G', name: 'Green tea, 250 g', created_at: at(2019, 3), updated_at: at(2019, 3) }))
  for (let i = 1; i <= n; i++) {
    const u = ((i - 1) % users) + 1
    out.push(JSON.stringify({
      type: 'subscription', id: i, user_id: u, state: 'active', paused: false, interval_length: 1, interval_units: 'month',
      actionable_date: `2027-${pad((i % 12) + 1)}-${pad((i % 28) + 1)}`, end_date: null, skip_count: i % 3, successive_skip_count: i % 2,
      payment_method_id: 1, payment_source_id: u, currency: 'USD', processing_state: 'success',
      shipping_address: { firstname: `First${u}`, lastname: `Last${u}`, company: null, address1: `${i} Main St`, address2: null, city: 'Springfield', zipcode: '62701', state_name: 'Illinois', country_iso: 'US', phone: '217-555-0100' },
      billing_address: null,
      line_items: [
        { id: 2 * i - 1, subscribable_id: 1, quantity: 2, created_at: at(2023, i), updated_at: at(2023, i) },
        { id: 2 * i, subscribable_id: 2, quantity: 1, created_at: at(2023, i), updated_at: at(2023, i) },
      ],
      created_at: at(2023, i), updated_at: at(2025, i),
    }))
  }
  return out
}

function check(file, n) {
  const conn = new DatabaseSync(file, { readOnly: true })
  try {
    const r = conn.prepare('SELECT (SELECT count(*) FROM subscriptions) AS subs, (SELECT count(*) FROM line_items) AS items, (SELECT count(*) FROM api_keys) AS keys').get()
    if (r.subs !== n || r.items !== 2 * n || r.keys !== Math.ceil(n / 5)) throw new Error(`expected ${n} subscriptions, ${2 * n} line items; found ${JSON.stringify(r)}`)
  } finally {
    conn.close()
  }
}


function builtAndFresh(path) {
  if (!existsSync(path)) return false
  const built = statSync(path).mtimeMs
  const newest = (d) => Math.max(0, ...readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(d, e.name)) : statSync(join(d, e.name)).mtimeMs)))
  return built > newest(join(ROOT, 'src'))
}
