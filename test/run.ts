/**
 * `npm test`: the whole suite on SQLite (with coverage), then again on PostgreSQL when one is
 * reachable (C15): the server REPLENISH_TEST_POSTGRES names (a postgres:// URL of a database the
 * tests may make schemas in), or else a throwaway cluster of the installed PostgreSQL binaries
 * (Debian's postgresql package; .ci/run installs it). With neither, it says so and runs SQLite only.
 *
 * On PostgreSQL it runs every file except those that test a SQLite mechanism (named
 * `*.sqlite.test.ts`, or they call `sqliteOf`, open a SQLite store by name, or use node:sqlite):
 * each test gets a fresh schema. Files named `*.pg.test.ts` are PostgreSQL's own (row locks,
 * several instances) and run there only.
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { postgresBinDir, startPostgresCluster } from './helpers/postgres.ts'

const root = join(import.meta.dirname, '..')
/**
 * No test may hold CI: one that runs past 3 minutes (its clean-up included) fails, and a file whose
 * tests have all ended exits even if something it started still holds the event loop. A PostgreSQL
 * file once hung for 84 minutes in CI after a failed assertion left a dispatcher running.
 */
const NODE_TEST = ['--import', 'tsx', '--test', '--test-reporter=spec', '--test-timeout=180000', '--test-force-exit']
const SQLITE_ONLY = /\bsqliteOf\(|\bopenSqliteStore\b|from 'node:sqlite'|\bSqliteStore\b/

function testFiles(dir: string): string[] {
  const out: string[] = []
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) {
      if (entry.name !== 'browser' && entry.name !== 'helpers' && entry.name !== 'fixtures') out.push(...testFiles(path))
    } else if (entry.name.endsWith('.test.ts')) {
      out.push(relative(root, path))
    }
  }
  return out.sort()
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: root, env, stdio: 'inherit' })
    child.once('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)))
  })
}

const all = testFiles(join(root, 'test'))
const onPostgresOnly = (f: string): boolean => f.endsWith('.pg.test.ts')
const sqliteOnly = (f: string): boolean => f.endsWith('.sqlite.test.ts') || SQLITE_ONLY.test(readFileSync(join(root, f), 'utf8'))

const bin = (name: string): string => join(root, 'node_modules', '.bin', name)
// Three files at a time (2 cores): a file spends much of its time starting (tsx) and waiting on
// timers and sockets. 947 tests in 193 s one at a time, 103–120 s two, 100 s three (2026-11-27).
const sqliteStatus = await run(bin('c8'), ['--reporter=text-summary', process.execPath, ...NODE_TEST, '--test-concurrency=3', ...all.filter((f) => !onPostgresOnly(f))])

let url = process.env['REPLENISH_TEST_POSTGRES']
let stop = async (): Promise<void> => {}
if (!url) {
  let installed = true
  try {
    postgresBinDir()
  } catch {
    installed = false
  }
  if (installed) {
    const cluster = await startPostgresCluster({ maxConnections: 300 })
    url = cluster.url
    stop = cluster.stop
  }
}
if (!url) {
  console.log('\nPostgreSQL: none reachable (no REPLENISH_TEST_POSTGRES, no PostgreSQL installed), so the suite ran on SQLite only.')
  process.exitCode = sqliteStatus
} else {
  const files = all.filter((f) => onPostgresOnly(f) || !sqliteOnly(f))
  console.log(`\nPostgreSQL: the suite again, ${files.length} of ${all.length} files (the others test SQLite's own mechanisms)`)
  let pgStatus = 1
  try {
    // Three files at a time: each has its own schemas, and most of a PostgreSQL test's time is
    // waiting on the server (measured: 677 tests in 70–71 s two at a time, against 120–158 s one
    // at a time; 862 tests in 137–150 s three at a time, 146–159 s two at a time).
    pgStatus = await run(process.execPath, [...NODE_TEST, '--test-concurrency=3', ...files], { ...process.env, REPLENISH_TEST_DB: url })
  } finally {
    await stop()
  }
  process.exitCode = sqliteStatus || pgStatus
}
