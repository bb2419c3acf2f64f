import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'
import { until } from '../helpers/wait.ts'

/**
 * /metrics checked against SQLite's own numbers (test/ops/observability.test.ts has the rest): the
 * database size is the file's pages (PostgreSQL's database is shared by tests running at once, so
 * its size never holds still to compare), and serve's checkpoint thread reports its work.
 */

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

test('/metrics reports serve\'s WAL checkpoints (background runs, inline restarts, the WAL\'s length); a store without the checkpoint thread reports none', async (t) => {
  const withThread = await startTestServer(t, {}, { backgroundCheckpoints: true })
  const user = await seedUser(withThread.store)
  const item = await seedSubscribable(withThread.store)
  const create = { key: user.key, json: { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item, quantity: 1 }] } } }
  assert.equal((await withThread.request('POST', '/api/v1/subscriptions', create)).status, 200)
  // The thread's first run comes once it has started (a while on a busy machine).
  let m = new Map<string, number>()
  await until('a background checkpoint in /metrics', async () => {
    m = parseMetrics((await withThread.request('GET', '/metrics', { key: ADMIN_TOKEN })).text)
    return (m.get('replenish_wal_checkpoints_total{where="background"}') ?? 0) > 0
  })
  const c = sqliteOf(withThread.store).checkpoints()!
  assert.ok(c.background > 0, 'the thread checkpointed the write')
  assert.equal(m.get('replenish_wal_checkpoints_total{where="background"}'), c.background)
  assert.equal(m.get('replenish_wal_checkpoints_total{where="inline"}'), c.inline)
  assert.ok((m.get('replenish_wal_frames') as number) > 0, 'the WAL holds the write\'s frames')

  const without = await startTestServer(t)
  const plain = parseMetrics((await without.request('GET', '/metrics', { key: ADMIN_TOKEN })).text)
  assert.ok(![...plain.keys()].some((k) => k.startsWith('replenish_wal_')), 'no checkpoint series without the thread')
})
