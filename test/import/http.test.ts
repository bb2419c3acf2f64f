/**
 * `POST /admin/api/v1/imports` over real HTTP (C13, docs/import.md): its body rules (JSON Lines
 * only, 64 MiB, the caller checked before the body is read), scopes, the summary, all or nothing,
 * the same file twice, a conflicting file, Idempotency-Key, and ids of new rows above the imported.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { ADMIN_TOKEN, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { IMPORT_MAX_BODY_BYTES } from '../../src/admin/imports.ts'
import { allInserted, generateImport } from './generate.ts'

const IMPORTS = '/admin/api/v1/imports'
const NDJSON = { 'content-type': 'application/x-ndjson' }

const post = (server: TestServer, body: string, key: string | undefined = ADMIN_TOKEN, headers: Record<string, string> = NDJSON) =>
  server.request('POST', IMPORTS, { key, raw: body, headers })

async function adminToken(server: TestServer, scope: string): Promise<string> {
  const res = await server.request('POST', '/admin/api/v1/admin_tokens', { key: ADMIN_TOKEN, json: { admin_token: { scope } } })
  assert.equal(res.status, 201, res.text)
  return res.body.token
}

test('200 with the counts; every value readable through the customer API with the imported key; new rows get ids above the imported', async (t) => {
  const server = await startTestServer(t)
  const g = generateImport(20)
  const res = await post(server, g.lines.join('\n') + '\n')
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body, allInserted(g))
  for (const expected of g.subscriptions) {
    const got = await server.request('GET', `/api/v1/subscriptions/${expected.id}`, { key: g.keys.get(expected.user_id) })
    assert.equal(got.status, 200, got.text)
    assert.deepEqual(got.body, expected)
  }
  // A customer's imported key sees only their own (C2).
  const other = g.subscriptions.find((s) => s.user_id !== g.subscriptions[0]!.user_id)!
  assert.equal((await server.request('GET', `/api/v1/subscriptions/${other.id}`, { key: g.keys.get(g.subscriptions[0]!.user_id) })).status, 401)

  // Rows made afterwards, through both APIs, get ids above every imported one.
  const admin = (path: string, json: object) => server.request('POST', `/admin/api/v1/${path}`, { key: ADMIN_TOKEN, json })
  const user = await admin('users', { user: { email: 'new@example.com' } })
  assert.ok(user.body.id > g.max.user, `user ${user.body.id}`)
  const method = await admin('payment_methods', { payment_method: { name: 'New' } })
  assert.ok(method.body.id > g.max.payment_method, `payment method ${method.body.id}`)
  const source = await admin('payment_sources', { payment_source: { user_id: user.body.id, payment_method_id: method.body.id } })
  assert.ok(source.body.id > g.max.payment_source, `payment source ${source.body.id}`)
  const item = await admin('subscribables', { subscribable: { sku: 'NEW-SKU', name: 'New' } })
  assert.ok(item.body.id > g.max.subscribable, `subscribable ${item.body.id}`)
  const key = await admin(`users/${user.body.id}/api_keys`, {})
  const created = await server.request('POST', '/api/v1/subscriptions', {
    key: key.body.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item.body.id, quantity: 1 }] } },
  })
  assert.equal(created.status, 200, created.text)
  assert.ok(created.body.id > g.max.subscription, `subscription ${created.body.id}`)
  assert.ok(created.body.line_items[0].id > g.max.line_item, `line item ${created.body.line_items[0].id}`)
  const added = await server.request('POST', `/api/v1/subscriptions/${g.subscriptions[0]!.id}/line_items`, {
    key: g.keys.get(g.subscriptions[0]!.user_id), json: { subscription_line_item: { subscribable_id: 11, quantity: 1 } },
  })
  assert.ok(added.body.id > created.body.line_items[0].id, `line item ${added.body.id}`)
})

test('all or nothing: a bad last line imports nothing and names its line and field', async (t) => {
  const server = await startTestServer(t)
  const g = generateImport(30)
  const before = await snapshot(server.store)
  const bad = JSON.stringify({ type: 'subscription', id: 99999, user_id: 100, interval_length: 1, actionable_date: '2026-01-01', line_items: [{ id: 1, subscribable_id: 777, quantity: 1 }] })
  const res = await post(server, [...g.lines, '', bad].join('\r\n'))
  assert.equal(res.status, 422, res.text)
  const line = g.lines.length + 2
  assert.deepEqual(res.body, {
    error: `line ${line} (subscription 99999): line_items.subscribable_id does not exist (neither stored nor on an earlier line)`,
    line,
    errors: { 'line_items.subscribable_id': ['does not exist (neither stored nor on an earlier line)'] },
  })
  assert.equal(await snapshot(server.store), before)
})

test('importing the same file twice changes nothing; a file that disagrees with a stored row is refused, naming it', async (t) => {
  const server = await startTestServer(t)
  const g = generateImport(25)
  const file = g.lines.join('\n')
  assert.equal((await post(server, file)).status, 200)
  const once = await snapshot(server.store)
  const again = await post(server, file)
  assert.equal(again.status, 200, again.text)
  assert.deepEqual(again.body, Object.fromEntries(Object.entries(allInserted(g)).map(([k, v]) => [k, typeof v === 'number' ? v : { inserted: 0, present: (v as { inserted: number }).inserted }])))
  assert.equal(await snapshot(server.store), once)

  // A customer skipped since: the stored row is newer than the file, which is refused whole.
  const first = g.subscriptions.find((s) => s.state === 'active' && !s.paused)!
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${first.id}/skip`, { key: g.keys.get(first.user_id) })).status, 200)
  const skipped = await snapshot(server.store)
  const extra = JSON.stringify({ type: 'user', id: 1, email: 'late@example.com' })
  const res = await server.request('POST', IMPORTS, { key: ADMIN_TOKEN, raw: `${extra}\n${file}`, headers: { ...NDJSON, 'accept-language': 'de' } })
  assert.equal(res.status, 422, res.text)
  const line = 1 + g.lines.findIndex((l) => l.includes(`"id":${first.id},`)) + 1
  assert.equal(res.body.line, line)
  assert.deepEqual(res.body.errors, {
    actionable_date: ['weicht vom gespeicherten Datensatz mit dieser ID ab'],
    skip_count: ['weicht vom gespeicherten Datensatz mit dieser ID ab'],
    successive_skip_count: ['weicht vom gespeicherten Datensatz mit dieser ID ab'],
    updated_at: ['weicht vom gespeicherten Datensatz mit dieser ID ab'],
  })
  assert.match(res.body.error, new RegExp(`^Zeile ${line} \\(subscription ${first.id}\\): actionable_date weicht`))
  assert.equal(await snapshot(server.store), skipped)
})

test('references, unique values and C6 payment pairing are checked against stored rows and earlier lines', async (t) => {
  const server = await startTestServer(t)
  const g = generateImport(10) // users 100 and 102
  assert.equal((await post(server, g.lines.join('\n'))).status, 200)
  const cases: [object, Record<string, string[]>][] = [
    [{ type: 'user', id: 1, email: 'CUSTOMER0@example.com' }, { email: ['has already been taken'] }],
    [{ type: 'api_key', user_id: 3, key: 'a-key-for-nobody-at-all' }, { user_id: ['does not exist (neither stored nor on an earlier line)'] }],
    [{ type: 'api_key', user_id: 102, key: g.keys.get(100)! }, { user_id: ['differs from the stored record with this id'] }],
    [{ type: 'payment_source', id: 1, user_id: 100, payment_method_id: 4 }, { payment_method_id: ['does not exist (neither stored nor on an earlier line)'] }],
    [{ type: 'subscribable', id: 1, sku: 'COFFEE-1KG', name: 'Again' }, { sku: ['has already been taken'] }],
    // The source is user 100's: user 102 may not be charged to it.
    [{ type: 'subscription', id: 1, user_id: 102, interval_length: 1, actionable_date: '2026-01-01', payment_method_id: 3, payment_source_id: 500 }, { payment_source_type: ['Invalid payment method or source'] }],
    [{ type: 'subscription', id: 1, user_id: 100, interval_length: 1, actionable_date: '2026-01-01', line_items: [{ id: 5000, subscribable_id: 11, quantity: 1 }] }, { 'line_items.id': ['belongs to another subscription'] }],
  ]
  const before = await snapshot(server.store)
  for (const [line, errors] of cases) {
    const res = await post(server, JSON.stringify(line))
    assert.equal(res.status, 422, res.text)
    assert.deepEqual(res.body.errors, errors, JSON.stringify(line))
    // The key itself is never in an answer.
    if ('key' in line) assert.ok(!res.text.includes(line.key as string))
  }
  assert.equal(await snapshot(server.store), before)
  // Order matters within a file: a user on a later line is not there yet for an earlier key.
  const backwards = [JSON.stringify({ type: 'api_key', user_id: 1, key: 'x'.repeat(20) }), JSON.stringify({ type: 'user', id: 1, email: 'one@example.com' })]
  assert.equal((await post(server, backwards.join('\n'))).body.line, 1)
  assert.equal((await post(server, backwards.reverse().join('\n'))).status, 200)
})

test('JSON Lines only (415), 64 MiB (413), an empty body (422), the caller checked before the body is read, scope admin only', async (t) => {
  const server = await startTestServer(t)
  const line = JSON.stringify({ type: 'payment_method', id: 1, name: 'Card' })
  assert.deepEqual(await post(server, line, ADMIN_TOKEN, { 'content-type': 'application/json' }).then((r) => [r.status, r.body]),
    [415, { error: 'Unsupported media type: send application/x-ndjson' }])
  assert.deepEqual(await post(server, '').then((r) => [r.status, r.body]),
    [422, { error: 'The import is empty: send one JSON object per line (application/x-ndjson)' }])
  assert.equal((await post(server, '\n \n')).status, 422)
  // 64 KiB, the other routes' limit, is far below: a larger body is taken.
  const big = Array.from({ length: 2000 }, (_, i) => JSON.stringify({ type: 'payment_method', id: i + 1, name: `Card ${'x'.repeat(40)}` })).join('\n')
  assert.ok(big.length > server.config.maxBodyBytes)
  assert.equal((await post(server, big)).status, 200)
  assert.equal((await declared(server, IMPORT_MAX_BODY_BYTES + 1, ADMIN_TOKEN)).status, 413)

  const read = await adminToken(server, 'read')
  const metrics = await adminToken(server, 'metrics')
  const customer = 'rpl_not-an-admin-token-at-all'
  // Refused before a byte of a (declared) 60 MiB body is read: never buffered for a stranger.
  assert.deepEqual(await declared(server, 60 * 1024 * 1024, undefined), { status: 401, body: { error: 'You must specify an admin token.' } })
  assert.deepEqual(await declared(server, 60 * 1024 * 1024, customer), { status: 401, body: { error: 'Invalid admin token.' } })
  assert.deepEqual(await declared(server, 60 * 1024 * 1024, read), { status: 403, body: { error: "This token's scope does not allow this request." } })
  assert.deepEqual(await declared(server, 60 * 1024 * 1024, metrics), { status: 403, body: { error: "This token's scope does not allow this request." } })
  assert.equal((await post(server, line, read)).status, 403)
})

test('Idempotency-Key compares the bytes of the file: the same file replays, another one is refused', async (t) => {
  const server = await startTestServer(t)
  const a = JSON.stringify({ type: 'payment_method', id: 1, name: 'Card' })
  const b = JSON.stringify({ type: 'payment_method', id: 2, name: 'Card' })
  const headers = { ...NDJSON, 'idempotency-key': 'import-1' }
  const first = await post(server, a, ADMIN_TOKEN, headers)
  assert.equal(first.status, 200)
  const replay = await post(server, a, ADMIN_TOKEN, headers)
  assert.deepEqual([replay.status, replay.headers.get('idempotent-replayed'), replay.body], [200, 'true', first.body])
  const other = await post(server, b, ADMIN_TOKEN, headers)
  assert.deepEqual([other.status, other.body], [422, { error: 'Idempotency-Key was already used with a different request' }])
})

/** Sends only the headers of a POST declaring `length` bytes, and reads the answer (the body never comes). */
function declared(server: TestServer, length: number, key: string | undefined): Promise<{ status: number; body: unknown }> {
  const headers: Record<string, string | number> = { ...NDJSON, 'content-length': length }
  if (key !== undefined) headers['authorization'] = `Bearer ${key}`
  return new Promise((resolve, reject) => {
    const req = http.request(`${server.url}${IMPORTS}`, { method: 'POST', headers }, (res) => {
      let text = ''
      res.on('data', (c: Buffer) => (text += c.toString()))
      res.on('end', () => {
        req.destroy()
        resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) })
      })
    })
    req.on('error', reject)
    req.flushHeaders()
  })
}
