#!/usr/bin/env node
/**
 * `node bench/copy.mjs --to postgres://…` (Node 24: `npx node bench/copy.mjs …`): one
 * `replenish copy` of a SQLite database of 1,000,000 subscriptions into PostgreSQL (C15).
 *
 * The SQLite file is seeded straight through node:sqlite as the other benches seed theirs
 * (bench/lib/seed.mjs's 1,000 customers with a key each and 10,000 subscriptions of three line
 * items, then bench/lib/seed-due.mjs's due subscriptions of two line items up to the count). The
 * target is a fresh schema of the database the URL names (REPLENISH_COPY_TO when --to is not
 * given), dropped afterwards. The run is the real CLI (`dist/replenish` when it is built and newer
 * than every source file, else the sources through tsx), timed from spawn to exit, with the
 * child's peak resident set size; the copy itself checks every table's count. The last line is
 * exactly:
 *
 *   copied <N> subscriptions (<R> rows) in <S> s, peak RSS <M> MB
 *
 *   npx node bench/copy.mjs --to postgres://postgres@127.0.0.1:5432/copybench
 *   npx node bench/copy.mjs --to … --count 100000     # while developing
 */
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { runTimed } from './lib/process.mjs'
import { seed, SUBSCRIPTIONS_PER_USER, USERS } from './lib/seed.mjs'
import { seedDue } from './lib/seed-due.mjs'
import { freshSchema, maskedUrl } from './lib/postgres.mjs'

const ROOT = resolve(fileURLToPath(new URL('..', import.meta.url)))
const TODAY = '2026-03-01'

const { values: opts } = parseArgs({
  options: {
    to: { type: 'string' },
    count: { type: 'string', default: '1000000' },
    'keep-db': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
})
if (opts.help) {
  process.stdout.write('usage: npx node bench/copy.mjs --to postgres://… [--count N] [--keep-db]\n')
  process.exit(0)
}
const base = opts.to ?? process.env.REPLENISH_COPY_TO
if (!base || !/^postgres(ql)?:\/\//.test(base)) throw new Error('--to (or REPLENISH_COPY_TO): the postgres:// URL of a database the bench may make a schema in')
const count = Number(opts.count)
const seeded = USERS * SUBSCRIPTIONS_PER_USER
if (!Number.isSafeInteger(count) || count < seeded) throw new Error(`--count: expected a whole number of at least ${seeded}`)

const dir = mkdtempSync(join(tmpdir(), 'replenish-bench-copy-'))
const db = join(dir, 'bench.db')
const binary = join(ROOT, 'dist', 'replenish')
const [command, prefix] = builtAndFresh(binary) ? [binary, []] : [process.execPath, ['--import', 'tsx', join(ROOT, 'src', 'main.ts')]]
const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('REPLENISH_')))
const log = (line) => process.stderr.write(line + '\n')
log(`running ${command === binary ? binary : 'src/main.ts through tsx'}`)

const target = await freshSchema(base)
try {
  const migrated = spawnSync(command, [...prefix, 'migrate'], { env: { ...env, REPLENISH_DB: db }, cwd: ROOT, encoding: 'utf8' })
  if (migrated.status !== 0) throw new Error(`migrate failed: ${migrated.stderr}`)
  let t = performance.now()
  seed(db, TODAY)
  seedDue(db, count - seeded, TODAY)
  log(`seeded ${count} subscriptions in ${((performance.now() - t) / 1000).toFixed(1)} s (${db}, ${(statSync(db).size / 1048576).toFixed(0)} MB)`)

  t = performance.now()
  const { code, peakKb, stdout } = await runTimed(command, [...prefix, 'copy', '--from', db, '--to', target.url], { env, cwd: ROOT, rssFile: join(dir, 'rss.txt') })
  const seconds = (performance.now() - t) / 1000
  if (code !== 0) throw new Error(`replenish copy exited with ${code}`)
  log(stdout.trim())
  const copied = Number(/^subscriptions\s+(\d+)\s+(\d+)$/m.exec(stdout)?.[2])
  if (copied !== count) throw new Error(`expected ${count} subscriptions in PostgreSQL, the copy counted ${copied}`)
  const rows = Number(/^copied (\d+) rows/m.exec(stdout)?.[1])
  log(`into ${maskedUrl(target.url)}`)
  process.stdout.write(`copied ${count} subscriptions (${rows} rows) in ${seconds.toFixed(1)} s, peak RSS ${Math.round(peakKb / 1024)} MB\n`)
} finally {
  await target.drop()
  if (!opts['keep-db']) rmSync(dir, { recursive: true, force: true })
}

function builtAndFresh(file) {
  if (!existsSync(file)) return false
  const built = statSync(file).mtimeMs
  const newest = (d) => Math.max(0, ...readdirSync(d, { withFileTypes: true }).map((e) => (e.isDirectory() ? newest(join(d, e.name)) : statSync(join(d, e.name)).mtimeMs)))
  return built > newest(join(ROOT, 'src'))
}
