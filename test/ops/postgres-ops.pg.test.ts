/**
 * Issue 20 (C15) operations on PostgreSQL: /metrics shows the pool, /readyz fails when no pooled
 * connection answers, the CLI's exit statuses and messages for a newer schema, a wrong password,
 * an unreachable server and commits that are not durable, and the password never printed.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { ON_POSTGRES, TEST_BACKEND, openTestStore, postgresOf } from '../helpers/store.ts'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts'
import { runCli, testDb } from '../cli/harness.ts'
import { freePort } from '../helpers/postgres.ts'
import { POSTGRES_SCHEMA_VERSION } from '../../src/store/postgres/migrations.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

const SECRET = 'not-the-password-0815'
/** The test server's URL with a password in it (the throwaway cluster trusts every password). */
const withPassword = (url: string, password = SECRET): string => {
  const u = new URL(url)
  u.password = password
  return u.toString()
}

test('/metrics shows the pool; /readyz is 503 naming the pool while none of its connections answers', async (t) => {
  const server = await startTestServer(t)
  const metrics = await server.request('GET', '/metrics', { key: ADMIN_TOKEN })
  assert.equal(metrics.status, 200)
  for (const line of [/^replenish_db_pool_max \d+$/m, /^replenish_db_pool_waiting 0$/m, /^replenish_db_pool_connections\{state="idle"\} \d+$/m, /^replenish_db_pool_connections\{state="in_use"\} \d+$/m, /^replenish_database_size_bytes \d+$/m]) {
    assert.match(metrics.text, line)
  }
  assert.equal((await server.request('GET', '/readyz')).status, 200)

  const { store } = await openTestStore(t)
  const { pool } = postgresOf(store)
  const held = await Promise.all(Array.from({ length: pool.options.max ?? 4 }, () => pool.connect()))
  try {
    const problem = await store.problem()
    assert.match(problem ?? '', /^no connection of the PostgreSQL pool answered within 2 s \(\d+ of \d+ in use, 1 waiting\)$/)
  } finally {
    for (const c of held) c.release()
  }
  assert.equal(await store.problem(), undefined)
})

test('a database whose schema is newer than the binary: exit 3, saying so', async (t) => {
  const db = await testDb(t)
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
  const { store } = await openTestStore(t, {}, { location: db, remove: () => {} })
  await postgresOf(store).pool.query("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'from the future', '2030-01-01T00:00:00.000Z')")
  await store.close()
  const run = await runCli(['migrate'], { REPLENISH_DB: db })
  assert.equal(run.status, 3)
  assert.ok(run.stderr.join('\n').includes(`schema is version 99, newer than this replenish understands (version ${POSTGRES_SCHEMA_VERSION})`), run.stderr.join('\n'))
})

test('a database that does not exist is exit 3, an unreachable server exit 1; neither prints the password', async () => {
  // The throwaway cluster trusts every password, so a refused login (28P01) cannot be made here; a
  // missing database (3D000) is the same kind of failure: permanent, restarting will not help.
  const missing = new URL(withPassword(TEST_BACKEND))
  missing.pathname = '/no_such_database'
  const refused = await runCli(['migrate'], { REPLENISH_DB: missing.toString() })
  assert.equal(refused.status, 3)
  assert.match(refused.stderr.join('\n'), /cannot use the database postgres:\/\/postgres:\*\*\*\*\*@127\.0\.0\.1:\d+\/no_such_database: PostgreSQL: database "no_such_database" does not exist/)

  const port = await freePort()
  const unreachable = await runCli(['migrate'], { REPLENISH_DB: `postgres://shop:${SECRET}@127.0.0.1:${port}/shop` })
  assert.equal(unreachable.status, 1)
  assert.match(unreachable.stderr.join('\n'), /postgres:\/\/shop:\*\*\*\*\*@127\.0\.0\.1:\d+\/shop/)
  for (const run of [refused, unreachable]) assert.ok(![...run.stdout, ...run.stderr].join('\n').includes(SECRET), 'the password is never printed')
})

test('commits that are not durable (synchronous_commit=off) are refused under REPLENISH_SYNCHRONOUS=FULL, accepted under NORMAL', async (t) => {
  const db = await testDb(t)
  const u = new URL(db)
  u.searchParams.set('options', `${u.searchParams.get('options') ?? ''} -c synchronous_commit=off`.trim())
  const full = await runCli(['migrate'], { REPLENISH_DB: u.toString() })
  assert.equal(full.status, 3)
  assert.match(full.stderr.join('\n'), /synchronous_commit is off on the server/)
  const normal = await runCli(['migrate'], { REPLENISH_DB: u.toString(), REPLENISH_SYNCHRONOUS: 'NORMAL' })
  assert.equal(normal.status, 0, normal.stderr.join('\n'))
})

test('postgresql:// selects PostgreSQL as postgres:// does (C15)', async (t) => {
  const db = await testDb(t)
  const run = await runCli(['migrate'], { REPLENISH_DB: db.replace(/^postgres:/, 'postgresql:') })
  assert.equal(run.status, 0, run.stderr.join('\n'))
  assert.match(run.stdout.join('\n'), new RegExp(String.raw`^database postgresql://\S+ is at schema version ${POSTGRES_SCHEMA_VERSION}$`, 'm'))
  const { store } = await openTestStore(t, {}, { location: db, remove: () => {} })
  const { rows } = await postgresOf(store).pool.query<{ n: number }>('SELECT max(version) AS n FROM schema_migrations')
  assert.equal(rows[0]?.n, POSTGRES_SCHEMA_VERSION, 'the migration ran in PostgreSQL')
})

test('two instances answer alike: a key revoked through one fails on the other from its next request (no key cache)', async (t) => {
  const [a, b] = await twoInstances(t)
  const user = await a.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'two@example.com' } } })
  const made = await a.request('POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN })
  const key = made.body.key as string
  assert.equal((await b.request('GET', '/api/v1/subscriptions', { key })).status, 200, 'b has seen the key')
  assert.equal((await a.request('DELETE', `/admin/api/v1/api_keys/${made.body.id}`, { key: ADMIN_TOKEN })).status, 200)
  const after = await b.request('GET', '/api/v1/subscriptions', { key })
  assert.equal(after.status, 401)
  assert.deepEqual(after.body, { error: 'Invalid API key specified.' })
})

/** Two `serve` instances on one database. */
async function twoInstances(t: TestContext): Promise<[TestServer, TestServer]> {
  const a = await startTestServer(t)
  return [a, await startTestServer(t, { REPLENISH_DB: a.config.db })]
}

/** A user with a key and a subscription, made through `a`; the key then read through `b`'s cached path. */
async function cachedOnB(a: TestServer, b: TestServer, email: string): Promise<{ userId: number; keyId: number; key: string; path: string }> {
  const user = await a.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email } } })
  const made = await a.request('POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN })
  const key = made.body.key as string
  const sub = await a.request('POST', '/api/v1/subscriptions', { key, json: { subscription: { interval_length: 1, interval_units: 'month' } } })
  assert.equal(sub.status, 200, sub.text)
  const path = `/api/v1/subscriptions/${sub.body.id}`
  // Twice: the first looks the key up and caches it with the credentials' generation, the second
  // answers from that cache after checking the generation in the read's own statement.
  for (let i = 0; i < 2; i++) assert.equal((await b.request('GET', path, { key })).status, 200)
  return { userId: user.body.id, keyId: made.body.id, key, path }
}

test('issue 30: a key cached by an instance fails there on the next GET once another instance revokes it', async (t) => {
  const [a, b] = await twoInstances(t)
  const revoked = await cachedOnB(a, b, 'cached@example.com')
  const other = await cachedOnB(a, b, 'other@example.com')
  assert.equal((await a.request('DELETE', `/admin/api/v1/api_keys/${revoked.keyId}`, { key: ADMIN_TOKEN })).status, 200)
  for (const path of [revoked.path, '/api/v1/subscriptions/999999', '/api/v1/subscriptions/not-an-id']) {
    const after = await b.request('GET', path, { key: revoked.key })
    assert.equal(after.status, 401, path)
    assert.deepEqual(after.body, { error: 'Invalid API key specified.' })
  }
  const write = await b.request('PATCH', revoked.path, { key: revoked.key, json: { subscription: { interval_length: 2 } } })
  assert.equal(write.status, 401, 'a write through b with the revoked key')
  // Another customer's key, cached before the revocation moved the generation, still works: looked up again.
  for (let i = 0; i < 2; i++) assert.equal((await b.request('GET', other.path, { key: other.key })).status, 200)
})

test('issue 30: a write, a read and a refusal on a key cached by an instance answer 401 there once another instance revokes it', async (t) => {
  const [a, b] = await twoInstances(t)
  const cases: [string, (u: { key: string; path: string }) => Promise<{ status: number; body: any }>][] = [
    // A write's unit checks the generation with its BEGIN, before it acts.
    ['a PATCH', (u) => b.request('PATCH', u.path, { key: u.key, json: { subscription: { interval_length: 2 } } })],
    ['a skip', (u) => b.request('POST', `${u.path}/skip`, { key: u.key })],
    // No unit: the key is read again before the answer goes out.
    ['a list', (u) => b.request('GET', '/api/v1/subscriptions', { key: u.key })],
    ['a refused write (422 before its unit)', (u) => b.request('PATCH', u.path, { key: u.key, json: { nothing: true } })],
    ['a dry run', (u) => b.request('POST', `${u.path}/skip`, { key: u.key, headers: { 'replenish-dry-run': '1' } })],
  ]
  for (const [what, send] of cases) {
    const u = await cachedOnB(a, b, `${what.replace(/\W+/g, '-')}@example.com`)
    assert.equal((await a.request('DELETE', `/admin/api/v1/api_keys/${u.keyId}`, { key: ADMIN_TOKEN })).status, 200)
    const after = await send(u)
    assert.equal(after.status, 401, what)
    assert.deepEqual(after.body, { error: 'Invalid API key specified.' }, what)
  }
  const events = await a.request('GET', '/admin/api/v1/events?type=subscription.skipped', { key: ADMIN_TOKEN })
  assert.deepEqual(events.body.events, [], 'no skip went through on a revoked key')
})

test('issue 30: a write on a cached key goes through when another key was revoked meanwhile (its key read anew)', async (t) => {
  const [a, b] = await twoInstances(t)
  const kept = await cachedOnB(a, b, 'kept@example.com')
  const gone = await cachedOnB(a, b, 'gone@example.com')
  assert.equal((await a.request('DELETE', `/admin/api/v1/api_keys/${gone.keyId}`, { key: ADMIN_TOKEN })).status, 200)
  const skipped = await b.request('POST', `${kept.path}/skip`, { key: kept.key })
  assert.equal(skipped.status, 200, skipped.text)
  const events = await a.request('GET', '/admin/api/v1/events?type=subscription.skipped', { key: ADMIN_TOKEN })
  assert.equal(events.body.events.length, 1, 'skipped once, though its unit was refused once and ran again')
  assert.deepEqual(events.body.events[0].actor, { type: 'customer', id: kept.keyId })
})

test('issue 30: erasing a user through one instance ends its cached key on another', async (t) => {
  const [a, b] = await twoInstances(t)
  const user = await cachedOnB(a, b, 'erased@example.com')
  const erased = await a.request('POST', `/admin/api/v1/users/${user.userId}/erase`, { key: ADMIN_TOKEN })
  assert.equal(erased.status, 200, erased.text)
  const after = await b.request('GET', user.path, { key: user.key })
  assert.equal(after.status, 401)
})
