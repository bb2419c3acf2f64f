#!/usr/bin/env node
/**
 * `npm run bench:process`: one `replenish process` run over 1,000,000 due subscriptions (C9, issue 5).
 *
 * Seeds a fresh, migrated database straight through node:sqlite (one transaction of INSERT …
 * SELECT over a recursive counter: seconds, where the API would take an hour), each
 * subscription monthly with two line items and due on some day of the month before the run's
 * date, then times one run of the real CLI (`dist/replenish` when built, else the sources
 * through tsx) and measures the child's peak resident set size (`/usr/bin/time`, else
 * /proc/<pid>/status VmHWM). Checks afterwards that every subscription got exactly one
 * installment. The last line is exactly:
 *
 *   processed <N> subscriptions in <S> s, peak RSS <M> MB
 *
 *   npm run bench:process                      # 1,000,000
 *   npm run bench:process -- --count 100000    # while developing
 *   npm run bench:process -- --priced          # the catalog priced (C16): every snapshot line and
 *                                              # installment total computed and formatted
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { DatabaseSync } from 'node:sqlite'
import { evictFromPageCache, runTimed } from './lib/process.mjs'
import { replenishCommand } from './lib/replenish-command.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const AS_OF = '2026-03-01'

const { values: opts } = parseArgs({
  options: {
    count: { type: 'string', default: '1000000' },
    dir: { type: 'string' },
    'keep-db': { type: 'boolean', default: false },
    'seed-only': { type: 'boolean', default: false },
    priced: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npm run bench:process [-- --count N] [--dir DIR] [--keep-db] [--seed-only] [--priced]\n')
  process.exit(0)
}
const count = Number(opts.count)
if (!Number.isSafeInteger(count) || count < 1) throw new Error('--count: expected a positive whole number')

const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'replenish-bench-process-'))
const db = join(dir, 'bench.db')
const { command, prefix, label } = replenishCommand(ROOT)
const env = { ...process.env, REPLENISH_DB: db, REPLENISH_TIME_ZONE: 'UTC' }
delete env.REPLENISH_TODAY

const log = (line) => process.stderr.write(line + '\n')
log(`running ${label}`)

try {
  const migrated = spawnSync(command, [...prefix, 'migrate'], { env, cwd: ROOT, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  let t = performance.now()
  seed(db, count, opts.priced)
  log(`seeded ${count} due subscriptions with 2 line items each${opts.priced ? ', priced' : ''} in ${((performance.now() - t) / 1000).toFixed(1)} s (${db})`)
  if (opts['seed-only']) process.exit(0)

  // As bench/run.mjs does: a binary just built sits in the page cache and maps ~20 MB more of
  // its text than one started from disk, so the peak RSS would depend on when the build ran.
  if (prefix.length === 0) evictFromPageCache(command)
  t = performance.now()
  const { code, peakKb, stdout } = await runTimed(command, [...prefix, 'process', '--as-of', AS_OF], { env, cwd: ROOT, rssFile: join(dir, 'rss.txt') })
  const seconds = (performance.now() - t) / 1000
  if (code !== 0) throw new Error(`replenish process exited with ${code}`)
  log(stdout.trim())
  const installments = check(db, count, opts.priced)
  log(`checked: ${installments} installments, one per subscription`)
  const processed = Number(/^processed (\d+) subscriptions/m.exec(stdout)?.[1])
  if (processed !== count) throw new Error(`expected the run to process ${count} subscriptions, it says ${processed}`)
  process.stdout.write(`processed ${processed} subscriptions in ${seconds.toFixed(1)} s, peak RSS ${Math.round(peakKb / 1024)} MB\n`)
} finally {
  if (!opts['keep-db'] && !opts.dir) rmSync(dir, { recursive: true, force: true })
}

/** Users, two catalog items (priced in USD, one with a discount, when `priced`), `n` monthly subscriptions due on days 1–28 of February, two line items each. */
function seed(file, n, priced) {
  const conn = new DatabaseSync(file)
  const now = new Date().toISOString()
  // Nothing to protect while seeding, and a cache big enough that the one transaction never spills.
  conn.exec('PRAGMA synchronous = OFF')
  conn.exec('PRAGMA cache_size = -1500000')
  conn.exec('BEGIN')
  conn.exec(`
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 1000)
    INSERT INTO users (id, email, created_at, updated_at) SELECT i, 'bench' || i || '@example.com', '${now}', '${now}' FROM k;
    INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES
      (1, 'COFFEE-1KG', 'Coffee beans, 1 kg', 1, '${now}', '${now}'),
      (2, 'TEA-250G', 'Green tea, 250 g', 1, '${now}', '${now}');
    ${priced ? "UPDATE subscribables SET discount_bp = 1000, discount_percent = '10' WHERE id = 1; INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit) VALUES (1, 'USD', 2400, '24.00', 100), (1, 'EUR', 2200, '22.00', 100), (2, 'USD', 850, '8.50', 100);" : ''}
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day,
        currency, created_on, created_at, updated_at)
      SELECT i, (i % 1000) + 1, 'active', 0, 1, 'month', printf('2026-02-%02d', (i % 28) + 1), (i % 28) + 1,
        'USD', '2026-01-01', '${now}', '${now}' FROM k;
    -- A subscription's line items sit side by side, as when a client creates them together.
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT s.id, k.item, k.quantity, '${now}', '${now}' FROM subscriptions s, (SELECT 1 AS item, 2 AS quantity UNION ALL SELECT 2, 1) k
      ORDER BY s.id, k.item;
  `)
  conn.exec('COMMIT')
  conn.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  conn.close()
}


function check(file, n, priced) {
  const conn = new DatabaseSync(file, { readOnly: true })
  try {
    const r = conn.prepare('SELECT count(*) AS total, count(DISTINCT subscription_id) AS subs FROM installments').get()
    if (r.total !== n || r.subs !== n) throw new Error(`expected ${n} installments, one per subscription; found ${r.total} for ${r.subs}`)
    // 2 × 24.00 less 10 % and 1 × 8.50: every installment froze 51.70 (C16).
    const wrong = conn.prepare("SELECT count(*) AS n FROM installments WHERE total IS NOT ?").get(priced ? '51.70' : null)
    if (wrong.n !== 0) throw new Error(`${wrong.n} installments have another total than ${priced ? '51.70' : 'none'}`)
    const moved = conn.prepare("SELECT count(*) AS n FROM subscriptions WHERE actionable_date <= ?").get(AS_OF)
    if (moved.n !== 0) throw new Error(`${moved.n} subscriptions are still due`)
    return r.total
  } finally {
    conn.close()
  }
}
