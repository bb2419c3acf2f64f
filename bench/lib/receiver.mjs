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
 *
 * `--hang P --fail P` (issue 25) make it a receiver that misbehaves at random: a share P of the
 * requests is never answered (the sender's time-out ends them), another share is answered 500.
 * It then also counts the events it accepted (200), and their lag at that moment.
 *
 *   GET  /stats?light=1   the counts only (no percentiles to sort: cheap to ask often)
 */
const CREATED_AT = /"created_at":"([^"]+)"/
const option = (name) => {
  const i = process.argv.indexOf(name)
  const p = i < 0 ? 0 : Number(process.argv[i + 1])
  if (!(p >= 0 && p <= 1)) throw new Error(`${name} wants a share between 0 and 1`)
  return p
}
const hangShare = option('--hang')
const failShare = option('--fail')

function fresh() {
  return { requests: 0, unsigned: 0, hung: 0, failed: 0, ids: new Set(), okIds: new Set(), lagsMs: [], okLagsMs: [], firstMs: null, lastMs: null }
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
    const id = Number(req.headers['replenish-event-id'])
    s.ids.add(id)
    const created = CREATED_AT.exec(head)
    const lag = created ? arrived - Date.parse(created[1]) : undefined
    if (lag !== undefined) s.lagsMs.push(lag)
    s.firstMs ??= arrived
    s.lastMs = arrived
    const draw = hangShare + failShare > 0 ? Math.random() : 1
    if (draw < hangShare) {
      s.hung++ // never answered: the connection stays open until the sender gives up
      return
    }
    if (draw < hangShare + failShare) {
      s.failed++
      res.writeHead(500, { 'content-type': 'text/plain', 'content-length': 4 }).end('fail')
      return
    }
    if (!s.okIds.has(id)) {
      s.okIds.add(id)
      if (lag !== undefined) s.okLagsMs.push(lag)
    }
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': 2 }).end('ok')
  })
}

function percentile(sorted, p) {
  if (sorted.length === 0) return null
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]
}

function summary(values) {
  const sorted = Float64Array.from(values).sort()
  return { count: sorted.length, p50: percentile(sorted, 50), p90: percentile(sorted, 90), p99: percentile(sorted, 99), max: percentile(sorted, 100) }
}

function stats(light) {
  return {
    requests: s.requests,
    distinct: s.ids.size,
    duplicates: s.requests - s.unsigned - s.ids.size,
    unsigned: s.unsigned,
    hung: s.hung,
    failed: s.failed,
    accepted: s.okIds.size,
    firstMs: s.firstMs,
    lastMs: s.lastMs,
    ...(light ? {} : { lagMs: summary(s.lagsMs), acceptedLagMs: summary(s.okLagsMs) }),
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = http.createServer((req, res) => {
    if (req.method === 'POST' && req.url === '/hook') return receive(req, res)
    if (req.method === 'GET' && (req.url === '/stats' || req.url === '/stats?light=1')) {
      const body = JSON.stringify(stats(req.url.endsWith('light=1')))
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
