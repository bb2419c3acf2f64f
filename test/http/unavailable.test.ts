import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { listen } from '../../src/http/server.ts'
import type { Handler, Route } from '../../src/http/types.ts'
import { StoreContended, StoreUnavailable } from '../../src/store/unavailable.ts'

/**
 * Issue 25 item 6: an error that says the database cannot serve now (the store's
 * StoreUnavailable: PostgreSQL down, restarting or frozen, a full disk) is a 503 with Retry-After
 * that names no cause, logged in one line without a stack once per outage (every failure of an
 * outage carries the outage's start); any other error is still a bug: a 500, logged with its stack.
 */
async function serverThrowing(t: TestContext, next: () => unknown): Promise<{ url: string; errors: Record<string, unknown>[] }> {
  const errors: Record<string, unknown>[] = []
  const handler: Handler = () => {
    throw next()
  }
  const routes: Route[] = [['GET', '/thing', handler]]
  const server = await listen(
    { routes, maxBodyBytes: 1000, headersTimeoutMs: 5000, requestTimeoutMs: 10_000, keepAliveTimeoutMs: 1000, onResponse: () => {}, logError: (e) => errors.push(e as Record<string, unknown>) },
    '127.0.0.1',
    0,
  )
  t.after(() => server.close(100))
  return { url: server.url, errors }
}

test('StoreUnavailable is a 503 with Retry-After, logged once per outage in one line; another error is a 500 with its stack', async (t) => {
  const cause = Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' })
  const first = Date.parse('2026-11-27T10:00:00.000Z')
  const second = Date.parse('2026-11-27T10:05:00.000Z')
  const thrown = [
    new StoreUnavailable('PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432)', first, 2, cause),
    new StoreUnavailable('PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432)', first, 2, cause),
    new StoreUnavailable('PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432)', first, 2, cause),
    new StoreUnavailable('the disk is full (SQLite: database or disk is full)', second, 10, cause),
    new TypeError("Cannot read properties of undefined (reading 'id')"),
  ]
  const server = await serverThrowing(t, () => thrown.shift())
  const answers = []
  for (let i = 0; i < 5; i++) {
    const res = await fetch(`${server.url}/thing`)
    answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json(), id: res.headers.get('x-request-id') })
  }
  assert.deepEqual(answers.map((a) => [a.status, a.retryAfter]), [[503, '2'], [503, '2'], [503, '2'], [503, '10'], [500, null]])
  for (const a of answers.slice(0, 4)) assert.deepEqual(a.body, { error: 'Internal server error', request_id: a.id }, 'C1\'s 5xx body; the cause (a host, an address) is the log\'s, not the client\'s')
  assert.deepEqual(answers[4]?.body, { error: 'Internal server error', request_id: answers[4]?.id })

  assert.equal(server.errors.length, 3, JSON.stringify(server.errors))
  const [outage1, outage2, bug] = server.errors
  assert.equal(outage1?.['request_id'], answers[0]?.id)
  assert.equal(outage1?.['message'], 'PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432); since 2026-11-27T10:00:00.000Z requests that need it are answered 503 until it is back (logged once per outage)')
  assert.equal(outage2?.['message'], 'the disk is full (SQLite: database or disk is full); since 2026-11-27T10:05:00.000Z requests that need it are answered 503 until it is back (logged once per outage)')
  for (const line of [outage1, outage2]) assert.equal(line?.['stack'], undefined)
  assert.equal(bug?.['request_id'], answers[4]?.id)
  assert.match(String(bug?.['stack']), /^TypeError: Cannot read properties of undefined/)
})

test("a lock waited on in vain (StoreContended) is a 503 too, logged each time with its request id, and no outage's", async (t) => {
  const cause = Object.assign(new Error('canceling statement due to lock timeout'), { code: '55P03' })
  const start = Date.parse('2026-11-29T10:00:00.000Z')
  const reason = 'a lock another transaction held was waited on for 5 s (lock_timeout)'
  const thrown = [
    new StoreUnavailable('PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432)', start, 2, cause),
    new StoreContended(reason, start + 1, 1, cause),
    new StoreContended(reason, start + 1, 1, cause),
    new StoreUnavailable('PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432)', start, 2, cause),
  ]
  const server = await serverThrowing(t, () => thrown.shift())
  const answers = []
  for (let i = 0; i < 4; i++) {
    const res = await fetch(`${server.url}/thing`)
    answers.push({ status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json(), id: res.headers.get('x-request-id') })
  }
  assert.deepEqual(answers.map((a) => [a.status, a.retryAfter]), [[503, '2'], [503, '1'], [503, '1'], [503, '2']])
  for (const a of answers) assert.deepEqual(a.body, { error: 'Internal server error', request_id: a.id })
  // The outage's line once, both contended requests each, and the outage is not logged again.
  assert.deepEqual(server.errors.map((e) => [e['request_id'], e['message']]), [
    [answers[0]?.id, 'PostgreSQL cannot be reached (connect ECONNREFUSED 10.0.0.7:5432); since 2026-11-29T10:00:00.000Z requests that need it are answered 503 until it is back (logged once per outage)'],
    [answers[1]?.id, `${reason}; answered 503 with Retry-After: 1`],
    [answers[2]?.id, `${reason}; answered 503 with Retry-After: 1`],
  ])
})

