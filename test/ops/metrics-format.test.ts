import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ADMIN_TOKEN, request } from '../helpers/server.ts'
import { startServe, tempDir } from '../cli/harness.ts'
import { lintPromFamilies, parsePromText, PromTextError, type Family } from '../helpers/prom-text.ts'
import { labelValue, RequestMetrics } from '../../src/http/metrics.ts'
import { linuxProcessStats } from '../../src/admin/process-metrics.ts'

/**
 * Issue 15 item 11: /metrics, whole, as `serve` renders it, follows the text exposition format
 * 0.0.4 and Prometheus' naming conventions (what `promtool check metrics` checks), with the
 * standard process metrics and the build info.
 */

const PACKAGE_VERSION = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version

const family = (families: readonly Family[], name: string): Family => {
  const f = families.find((x) => x.name === name)
  assert.ok(f, `no family ${name}`)
  return f
}
const only = (families: readonly Family[], name: string): number => {
  const f = family(families, name)
  assert.equal(f.samples.length, 1, `${name} has one sample`)
  return f.samples[0]!.value
}

test('serve\'s whole /metrics parses as text format 0.0.4 and passes the naming lint', async (t) => {
  const server = await startServe(t, { REPLENISH_DB: join(tempDir(t), 'r.db'), REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN, REPLENISH_LOG: 'off' })
  const admin = { key: ADMIN_TOKEN }
  await request(server.url, 'POST', '/admin/api/v1/users', { ...admin, json: { user: { email: 'ann@example.com' } } })
  for (const id of [1, 2, 999]) await request(server.url, 'GET', `/admin/api/v1/users/${id}`, admin)
  await request(server.url, 'GET', '/no/such/path')
  await request(server.url, 'DELETE', '/healthz')
  const res = await request(server.url, 'GET', '/metrics', admin)
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'text/plain; version=0.0.4; charset=utf-8')

  const families = parsePromText(res.text)
  assert.deepEqual(lintPromFamilies(families), [])
  const names = families.map((f) => f.name)
  assert.ok(!names.includes('replenish_processing_oldest_overdue_days'), 'the days gauge promtool refuses is gone')
  for (const name of ['replenish_processing_oldest_overdue_actionable_date_seconds', 'replenish_installments', 'replenish_database_size_bytes', 'replenish_wal_checkpoints_total']) {
    assert.ok(names.includes(name), `${name} is still there`)
  }

  // The latency histogram is by method and route template; unknown paths and methods are `unmatched`.
  const histogram = family(families, 'replenish_http_request_duration_seconds')
  assert.equal(histogram.type, 'histogram')
  const count = (method: string, route: string): number | undefined =>
    histogram.samples.find((s) => s.name.endsWith('_count') && s.labels['method'] === method && s.labels['route'] === route)?.value
  assert.equal(count('GET', '/admin/api/v1/users/:id'), 3)
  assert.equal(count('POST', '/admin/api/v1/users'), 1)
  assert.equal(count('GET', 'unmatched'), 1)
  assert.equal(count('DELETE', 'unmatched'), 1)
  const routes = new Set(histogram.samples.map((s) => s.labels['route']))
  assert.ok(![...routes].some((r) => r === undefined || /\/\d+|no\/such/.test(r)), `never a raw path: ${[...routes].join(' ')}`)

  const build = family(families, 'replenish_build_info')
  assert.equal(build.type, 'gauge')
  assert.deepEqual(build.samples.map((s) => [s.labels, s.value]), [[{ version: PACKAGE_VERSION }, 1]])

  assert.equal(family(families, 'process_cpu_seconds_total').type, 'counter')
  assert.ok(only(families, 'process_cpu_seconds_total') > 0)
  assert.ok(only(families, 'process_resident_memory_bytes') > 10_000_000)
  const started = only(families, 'process_start_time_seconds')
  assert.ok(started <= Date.now() / 1000 && started > Date.now() / 1000 - 3600, `start time ${started}`)
  if (process.platform === 'linux') {
    assert.ok(only(families, 'process_virtual_memory_bytes') >= only(families, 'process_resident_memory_bytes'))
    const open = only(families, 'process_open_fds')
    assert.ok(open > 3 && open <= only(families, 'process_max_fds'), `open fds ${open}`)
  }
})

test('/proc readings: the stat line is read past a command name with spaces and parentheses; what cannot be read is left out', (t) => {
  const proc = tempDir(t)
  assert.deepEqual(linuxProcessStats(proc), {})
  // Fields 3 to 23 after the name: vsize (23) is 123456789.
  writeFileSync(join(proc, 'stat'), `4242 (my (odd) name) S ${Array.from({ length: 19 }, (_, i) => i + 4).join(' ')} 123456789 2500 0\n`)
  mkdirSync(join(proc, 'fd'))
  for (const fd of ['0', '1', '2', '7']) writeFileSync(join(proc, 'fd', fd), '')
  writeFileSync(join(proc, 'limits'), 'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n')
  assert.deepEqual(linuxProcessStats(proc), { virtualBytes: 123456789, openFds: 4, maxFds: 1024 })
  writeFileSync(join(proc, 'limits'), 'Max open files            unlimited            unlimited            files\n')
  assert.equal(linuxProcessStats(proc).maxFds, undefined)
})

test('the request histogram keeps one series per method and route, cumulative, +Inf equal to the count', () => {
  const metrics = new RequestMetrics()
  const entry = { status: 200, request_id: 'r', user_id: null }
  for (const ms of [0.4, 1, 3, 7000]) metrics.observe({ method: 'GET', route: '/a/:id', ms, ...entry })
  metrics.observe({ method: 'PATCH', route: '/a/:id', ms: 30, ...entry })
  const h = family(parsePromText(metrics.render()), 'replenish_http_request_duration_seconds')
  const get = h.samples.filter((s) => s.labels['method'] === 'GET' && s.name.endsWith('_bucket')).map((s) => [s.labels['le'], s.value])
  assert.deepEqual(get, [['0.001', 2], ['0.0025', 2], ['0.005', 3], ['0.01', 3], ['0.025', 3], ['0.05', 3], ['0.1', 3], ['0.25', 3], ['0.5', 3], ['1', 3], ['2.5', 3], ['5', 3], ['+Inf', 4]])
  const sum = h.samples.find((s) => s.name.endsWith('_sum') && s.labels['method'] === 'GET')?.value
  assert.ok(Math.abs((sum as number) - 7.0044) < 1e-9, `sum ${sum}`)
  const patch = h.samples.filter((s) => s.labels['method'] === 'PATCH' && s.name.endsWith('_bucket')).map((s) => s.value)
  assert.deepEqual(patch, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1])
})

test('label values are escaped as the format wants (backslash, double quote, newline) and read back whole', () => {
  const odd = 'a\\b"c\nd'
  assert.equal(labelValue(odd), 'a\\\\b\\"c\\nd')
  const metrics = new RequestMetrics()
  metrics.observe({ method: 'GET', route: odd, status: 404, ms: 1, request_id: 'r', user_id: null })
  const families = parsePromText(metrics.render())
  assert.equal(family(families, 'replenish_http_requests_total').samples[0]?.labels['route'], odd)
})

/** What /metrics answered before issue 15: the parser reads it, and the lint refuses the days gauge as promtool did. */
const BEFORE_ISSUE_15 = `# HELP replenish_http_request_duration_seconds Time from request to answer.
# TYPE replenish_http_request_duration_seconds histogram
replenish_http_request_duration_seconds_bucket{le="0.001"} 0
replenish_http_request_duration_seconds_bucket{le="+Inf"} 2
replenish_http_request_duration_seconds_sum 0.0028439999999999997
replenish_http_request_duration_seconds_count 2
# HELP replenish_processing_oldest_overdue_days Days since the oldest unprocessed actionable date (0: due today or nothing due).
# TYPE replenish_processing_oldest_overdue_days gauge
replenish_processing_oldest_overdue_days 0
`

test('the lint refuses the old output\'s days gauge, a counter without _total, and the other naming mistakes', () => {
  assert.deepEqual(lintPromFamilies(parsePromText(BEFORE_ISSUE_15)), [
    'replenish_processing_oldest_overdue_days: use a base unit (seconds, bytes, ratio) instead of "days"',
  ])
  const cases: [string, string][] = [
    ['# HELP x_requests Requests.\n# TYPE x_requests counter\nx_requests 1\n', 'x_requests: a counter\'s name ends in _total'],
    ['# HELP x_total Things.\n# TYPE x_total gauge\nx_total 1\n', 'x_total: only counters end in _total'],
    ['# HELP x_latency_ms Latency.\n# TYPE x_latency_ms gauge\nx_latency_ms 1\n', 'x_latency_ms: use a base unit (seconds, bytes, ratio) instead of "ms"'],
    ['# TYPE x gauge\nx 1\n', 'x: no HELP text'],
    ['# HELP x X.\nx 1\n', 'x: no TYPE'],
    ['# HELP xBytes X.\n# TYPE xBytes gauge\nxBytes 1\n', 'xBytes: not snake_case'],
    ['# HELP x:y X.\n# TYPE x:y gauge\nx:y 1\n', 'x:y: \':\' is for recording rules'],
    ['# HELP x_gauge X.\n# TYPE x_gauge gauge\nx_gauge 1\n', 'x_gauge: the type "gauge" is in the name'],
    ['# HELP x_total X.\n# TYPE x_total counter\nx_total -1\n', 'x_total: a counter counts up from 0, got -1'],
  ]
  for (const [text, problem] of cases) assert.deepEqual(lintPromFamilies(parsePromText(text)), [problem], text)
})

test('the parser refuses what breaks the text format: names, labels, escapes, values, order, duplicates, histograms', () => {
  const h = '# HELP h H.\n# TYPE h histogram\n'
  const cases: [string, RegExp][] = [
    ['x 1', /must end with a newline/],
    ['x 1\nx 2\n', /line 2: duplicate series x\{\}/],
    ['x{a="1",b="2"} 1\nx{b="2",a="1"} 1\n', /line 2: duplicate series/],
    ['replenish-http 1\n', /line 1: expected a value/],
    ['1x 1\n', /line 1: not a sample/],
    ['x{1a="b"} 1\n', /line 1: bad label name/],
    ['x{__name="b"} 1\n', /reserved/],
    ['x{a="1",a="2"} 1\n', /label a given twice/],
    ['x{a=b} 1\n', /in double quotes/],
    ['x{a="b\\t"} 1\n', /bad escape \\t/],
    ['x{a="b} 1\n', /not closed/],
    ['x{a="b"c="d"} 1\n', /expected , or \}/],
    ['x one\n', /"one" is not a float/],
    ['x 0x10\n', /not a float/],
    ['x 1 2.5\n', /timestamp "2.5" is not an integer/],
    ['# HELP x bad \\t escape\nx 1\n', /bad escape \\t in HELP/],
    ['# TYPE x gauge\n# TYPE x gauge\nx 1\n', /line 2: a second TYPE for x/],
    ['# HELP x a\n# HELP x b\nx 1\n', /line 2: a second HELP for x/],
    ['# TYPE x wibble\nx 1\n', /unknown type/],
    ['# TYPE\n', /without a metric name/],
    ['x 1\n# TYPE x gauge\n', /line 2: TYPE for x after its samples/],
    ['x{a="1"} 1\ny 1\nx{a="2"} 1\n', /line 3: x appears again after other metrics/],
    [h + 'h_bucket{le="1"} 1\nh_sum 1\nh_count 1\n', /h\{\}: no le="\+Inf" bucket/],
    [h + 'h_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', /buckets must be cumulative/],
    [h + 'h_bucket{le="2"} 1\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n', /bounds must increase/],
    [h + 'h_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', /_count 3 differs from the \+Inf bucket 2/],
    [h + 'h_bucket{le="+Inf"} 2\nh_count 2\n', /h\{\}: no _sum/],
    [h + 'h_bucket{le="+Inf"} 2\nh_sum 1\n', /h\{\}: no _count/],
    [h + 'h_bucket 1\n', /bucket of h without le/],
    [h + 'h_bucket{le="many"} 1\n', /le "many" is not a float/],
    [h + 'h 1\n', /histogram h has a sample h$/],
    ['# TYPE s summary\ns 1\n', /summary s without quantile/],
  ]
  for (const [text, error] of cases) {
    assert.throws(() => parsePromText(text), (e: unknown) => e instanceof PromTextError && error.test(e.message), `${JSON.stringify(text)} → ${error}`)
  }
  // x_count under a counter x is no error of the format (it is a family of its own, untyped); the lint sees it.
  assert.deepEqual(lintPromFamilies(parsePromText('# TYPE x counter\nx_count 1\n')), ['x: no HELP text', 'x: a counter\'s name ends in _total', 'x_count: no HELP text', 'x_count: no TYPE'])
  // What the format allows is read: blanks, comments, a trailing comma, NaN and ±Inf, timestamps, empty HELP.
  const ok = parsePromText('# a comment\n\n# HELP x\n# TYPE x gauge\nx{a="1",} NaN\nx{a="2"} +Inf 1700000000000\nx{a="3"}\t-Inf\n')
  assert.deepEqual(ok[0]?.samples.map((s) => s.value), [NaN, Infinity, -Infinity])
})
