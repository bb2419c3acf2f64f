/**
 * Issue 20 (C15) from outside: the built executable, with the PostgreSQL driver bundled into it,
 * on a throwaway PostgreSQL. `copy` moves a SQLite database made by the same binary over, ids
 * kept; two `serve` instances on the copy answer the same body for the same subscription, a change
 * made through one is what the other answers next, and the URL's password appears nowhere in
 * what they print. No node on PATH: the binary needs nothing beside it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { request } from '../test/helpers/server.ts'
import { startPostgres, startPostgresCluster } from '../test/helpers/postgres.ts'
import { spawnProcess, tempDir, type Child } from '../test/cli/harness.ts'

const BINARY = fileURLToPath(new URL('../dist/replenish', import.meta.url))
if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`)

const TOKEN = 'binary-postgres-admin-token-0123456789'
const PASSWORD = 'sekret-pw-4711'

function env(t: TestContext, db: string): Record<string, string> {
  const empty = join(tempDir(t), 'empty-bin')
  mkdirSync(empty, { recursive: true })
  return { PATH: empty, REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: TOKEN, REPLENISH_PROCESS_EVERY: '0', REPLENISH_RATE_LIMIT: '0' }
}

async function serve(t: TestContext, cwd: string, vars: Record<string, string>): Promise<{ child: Child; url: string }> {
  const child = spawnProcess(t, BINARY, ['serve', '--port', '0'], { cwd, env: vars })
  const url = (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  return { child, url }
}

test('dist/replenish: copy a SQLite database to PostgreSQL, then two instances on it answer alike; the password is never printed', async (t) => {
  const pg = await startPostgres(t)
  await pg.psql('postgres', ['-c', `CREATE ROLE shop LOGIN PASSWORD '${PASSWORD}'`, '-c', 'CREATE DATABASE shop OWNER shop'])
  const url = `postgres://shop:${PASSWORD}@127.0.0.1:${pg.port}/shop`
  const dir = tempDir(t)
  const file = join(dir, 'shop.db')

  // A SQLite database with a customer, a key and a subscription, made by the binary itself.
  const first = await serve(t, dir, env(t, file))
  const admin = { key: TOKEN }
  const user = await request(first.url, 'POST', '/admin/api/v1/users', { ...admin, json: { user: { email: 'ada@example.com' } } })
  const key = await request(first.url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, admin)
  const made = await request(first.url, 'POST', '/api/v1/subscriptions', { key: key.body.key, json: { interval_length: 2, interval_units: 'week' } })
  assert.equal(made.status, 200, made.text)
  const before = await request(first.url, 'GET', `/api/v1/subscriptions/${made.body.id}`, { key: key.body.key })
  first.child.kill('SIGTERM')
  await first.child.exited

  const copy = spawnProcess(t, BINARY, ['copy', '--from', file, '--to', url], { cwd: dir, env: env(t, file) })
  assert.equal((await copy.exited).code, 0, copy.stderr())
  assert.match(copy.stdout(), /subscriptions\s+1\s+1/)

  const a = await serve(t, dir, env(t, url))
  const b = await serve(t, dir, env(t, url))
  const path = `/api/v1/subscriptions/${made.body.id}`
  const fromA = await request(a.url, 'GET', path, { key: key.body.key })
  assert.equal(fromA.text, before.text, 'the copy answers byte for byte what SQLite answered')
  const skipped = await request(a.url, 'POST', `${path}/skip`, { key: key.body.key })
  assert.equal(skipped.status, 200)
  const fromB = await request(b.url, 'GET', path, { key: key.body.key })
  assert.equal(fromB.text, skipped.text, 'the other instance answers the change at once')
  const next = await request(b.url, 'POST', '/api/v1/subscriptions', { key: key.body.key, json: { interval_length: 1 } })
  assert.equal(next.body.id, made.body.id + 1, 'ids go on after the copied ones')
  const ready = await request(b.url, 'GET', '/readyz')
  assert.equal(ready.status, 200)
  const metrics = await request(b.url, 'GET', '/metrics', admin)
  assert.match(metrics.text, /^replenish_db_pool_max 10$/m)

  for (const s of [a, b]) s.child.kill('SIGTERM')
  await Promise.all([a.child.exited, b.child.exited])
  const printed = [copy.stdout(), copy.stderr(), a.child.stdout(), a.child.stderr(), b.child.stdout(), b.child.stderr()].join('\n')
  assert.ok(!printed.includes(PASSWORD), 'the password is never printed')
})

test('dist/replenish: a PostgreSQL it cannot use is one line with its status, no stack (issue 25 items 4, 5)', async (t) => {
  // A server that asks every connection for its password (SCRAM).
  const pg = await startPostgresCluster({ password: PASSWORD })
  t.after(() => pg.stop())
  await pg.psql('postgres', ['-c', `CREATE ROLE shop LOGIN PASSWORD '${PASSWORD}'`, '-c', 'CREATE DATABASE shop OWNER shop', '-c', 'CREATE DATABASE lax OWNER shop', '-c', 'ALTER DATABASE lax SET synchronous_commit = off'])
  const dir = tempDir(t)
  const base = `127.0.0.1:${pg.port}`
  const migrate = async (db: string): Promise<{ code: number | null; stderr: string }> => {
    const child = spawnProcess(t, BINARY, ['migrate'], { cwd: dir, env: env(t, db) })
    const { code } = await child.exited
    return { code, stderr: child.stderr() }
  }
  // The class that refuses commits that are not durable is renamed by the minifier: known by class, not by name.
  const lax = await migrate(`postgres://shop:${PASSWORD}@${base}/lax`)
  assert.equal(lax.code, 3)
  assert.match(lax.stderr, /^replenish: cannot use the database postgres:\/\/shop:\*\*\*\*\*@127\.0\.0\.1:\d+\/lax: synchronous_commit is off on the server, .*\n$/)
  const unknownMode = await migrate(`postgres://shop:${PASSWORD}@${base}/shop?sslmode=always`)
  assert.deepEqual(unknownMode, { code: 2, stderr: 'replenish: the URL\'s sslmode "always" is not one of libpq\'s sslmodes: disable, allow, prefer, require, verify-ca, verify-full\n' })
  const noPassword = await migrate(`postgres://shop@${base}/shop`)
  assert.deepEqual(noPassword, { code: 3, stderr: `replenish: cannot use the database postgres://shop@${base}/shop: the server asks for a password and none was given: set PGPASSWORD (or put it in the URL, postgres://user:password@host/db)\n` })
  const noTls = await migrate(`postgres://shop:${PASSWORD}@${base}/shop?sslmode=require`)
  assert.equal(noTls.code, 3)
  assert.match(noTls.stderr, /^replenish: cannot use the database \S+: the server does not offer TLS, and sslmode=require requires it: .*\n$/)
  for (const run of [lax, unknownMode, noPassword, noTls]) assert.ok(!run.stderr.includes(PASSWORD) && !/\n\s+at /.test(run.stderr), run.stderr)
  assert.equal((await migrate(`postgres://shop:${PASSWORD}@${base}/shop?sslmode=prefer`)).code, 0)
})
