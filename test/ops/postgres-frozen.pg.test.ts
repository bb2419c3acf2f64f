/**
 * Issue 25, item 7: a frozen PostgreSQL (SIGSTOP of the postmaster and every backend: a VM
 * paused, a storage stall) enforces no statement time-out, because the server that would enforce
 * it is not running. The client bounds every answer too (connection.ts, answerWithinMs), so a
 * request answers 503 soon after REPLENISH_DB_STATEMENT_TIMEOUT_MS instead of hanging as long as
 * the freeze lasts; once the server runs again, so does every request, by itself.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startServe } from '../cli/harness.ts'
import { startPostgresCluster } from '../helpers/postgres.ts'
import { request } from '../helpers/server.ts'
import { until } from '../helpers/wait.ts'

const TOKEN = 'frozen-admin-token-0123456789'
const STATEMENT_TIMEOUT_MS = 500
/** The freeze lasts until every request has answered, or this long: far beyond the bound. */
const FROZEN_AT_MOST_MS = 30_000
/**
 * Generous on a busy machine, yet a third of the freeze: the client bound is about 1 s here. (The
 * freeze ends as soon as every request has answered, so its length costs nothing when they do.)
 */
const ANSWERED_WITHIN_MS = 10_000

test('a frozen PostgreSQL: reads and writes answer 503 soon after the statement time-out, not when it thaws; 200 again after', async (t) => {
  const cluster = await startPostgresCluster()
  t.after(() => cluster.stop())
  // A pool of 2 for 6 requests: some wait for a connection, which is bounded as well.
  const serve = await startServe(t, {
    REPLENISH_DB: cluster.url, REPLENISH_ADMIN_TOKEN: TOKEN, REPLENISH_LOG: 'off', REPLENISH_RATE_LIMIT: '0',
    REPLENISH_DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS), REPLENISH_DB_POOL: '2',
  })
  const user = await request(serve.url, 'POST', '/admin/api/v1/users', { key: TOKEN, json: { user: { email: 'frozen@example.com' } } })
  assert.equal(user.status, 201)
  const made = await request(serve.url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: TOKEN })
  const key = made.body.key as string

  cluster.freeze(true)
  const thaw = setTimeout(() => cluster.freeze(false), FROZEN_AT_MOST_MS)
  t.after(() => clearTimeout(thaw))
  const started = performance.now()
  const timed = async (method: string, path: string, json?: object): Promise<{ status: number; ms: number; retryAfter: string | null }> => {
    const res = await request(serve.url, method, path, { key, ...(json === undefined ? {} : { json }) })
    return { status: res.status, ms: performance.now() - started, retryAfter: res.headers.get('retry-after') }
  }
  const answers = await Promise.all([
    timed('GET', '/api/v1/subscriptions'),
    timed('GET', '/api/v1/subscriptions'),
    timed('GET', '/api/v1/subscriptions'),
    timed('POST', '/api/v1/subscriptions', { subscription: { interval_length: 1 } }),
    timed('POST', '/api/v1/subscriptions', { subscription: { interval_length: 2 } }),
    timed('POST', '/api/v1/subscriptions', { subscription: { interval_length: 3 } }),
  ])
  const readiness = await request(serve.url, 'GET', '/readyz')
  clearTimeout(thaw)
  cluster.freeze(false)

  for (const a of answers) {
    assert.equal(a.status, 503, JSON.stringify(answers))
    assert.ok(a.ms < ANSWERED_WITHIN_MS, `answered after ${Math.round(a.ms)} ms while the server stayed frozen: ${JSON.stringify(answers)}`)
    assert.equal(a.retryAfter, '2')
  }
  assert.equal(readiness.status, 503)

  // Thawed: the same server answers again by itself (the frozen connections were dropped).
  await until('a write answered 200 after the thaw', async () => (await timed('POST', '/api/v1/subscriptions', { subscription: { interval_length: 1 } })).status === 200)
  const listed = await request(serve.url, 'GET', '/api/v1/subscriptions', { key })
  assert.equal(listed.status, 200)
  const outageLines = serve.stderr.filter((l) => l.includes('answered 503 until it is back'))
  assert.equal(outageLines.length, 1, serve.stderr.join('\n'))
  assert.match(outageLines[0] ?? '', /PostgreSQL did not answer in time|PostgreSQL cannot be reached/)
})
