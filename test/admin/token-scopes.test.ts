/**
 * Admin token scopes (issue 18, item 2; C13). The matrix walks every route of `adminRoutes(app)`,
 * so a route added later is covered without touching this file: `admin` may do anything, `read`
 * only GET/HEAD on the admin API, `metrics` only GET /metrics; outside its scope a known token is
 * 403 with the exact body, a revoked or unknown one 401. Plus the admin_tokens API itself.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts'
import { adminRoutes } from '../../src/admin/routes.ts'
import { writeFailures } from '../helpers/database.ts'

const A = '/admin/api/v1'
const FORBIDDEN = { error: "This token's scope does not allow this request." }
const INVALID = { error: 'Invalid admin token.' }
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

let server: TestServer
before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

async function createToken(admin_token: Record<string, unknown>): Promise<any> {
  const res = await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN, json: { admin_token } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

type Expect = 'allowed' | 'forbidden' | 'invalid'

describe('the scope matrix', () => {
  const tokens: Record<string, string> = { configured: ADMIN_TOKEN, unknown: 'rpladm_not-a-token-that-exists' }
  before(async () => {
    for (const scope of ['admin', 'read', 'metrics'] as const) tokens[scope] = (await createToken({ scope, label: `matrix ${scope}` })).token
    const revoked = await createToken({ scope: 'admin' })
    const res = await server.request('DELETE', `${A}/admin_tokens/${revoked.id}`, { key: ADMIN_TOKEN })
    assert.equal(res.status, 200, res.text)
    tokens['revoked'] = revoked.token
  })

  // C13: `read` reads the admin API except the admin tokens (their API is scope admin); it may ask what it is.
  const expected = (who: string, method: string, template: string): Expect => {
    if (who === 'revoked' || who === 'unknown') return 'invalid'
    if (who === 'admin' || who === 'configured') return 'allowed'
    if (who === 'metrics') return 'forbidden'
    if (template === `${A}/admin_tokens/current`) return method === 'GET' || method === 'HEAD' ? 'allowed' : 'forbidden'
    if (who === 'read') return (method === 'GET' || method === 'HEAD') && !template.startsWith(`${A}/admin_tokens`) ? 'allowed' : 'forbidden'
    return 'forbidden'
  }

  function check(label: string, res: { status: number; body: any; text: string }, want: Expect, method: string): void {
    if (want === 'invalid') {
      assert.equal(res.status, 401, label)
      if (method !== 'HEAD') assert.deepEqual(res.body, INVALID, label)
    } else if (want === 'forbidden') {
      assert.equal(res.status, 403, label)
      if (method !== 'HEAD') assert.deepEqual(res.body, FORBIDDEN, label)
    } else {
      // Past authentication and scope: whatever the route answers (a 404 for the made-up id, a
      // 422 for the empty body), but neither 401 nor 403, and never a 5xx.
      assert.ok(res.status < 500 && res.status !== 401 && res.status !== 403, `${label}: ${res.status} ${res.text}`)
    }
  }

  test('every admin route × {configured, admin, read, metrics, revoked, unknown}', async () => {
    const routes = adminRoutes(server.app).flatMap(([method, path]) => (method === 'GET' ? [[method, path], ['HEAD', path]] : [[method, path]]))
    assert.ok(routes.some(([, path]) => path === `${A}/admin_tokens`), 'the admin_tokens routes are in the table')
    let requests = 0
    // Unknown tokens first and writers last: nothing a write does changes another row's answer here.
    for (const who of ['unknown', 'revoked', 'metrics', 'read', 'admin', 'configured']) {
      for (const [method, template] of routes as [string, string][]) {
        // An id no row has: the routes that find a row answer 404, so the matrix revokes nothing of its own.
        const path = template.replace(/:\w+/g, '999999')
        const res = await server.request(method, path, { key: tokens[who] as string })
        check(`${who} ${method} ${template}`, res, expected(who, method, template), method)
        requests++
      }
    }
    assert.equal(requests, routes.length * 6)
  })

  test('/metrics × {configured, admin, read, metrics, revoked, unknown}', async () => {
    const want: Record<string, number> = { configured: 200, admin: 200, read: 403, metrics: 200, revoked: 401, unknown: 401 }
    for (const [who, status] of Object.entries(want)) {
      const res = await server.request('GET', '/metrics', { key: tokens[who] as string })
      assert.equal(res.status, status, `${who}: ${res.text}`)
      if (status === 403) assert.deepEqual(res.body, FORBIDDEN)
      if (status === 401) assert.deepEqual(res.body, INVALID)
      if (status === 200) assert.match(res.text, /^# HELP /m)
    }
  })
})

describe('the admin_tokens API', () => {
  test('create shows the token once; list and delete never show it; a revoked token is refused at once', async () => {
    const made = await createToken({ scope: 'read', label: 'grafana' })
    assert.deepEqual(Object.keys(made), ['id', 'label', 'scope', 'prefix', 'token', 'created_at', 'updated_at', 'last_used_at'])
    assert.match(made.token, /^rpladm_[A-Za-z0-9_-]{43}$/)
    assert.equal(made.prefix, made.token.slice(0, 10))
    assert.deepEqual([made.label, made.scope, made.last_used_at], ['grafana', 'read', null])
    assert.match(made.created_at, ISO_TIME)

    const works = await server.request('GET', `${A}/users`, { key: made.token })
    assert.equal(works.status, 200)

    const listed = await server.request('GET', `${A}/admin_tokens?limit=100`, { key: ADMIN_TOKEN })
    assert.equal(listed.status, 200)
    assert.ok(!listed.text.includes(made.token))
    const row = listed.body.admin_tokens.find((t: any) => t.id === made.id)
    const { token: _token, ...shown } = made
    assert.deepEqual(Object.keys(row), Object.keys(shown))
    assert.deepEqual({ ...row, last_used_at: null }, shown)
    assert.equal(listed.body.next_after, null)

    const deleted = await server.request('DELETE', `${A}/admin_tokens/${made.id}`, { key: ADMIN_TOKEN })
    assert.equal(deleted.status, 200)
    assert.equal(deleted.body.id, made.id)
    assert.equal(deleted.body.token, undefined)

    const refused = await server.request('GET', `${A}/users`, { key: made.token })
    assert.deepEqual([refused.status, refused.body], [401, INVALID])
    const again = await server.request('DELETE', `${A}/admin_tokens/${made.id}`, { key: ADMIN_TOKEN })
    assert.equal(again.status, 404)
    const after = await server.request('GET', `${A}/admin_tokens?limit=100`, { key: ADMIN_TOKEN })
    assert.ok(!after.body.admin_tokens.some((t: any) => t.id === made.id), 'a revoked token is not listed')

    // Neither the access log nor the error log ever holds a token.
    const logged = JSON.stringify([server.log, server.errors])
    assert.ok(!logged.includes(made.token))
  })

  test('the list pages by id with next_after, like the other admin lists', async () => {
    const ids = [(await createToken({})).id, (await createToken({})).id]
    const first = await server.request('GET', `${A}/admin_tokens?after=${(ids[0] as number) - 1}&limit=1`, { key: ADMIN_TOKEN })
    assert.deepEqual(first.body.admin_tokens.map((t: any) => t.id), [ids[0]])
    assert.equal(first.body.next_after, ids[0])
    const second = await server.request('GET', `${A}/admin_tokens?after=${first.body.next_after}&limit=1`, { key: ADMIN_TOKEN })
    assert.deepEqual(second.body.admin_tokens.map((t: any) => t.id), [ids[1]])
  })

  test('the scope defaults to admin; no body at all is a token with the defaults', async () => {
    assert.equal((await createToken({ label: 'ci' })).scope, 'admin')
    const bare = await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN })
    assert.equal(bare.status, 201)
    assert.deepEqual([bare.body.scope, bare.body.label], ['admin', null])
  })

  test('a bad scope or a label over 100 characters → 422 naming the field, and nothing is made', async () => {
    const before = (await server.store.accounts.listAdminTokens(0, 1000)).length
    const res = await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN, json: { admin_token: { scope: 'root', label: 'x'.repeat(101) } } })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, { scope: ['is not included in the list'], label: ['is too long (maximum is 100 characters)'] })
    const okLabel = await createToken({ label: 'x'.repeat(100) })
    assert.equal(okLabel.label.length, 100)
    assert.equal((await server.store.accounts.listAdminTokens(0, 1000)).length, before + 1)
  })

  test('only an admin token manages tokens: read and metrics tokens get 403', async () => {
    const read = (await createToken({ scope: 'read' })).token
    const res = await server.request('POST', `${A}/admin_tokens`, { key: read, json: { admin_token: { scope: 'admin' } } })
    assert.deepEqual([res.status, res.body], [403, FORBIDDEN])
  })

  test('last_used_at is written on first use, then not again within the minute', async () => {
    const made = await createToken({ scope: 'read' })
    // The write is not awaited by the request: the test waits for the writes asked so far.
    const settled = async () => (await server.settled(), await server.store.accounts.findAdminToken(made.id))
    assert.equal((await settled())?.last_used_at, null)
    assert.equal((await server.request('GET', `${A}/users`, { key: made.token })).status, 200)
    const first = (await settled())?.last_used_at
    assert.match(first ?? '', ISO_TIME)
    assert.equal((await server.request('GET', `${A}/users`, { key: made.token })).status, 200)
    assert.equal((await settled())?.last_used_at, first)
  })
})

test('a failed write of last_used_at goes to the error log (without the token), and the request it came from still answers 200', async (t) => {
  const failures = writeFailures()
  const server = await startTestServer(t, {}, failures.storeOptions)
  const made = await server.request('POST', '/admin/api/v1/admin_tokens', { key: ADMIN_TOKEN, json: { admin_token: { scope: 'read', label: 'ci' } } })
  assert.equal(made.status, 201)
  const token = made.body.token as string
  await failures.set(server.store, true)
  assert.equal((await server.request('GET', '/admin/api/v1/users', { key: token })).status, 200)
  // The write is not awaited by the request: wait for it to fail.
  await server.settled()
  await failures.set(server.store, false)
  const logged = server.errors.map((e) => JSON.stringify(e)).filter((line) => line.includes('could not record the use of admin token'))
  assert.equal(logged.length, 1)
  assert.ok(logged[0]?.includes(failures.message))
  assert.ok(!logged[0]?.includes(token), 'the token itself is never logged')
})
