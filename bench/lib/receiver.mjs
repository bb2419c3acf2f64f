import http from 'node:http'

/**
 * The webhook receiver of the benches (issue 17): a separate node:http process that answers every
 * `POST /hook` with 200 `ok` as soon as the body has arrived, and otherwise does as little as it
 * can, so that what the benches measure is replenish's dispatcher, not this. Per delivery it
 * keeps the event id (from `Replenish-Event-Id`: duplicates are counted, at least once allows
 * them) and the lag: arrival time − the event's `created_at`, which is the third key of every
 * body (`{"id":…,"type":…,"created_at":"…",…}`), so a regex over the start of the body finds it
 * without parsing the rest. Arrival is when the request's head came in, by this machine's clock,
 * the same clock replenish stamps events with.
 *
 *   GET  /stats   what arrived since the last reset, as JSON (lag percentiles in ms)
 *   POST /reset   forget it all
 *
 * A request without a `Replenish-Signature` is answered 400 and counted as `unsigned`: the bench
 * fails on any.
 */
const CREATED_AT = /"created_at":"([^"]+)"/

function fresh() {
  return { requests: 0, unsigned: 0, ids: new Set(), lagsMs: [], firstMs: null, lastMs: null }
}

let s = fresh()

function receive(req, res) {
  const arrived = Date.now()
  let head = ''
  req.setEncoding('utf8')
  req.on('data', (chunk) => {
    if (head.length < 200) head += chunk
  })
  req.on('end', () => {
    s.requests++
    if (!req.headers['replenish-signature']) {
      s.unsigned++
      res.writeHead(400, { 'content-length': 8 }).end('unsigned')
      return
    }
    s.ids.add(Number(req.headers['replenish-event-id']))
    const created = CREATED_AT.exec(head)
    if (created) s.lagsMs.push(arrived - Date.parse(created[1]))
    s.firstMs ??= arrived
    s.lastMs = arrived
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok')
  })
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function stats() {
  const lags = Float64Array.from(s.lagsMs).sort()
  return {
    requests: s.requests,
    distinct: s.ids.size,
    duplicates: s.requests - s.unsigned - s.ids.size,
    unsigned: s.unsigned,
    firstMs: s.firstMs,
    lastMs: s.lastMs,
    lagMs: { count: lags.length, p50: percentile(lags, 50), p90: percentile(lags, 90), p99: percentile(lags, 99), max: percentile(lags, 100) },
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/hook') return receive(req, res)
    if (req.method === 'GET' && req.url === '/stats') {
      const body = JSON.stringify(stats())
      return res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    }
    if (req.method === 'POST' && req.url === '/reset') {
      s = fresh()
      return res.writeHead(204).end()
    }
    res.writeHead(404, { 'content-length': 0 }).end()
  })
  // Longer than the dispatcher's own idle sockets live, so the receiver never closes one under it.
  server.keepAliveTimeout = 60_000
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`receiver listening on http://127.0.0.1:${server.address().port}\n`)
  })
  const stop = () => {
    server.close(() => process.exit(0))
    server.closeAllConnections() // the dispatcher's kept-alive sockets would hold the close open
  }
  process.once('SIGTERM', stop)
  process.once('SIGINT', stop)
}
