import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import type { IncomingMessage } from 'node:http'
import { ADMIN_TOKEN, countRows, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { endpoint, ok } from '../../src/api/kit/endpoint.ts'
import { HttpError } from '../../src/http/http-error.ts'
import type { Ctx } from '../../src/http/types.ts'
import { newApiKey } from '../../src/admin/users.ts'
import { authenticate, sha256 } from '../../src/api/kit/auth.ts'
import { testSql } from '../helpers/rows.ts'

/** C5: Idempotency-Key on every write route, customer and admin. */
const TODAY = '2026-01-15'
const REUSED = { error: 'Idempotency-Key was already used with a different request' }

async function setup(t: TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, ...env })
  const alice = await seedUser(server.store)
  const sub = await createSubscription(server, alice.key)
  const skip = (key: string, idem?: string, user = alice.key, id: number = sub.id) =>
    server.request('POST', `/api/v1/subscriptions/${id}/skip`, { key: user, headers: idem === undefined ? {} : { 'idempotency-key': idem } })
  return { server, alice, sub, skip }
}

const dateOf = async (server: TestServer, id: number): Promise<string | null | undefined> => (await server.store.subscriptions.find(id))?.actionable_date
const skippedEvents = async (server: TestServer, id: number): Promise<number> =>
  (await server.store.events.ofSubscription(id, 0, 1000)).filter((e) => e.type === 'subscription.skipped').length

test('a retried skip with the same Idempotency-Key moves the date once and replays status and body', async (t) => {
  const { server, sub, skip } = await setup(t)
  assert.equal(sub.actionable_date, '2026-02-15')
  const first = await skip('', 'retry-1')
  assert.equal(first.status, 200)
  assert.equal(first.body.actionable_date, '2026-03-15')
  assert.equal(first.headers.get('idempotent-replayed'), null)
  const snap = await snapshot(server.store)
  for (let i = 0; i < 3; i++) {
    const retry = await skip('', 'retry-1')
    assert.equal(retry.status, 200)
    assert.equal(retry.text, first.text)
    assert.equal(retry.headers.get('idempotent-replayed'), 'true')
    assert.equal(retry.headers.get('content-type'), 'application/json; charset=utf-8')
  }
  assert.equal(await snapshot(server.store), snap)
  assert.equal(await dateOf(server, sub.id), '2026-03-15')
  assert.equal(await skippedEvents(server, sub.id), 1)
})

test('two different keys skip twice; no key skips every time', async (t) => {
  const { server, sub, skip } = await setup(t)
  assert.equal((await skip('', 'key-a')).body.actionable_date, '2026-03-15')
  assert.equal((await skip('', 'key-b')).body.actionable_date, '2026-04-15')
  assert.equal((await skip('')).body.actionable_date, '2026-05-15')
  assert.equal((await skip('')).body.actionable_date, '2026-06-15')
  assert.equal(await dateOf(server, sub.id), '2026-06-15')
  assert.equal(await skippedEvents(server, sub.id), 4)
})

test('the same key with a different body, path or method → 422, and nothing happens', async (t) => {
  const { server, alice, sub, skip } = await setup(t)
  const item = await seedSubscribable(server.store)
  const h = { 'idempotency-key': 'k1' }
  const first = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, headers: h, json: { subscription: { interval_length: 2 } } })
  assert.equal(first.status, 200)
  const snap = await snapshot(server.store)
  const attempts = [
    await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, headers: h, json: { subscription: { interval_length: 3 } } }),
    await server.request('PUT', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, headers: h, json: { subscription: { interval_length: 2 } } }),
    await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key, headers: h }),
    await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, headers: h, json: { subscription_line_item: { subscribable_id: item, quantity: 1 } } }),
  ]
  for (const res of attempts) assert.deepEqual([res.status, res.body], [422, REUSED])
  assert.equal(await snapshot(server.store), snap)
  // The original request still replays.
  const retry = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, headers: h, json: { subscription: { interval_length: 2 } } })
  assert.deepEqual([retry.status, retry.text], [200, first.text])
  assert.equal(await skippedEvents(server, sub.id), 0)
  void skip
})

test('the same parameters encoded differently are the same request (key order, spacing)', async (t) => {
  const { server, alice, sub } = await setup(t)
  const h = { 'idempotency-key': 'k-order', 'content-type': 'application/json' }
  const path = `/api/v1/subscriptions/${sub.id}`
  const first = await server.request('PATCH', path, { key: alice.key, headers: h, raw: '{"subscription":{"interval_length":2,"interval_units":"week"}}' })
  assert.equal(first.status, 200)
  const again = await server.request('PATCH', path, { key: alice.key, headers: h, raw: '{ "subscription": { "interval_units": "week", "interval_length": 2 } }' })
  assert.deepEqual([again.status, again.text, again.headers.get('idempotent-replayed')], [200, first.text, 'true'])
  // Every key counts, even one named like Object's prototype.
  const skipPath = `/api/v1/subscriptions/${sub.id}/skip`
  const h2 = { ...h, 'idempotency-key': 'k-proto' }
  assert.equal((await server.request('POST', skipPath, { key: alice.key, headers: h2, raw: '{"__proto__": {"x": 1}}' })).status, 200)
  const other = await server.request('POST', skipPath, { key: alice.key, headers: h2, raw: '{"__proto__": {"x": 2}}' })
  assert.deepEqual([other.status, other.body], [422, REUSED])
})

test('an Idempotency-Key longer than 255 characters → 422; 255 is fine', async (t) => {
  const { server, sub, skip } = await setup(t)
  const snap = await snapshot(server.store)
  const long = await skip('', 'x'.repeat(256))
  assert.deepEqual([long.status, long.body], [422, { error: 'Idempotency-Key is too long (maximum is 255 characters)' }])
  assert.equal(await snapshot(server.store), snap)
  const fine = await skip('', 'x'.repeat(255))
  assert.equal(fine.status, 200)
  assert.equal((await skip('', 'x'.repeat(255))).text, fine.text)
  assert.equal(await dateOf(server, sub.id), '2026-03-15')
})

test('authentication comes first: a missing or bad key is 401 whatever the Idempotency-Key says', async (t) => {
  const { server, sub, skip } = await setup(t)
  const snap = await snapshot(server.store)
  const none = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { headers: { 'idempotency-key': 'x'.repeat(300) } })
  assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an API key.' }])
  const bad = await skip('', 'x'.repeat(300), 'rpl_not-a-real-key-0123456789')
  assert.deepEqual([bad.status, bad.body], [401, { error: 'Invalid API key specified.' }])
  assert.equal(await snapshot(server.store), snap)
})

test('keys are per caller: another user\'s same key acts on its own; the same user\'s second API key shares them', async (t) => {
  const { server, alice, sub, skip } = await setup(t)
  const bob = await seedUser(server.store)
  const bobs = await createSubscription(server, bob.key)
  assert.equal((await skip('', 'shared')).body.actionable_date, '2026-03-15')
  const bobRes = await skip('', 'shared', bob.key, bobs.id)
  assert.deepEqual([bobRes.status, bobRes.body.id, bobRes.body.actionable_date], [200, bobs.id, '2026-03-15'])
  assert.equal(bobRes.headers.get('idempotent-replayed'), null)
  // Bob replaying "shared" on Alice's subscription is Bob's request: 422 (his key was used elsewhere), never Alice's answer.
  const crossed = await skip('', 'shared', bob.key, sub.id)
  assert.deepEqual([crossed.status, crossed.body], [422, REUSED])
  const second = newApiKey()
  await server.store.write((tx) => tx.accounts.createApiKey(alice.id, sha256(second), second.slice(0, 8)))
  const viaSecond = await skip('', 'shared', second)
  assert.deepEqual([viaSecond.status, viaSecond.headers.get('idempotent-replayed')], [200, 'true'])
  assert.deepEqual([await dateOf(server, sub.id), await dateOf(server, bobs.id)], ['2026-03-15', '2026-03-15'])
})

test('a refused request (422) is remembered: its retry gets the same refusal even after the state changed', async (t) => {
  const { server, alice, sub, skip } = await setup(t)
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: alice.key })).status, 200)
  const refused = await skip('', 'k-refused')
  assert.deepEqual([refused.status, refused.body], [422, { paused: ['cannot skip a subscription which is paused'] }])
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/resume`, { key: alice.key })).status, 200)
  const retry = await skip('', 'k-refused')
  assert.deepEqual([retry.status, retry.body, retry.headers.get('idempotent-replayed')], [422, refused.body, 'true'])
  assert.equal(await skippedEvents(server, sub.id), 0)
  // A fresh key acts on the state as it is now.
  assert.equal((await skip('', 'k-fresh')).status, 200)
})

test('a retried create makes one subscription; 401/404 answers are not stored', async (t) => {
  const { server, alice, sub } = await setup(t)
  const before = await countRows(server.store, 'subscriptions')
  const create = () => server.request('POST', '/api/v1/subscriptions', { key: alice.key, headers: { 'idempotency-key': 'create-1' }, json: { subscription: { interval_length: 3 } } })
  const first = await create()
  const second = await create()
  assert.deepEqual([first.status, second.status, second.text], [200, 200, first.text])
  assert.equal(await countRows(server.store, 'subscriptions'), before + 1)
  const rows = await countRows(server.store, 'idempotency_keys')
  const missing = await server.request('POST', `/api/v1/subscriptions/${sub.id + 99}/skip`, { key: alice.key, headers: { 'idempotency-key': 'k404' } })
  assert.equal(missing.status, 404)
  assert.equal(await countRows(server.store, 'idempotency_keys'), rows)
  // GET ignores the header.
  const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, headers: { 'idempotency-key': 'create-1' } })
  assert.deepEqual([shown.status, shown.body.id], [200, sub.id])
})

test('a retried DELETE of a line item replays the removed item instead of a 404', async (t) => {
  const { server, alice } = await setup(t)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const del = () => server.request('DELETE', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key, headers: { 'idempotency-key': 'del' } })
  const first = await del()
  assert.deepEqual([first.status, first.body], [200, sub.line_items[0]])
  const again = await del()
  assert.deepEqual([again.status, again.text], [200, first.text])
  const plain = await server.request('DELETE', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key })
  assert.equal(plain.status, 404)
})

test('admin write routes honour Idempotency-Key too (per admin token)', async (t) => {
  const { server, sub } = await setup(t)
  const adminSkip = () => server.request('POST', `/admin/api/v1/subscriptions/${sub.id}/skip`, { key: ADMIN_TOKEN, headers: { 'idempotency-key': 'admin-1' } })
  const first = await adminSkip()
  const again = await adminSkip()
  assert.deepEqual([first.status, again.status, again.text, again.headers.get('idempotent-replayed')], [200, 200, first.text, 'true'])
  assert.equal(await dateOf(server, sub.id), '2026-03-15')
  const users = await countRows(server.store, 'users')
  const createUser = (email: string) => server.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, headers: { 'idempotency-key': 'admin-user' }, json: { user: { email } } })
  const made = await createUser('zoe@example.com')
  const remade = await createUser('zoe@example.com')
  assert.deepEqual([made.status, remade.status, remade.text], [201, 201, made.text])
  assert.equal(await countRows(server.store, 'users'), users + 1)
  assert.deepEqual((await createUser('other@example.com')).body, REUSED)
  // The customer API's keys are another caller's: the same key there acts.
  const alice = await seedUser(server.store)
  const own = await createSubscription(server, alice.key)
  const res = await server.request('POST', `/api/v1/subscriptions/${own.id}/skip`, { key: alice.key, headers: { 'idempotency-key': 'admin-1' } })
  assert.deepEqual([res.status, res.headers.get('idempotent-replayed')], [200, null])
  const unauth = await server.request('POST', `/admin/api/v1/subscriptions/${sub.id}/skip`, { key: 'wrong-token', headers: { 'idempotency-key': 'admin-1' } })
  assert.deepEqual([unauth.status, unauth.body], [401, { error: 'Invalid admin token.' }])
})

test('entries older than 24 hours are not replayed, and are pruned by writes (at most once a minute)', async (t) => {
  const { server, sub, skip } = await setup(t)
  const hoursAgo = (h: number): string => new Date(Date.now() - h * 3600_000).toISOString()
  const sql = testSql(server.store)
  await sql.run("INSERT INTO idempotency_keys (scope, key, fingerprint, status, body, created_at) VALUES ('user:0', 'ancient', 'f', 200, '{}', ?)", hoursAgo(25))
  assert.equal((await skip('', 'old')).status, 200)
  // The first write of the process pruned the expired row.
  assert.deepEqual((await sql.all('SELECT key FROM idempotency_keys')).map((r) => r['key']), ['old'])
  await sql.run('UPDATE idempotency_keys SET created_at = ?', hoursAgo(24.01))
  // Expired: the same key acts again, and its new answer replaces the old one.
  const again = await skip('', 'old')
  assert.deepEqual([again.status, again.headers.get('idempotent-replayed'), again.body.actionable_date], [200, null, '2026-04-15'])
  const replay = await skip('', 'old')
  assert.deepEqual([replay.text, replay.headers.get('idempotent-replayed')], [again.text, 'true'])
  assert.equal(await dateOf(server, sub.id), '2026-04-15')
})

test('idempotency store: save prunes rows older than 24 h, at most once a minute', async (t) => {
  const { server } = await setup(t)
  const t0 = Date.parse('2026-01-15T12:00:00.000Z')
  const at = (ms: number): string => new Date(t0 + ms).toISOString()
  const keys = async (): Promise<unknown[]> => (await testSql(server.store).all('SELECT key FROM idempotency_keys ORDER BY key')).map((r) => r['key'])
  await server.store.write(async (tx) => {
    await tx.idempotency.save('s', 'a', 'f', 200, '{}', at(0))
    // Saved as of a day ago: a time before the last prune, which prunes nothing.
    await tx.idempotency.save('s', 'stale', 'f', 200, '{}', at(-86_400_000 + 20_000))
    await tx.idempotency.save('s', 'b', 'f', 200, '{}', at(59_000))
  })
  assert.deepEqual(await keys(), ['a', 'b', 'stale'])
  // A minute after the last prune, the next save prunes: 'stale' is now older than 24 h.
  await server.store.write((tx) => tx.idempotency.save('s', 'c', 'f', 200, '{}', at(60_000)))
  assert.deepEqual(await keys(), ['a', 'b', 'c'])
  assert.equal((await server.store.idempotency.find('s', 'a', at(-1))) !== undefined, true)
  assert.equal(await server.store.idempotency.find('s', 'a', at(0)), undefined)
})

test('concurrent identical requests: the date moves once; every answer is the same 200 or a 409', async (t) => {
  const { server, sub, skip } = await setup(t)
  const answers = await Promise.all(Array.from({ length: 8 }, () => skip('', 'burst')))
  const oks = answers.filter((r) => r.status === 200)
  assert.ok(oks.length >= 1)
  for (const r of oks) assert.equal(r.text, oks[0]?.text)
  for (const r of answers.filter((a) => a.status !== 200)) {
    assert.deepEqual([r.status, r.body], [409, { error: 'A request with this Idempotency-Key is still being processed' }])
  }
  assert.equal(await dateOf(server, sub.id), '2026-03-15')
  assert.equal(await skippedEvents(server, sub.id), 1)
})

/** A request as the router hands it to a route, without a socket. */
function fakeCtx(headers: Record<string, string>, path = '/api/v1/subscriptions/1/skip'): Ctx {
  const req = Object.assign(Readable.from([]), { headers, socket: { remoteAddress: '127.0.0.1' } }) as unknown as IncomingMessage
  return { req, method: 'POST', path, route: path, params: {}, query: new URLSearchParams(), body: undefined, bodyKind: 'none', rawBody: Buffer.alloc(0), requestId: 'r', userId: null, bodyRefused: false, checkBody: () => {} }
}

test('409 while the first request with that key is still running (the endpoint wrapper, gated)', { timeout: 10_000 }, async (t) => {
  const { server, alice } = await setup(t)
  let release!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  let runs = 0
  // Each authenticates its caller first, as every route does (the unit names its actor, C18).
  const route = endpoint(server.app, async (ctx, call) => {
    await authenticate(server.app, ctx)
    await gate
    return call.commit(async () => ok({ run: ++runs }))
  })
  const otherRoute = endpoint(server.app, async (ctx, call) => {
    await authenticate(server.app, ctx)
    return call.commit(async () => ok({ other: true }))
  })
  const headers = { authorization: `Bearer ${alice.key}`, 'idempotency-key': 'slow' }
  const first = route(fakeCtx(headers))
  await assert.rejects(route(fakeCtx(headers)), (err: unknown) =>
    err instanceof HttpError && err.status === 409 && JSON.stringify(err.body) === JSON.stringify({ error: 'A request with this Idempotency-Key is still being processed' }))
  // In flight is per caller and key, across routes.
  await assert.rejects(otherRoute(fakeCtx(headers, '/api/v1/subscriptions/1/cancel')), (err: unknown) => err instanceof HttpError && err.status === 409)
  const bob = await seedUser(server.store)
  assert.deepEqual(await otherRoute(fakeCtx({ authorization: `Bearer ${bob.key}`, 'idempotency-key': 'slow' })), { status: 200, body: { other: true } })
  release()
  assert.deepEqual(await first, { status: 200, body: { run: 1 } })
  const replay = await route(fakeCtx(headers))
  assert.deepEqual(replay, { status: 200, body: undefined, raw: '{"run":1}', headers: { 'idempotent-replayed': 'true' } })
  assert.equal(runs, 1)
})

test('a refused body is never stored under its key, even by a handler that answers without a unit (C1, C5)', async (t) => {
  const { server, alice } = await setup(t)
  // A handler that answers at once, writing nothing: its answer would be remembered for the key.
  const route = endpoint(server.app, async (ctx) => {
    await authenticate(server.app, ctx)
    return ok({ nothing: 'changed' })
  })
  const refused = new HttpError(400, { error: 'The request body is not valid JSON' })
  const badBody = (): Ctx => ({
    ...fakeCtx({ authorization: `Bearer ${alice.key}`, 'idempotency-key': 'bad-body' }),
    bodyRefused: true,
    checkBody: () => { throw refused },
  })
  for (let i = 0; i < 2; i++) await assert.rejects(route(badBody()), (err: unknown) => err === refused)
  assert.equal(await countRows(server.store, 'idempotency_keys'), 0)
})
