import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { ADMIN_TOKEN, request, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { startServe, tempDir } from '../cli/harness.ts'
import { sqliteOf } from '../helpers/store.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

test('GET /healthz answers 200 while the process is up, without authentication', async (t) => {
  const server = await startTestServer(t)
  const res = await server.request('GET', '/healthz', { headers: { 'x-request-id': 'probe-1' } })
  assert.equal(res.status, 200)
  assert.deepEqual(res.body, { status: 'ok' })
  assert.equal(res.headers.get('content-type'), JSON_TYPE)
  assert.equal(res.headers.get('x-request-id'), 'probe-1')
})

test('GET /readyz answers 200 while the database answers and 503 once it does not', async (t) => {
  const server = await startTestServer(t)
  const ready = await server.request('GET', '/readyz')
  assert.equal(ready.status, 200)
  assert.deepEqual(ready.body, { status: 'ready' })
  sqliteOf(server.store).db.close()
  const gone = await server.request('GET', '/readyz')
  assert.equal(gone.status, 503)
  assert.deepEqual(gone.body, { status: 'not ready', reason: 'database did not answer' })
  assert.equal(gone.headers.get('content-type'), JSON_TYPE)
  // The process itself is still up.
  assert.equal((await server.request('GET', '/healthz')).status, 200)
})

test('/metrics needs the admin token: none, a wrong one or a customer key is a 401', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const none = await server.request('GET', '/metrics')
  assert.equal(none.status, 401)
  assert.deepEqual(none.body, { error: 'You must specify an admin token.' })
  assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="replenish"')
  assert.equal(none.headers.get('content-type'), JSON_TYPE)
  for (const key of ['not-the-token', user.key]) {
    const wrong = await server.request('GET', '/metrics', { key })
    assert.equal(wrong.status, 401)
    assert.deepEqual(wrong.body, { error: 'Invalid admin token.' })
  }
  const ok = await server.request('GET', '/metrics', { key: ADMIN_TOKEN })
  assert.equal(ok.status, 200)
  assert.equal(ok.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')
})

test('with REPLENISH_METRICS_PUBLIC=1 /metrics needs no token', async (t) => {
  const server = await startTestServer(t, { REPLENISH_METRICS_PUBLIC: '1' })
  const res = await server.request('GET', '/metrics')
  assert.equal(res.status, 200)
  assert.match(res.text, /^replenish_database_size_bytes \d+$/m)
})

/** Prometheus text: `name{labels} value` samples, each family announced by HELP and TYPE. */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>()
  const declared = new Set<string>()
  for (const line of text.trimEnd().split('\n')) {
    const meta = /^# (HELP|TYPE) ([a-z_]+) .+$/.exec(line)
    if (meta) {
      declared.add(meta[2] as string)
      continue
    }
    const m = /^([a-z_]+)(\{[^}]*\})? (-?[0-9.e+]+)$/.exec(line)
    assert.ok(m, `not a sample line: ${line}`)
    const family = (m[1] as string).replace(/_(bucket|sum|count)$/, '')
    assert.ok(declared.has(m[1] as string) || declared.has(family), `undeclared ${m[1]}`)
    samples.set(`${m[1]}${m[2] ?? ''}`, Number(m[3]))
  }
  return samples
}

test('/metrics counts requests by method, route template and status, with a latency histogram, memory and database size', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  await server.request('POST', '/api/v1/subscriptions', { key: user.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } })
  for (const id of [999, 998]) await server.request('GET', `/api/v1/subscriptions/${id}`, { key: user.key })
  await server.request('GET', '/no/such/path')
  await server.request('GET', '/healthz')
  const res = await server.request('GET', '/metrics', { key: ADMIN_TOKEN })
  const m = parseMetrics(res.text)

  assert.equal(m.get('replenish_http_requests_total{method="POST",route="/api/v1/subscriptions",status="200"}'), 1)
  assert.equal(m.get('replenish_http_requests_total{method="GET",route="/api/v1/subscriptions/:id",status="404"}'), 2)
  // Unknown paths share one label value: a scanner cannot blow up the series count.
  assert.equal(m.get('replenish_http_requests_total{method="GET",route="unmatched",status="404"}'), 1)
  assert.equal(m.get('replenish_http_requests_total{method="GET",route="/healthz",status="200"}'), 1)

  // The histogram is by method and route template too (issue 15): the two GETs of unknown ids share one.
  const byId = 'method="GET",route="/api/v1/subscriptions/:id"'
  const buckets = [...m].filter(([k]) => k.startsWith(`replenish_http_request_duration_seconds_bucket{${byId},`))
  assert.ok(buckets.length >= 5)
  const counts = buckets.map(([, v]) => v)
  assert.deepEqual(counts, [...counts].sort((a, b) => a - b), 'buckets are cumulative')
  assert.equal(m.get(`replenish_http_request_duration_seconds_bucket{${byId},le="+Inf"}`), 2)
  assert.equal(m.get(`replenish_http_request_duration_seconds_count{${byId}}`), 2)
  assert.ok((m.get(`replenish_http_request_duration_seconds_sum{${byId}}`) as number) > 0)
  assert.equal(m.get('replenish_http_request_duration_seconds_count{method="GET",route="unmatched"}'), 1)
  assert.equal(m.get('replenish_http_request_duration_seconds_count{method="POST",route="/api/v1/subscriptions"}'), 1)
  assert.ok(![...m.keys()].some((k) => k.includes('/999') || k.includes('/no/such')), 'never a raw path')

  assert.ok((m.get('replenish_process_resident_memory_bytes') as number) > 10_000_000)
  assert.ok((m.get('replenish_process_heap_used_bytes') as number) > 1_000_000)
  const size = sqliteOf(server.store).db.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get() as { n: number }
  assert.equal(m.get('replenish_database_size_bytes'), size.n)
})

test('serve logs one JSON line per request after the listening line, and never a key, token, secret or body', async (t) => {
  const db = join(tempDir(t), 'r.db')
  const server = await startServe(t, { REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN })
  const customerKey = 'imported-key-SECRET-4242424242'
  const user = await request(server.url, 'POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'ann@example.com' } } })
  await request(server.url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN, json: { api_key: { key: customerKey } } })
  const made = await request(server.url, 'POST', '/admin/api/v1/users/1/api_keys', { key: ADMIN_TOKEN })
  const minted = made.body.key as string
  const sub = await request(server.url, 'POST', '/api/v1/subscriptions?note=QUERY-SECRET', {
    key: customerKey,
    headers: { 'x-request-id': 'trace-abc' },
    json: { subscription: { interval_length: 2, shipping_address_attributes: { firstname: 'BODY-SECRET' } } },
  })
  await request(server.url, 'GET', `/api/v1/subscriptions/${sub.body.id ?? 1}`, { key: minted })
  await request(server.url, 'GET', '/api/v1/subscriptions', { key: 'rpl_wrong-key-SECRET' })
  await request(server.url, 'GET', '/metrics', { key: 'wrong-admin-SECRET' })
  assert.equal(await server.stop(), 0)

  const [first, ...rest] = server.stdout.filter((l) => l.length > 0)
  assert.equal(first, server.stdout[0])
  assert.match(first as string, /^replenish listening on http:\/\/127\.0\.0\.1:\d+$/)
  const entries = rest.map((l) => JSON.parse(l) as Record<string, unknown>)
  assert.equal(entries.length, 7)
  for (const e of entries) {
    assert.deepEqual(Object.keys(e), ['time', 'method', 'route', 'status', 'ms', 'request_id', 'user_id'])
    assert.match(e['time'] as string, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    assert.equal(typeof e['ms'], 'number')
    assert.match(e['request_id'] as string, /^[\w.:@-]+$/)
  }
  const summary = entries.map((e) => [e['method'], e['route'], e['status'], e['user_id']])
  assert.deepEqual(summary, [
    ['POST', '/admin/api/v1/users', 201, null],
    ['POST', '/admin/api/v1/users/:id/api_keys', 201, null],
    ['POST', '/admin/api/v1/users/:id/api_keys', 201, null],
    ['POST', '/api/v1/subscriptions', 422, 1],
    ['GET', '/api/v1/subscriptions/:id', 404, 1],
    ['GET', '/api/v1/subscriptions', 401, null],
    ['GET', '/metrics', 401, null],
  ])
  assert.equal(entries[3]?.['request_id'], 'trace-abc')

  const everything = [...server.stdout, ...server.stderr].join('\n')
  for (const secret of [ADMIN_TOKEN, customerKey, minted, 'rpl_wrong-key-SECRET', 'wrong-admin-SECRET', 'BODY-SECRET', 'QUERY-SECRET']) {
    assert.ok(!everything.includes(secret), `the logs contain ${secret}`)
  }
})

test('REPLENISH_LOG=off keeps stdout to the listening line', async (t) => {
  const db = join(tempDir(t), 'r.db')
  const server = await startServe(t, { REPLENISH_DB: db, REPLENISH_LOG: 'off' })
  assert.equal((await request(server.url, 'GET', '/healthz')).status, 200)
  assert.equal(await server.stop(), 0)
  assert.deepEqual(server.stdout.filter((l) => l.length > 0), [`replenish listening on ${server.url}`])
})

test('/metrics reports serve\'s WAL checkpoints (background runs, inline restarts, the WAL\'s length); a store without the checkpoint thread reports none', async (t) => {
  const withThread = await startTestServer(t, {}, { backgroundCheckpoints: true })
  const user = await seedUser(withThread.store)
  const item = await seedSubscribable(withThread.store)
  const create = { key: user.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } }
  assert.equal((await withThread.request('POST', '/api/v1/subscriptions', create)).status, 200)
  let m = parseMetrics((await withThread.request('GET', '/metrics', { key: ADMIN_TOKEN })).text)
  for (let i = 0; i < 200 && (m.get('replenish_wal_checkpoints_total{where="background"}') ?? 0) === 0; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10))
    m = parseMetrics((await withThread.request('GET', '/metrics', { key: ADMIN_TOKEN })).text)
  }
  const c = sqliteOf(withThread.store).checkpoints()!
  assert.ok(c.background > 0, 'the thread checkpointed the write')
  assert.equal(m.get('replenish_wal_checkpoints_total{where="background"}'), c.background)
  assert.equal(m.get('replenish_wal_checkpoints_total{where="inline"}'), c.inline)
  assert.ok((m.get('replenish_wal_frames') as number) > 0, 'the WAL holds the write\'s frames')

  const without = await startTestServer(t)
  const plain = parseMetrics((await without.request('GET', '/metrics', { key: ADMIN_TOKEN })).text)
  assert.ok(![...plain.keys()].some((k) => k.startsWith('replenish_wal_')), 'no checkpoint series without the thread')
})
