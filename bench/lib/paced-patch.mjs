import http from 'node:http'
import { readFileSync } from 'node:fs'

/**
 * PATCH line item quantity at a fixed rate, open loop (as wrk2 does): request i is due at
 * start + i / rate whatever the answers before it did, so a slow server shows as latency, not as
 * a lower rate. Latency is counted from when a request was due, not from when it went out
 * (no coordinated omission). Prints one line, `PACED_RESULT {json}`, at the end.
 *
 *   node paced-patch.mjs <url> <data file of seed.mjs's writeLuaData> <rate/s> <seconds> <run>
 *
 * Each request sets a quantity the item does not have yet (a PATCH to the same value writes no
 * event): one pass over the 30,000 seeded items per 30 s at 1,000/s, a new value per pass and run.
 */
const [url, dataFile, rateArg, secondsArg, runArg] = process.argv.slice(2)
const rate = Number(rateArg)
const seconds = Number(secondsArg)
const run = Number(runArg ?? 1)
if (!url || !dataFile || !(rate > 0) || !(seconds > 0)) {
  process.stderr.write('usage: node paced-patch.mjs <url> <data file> <rate/s> <seconds> [run]\n')
  process.exit(2)
}

const users = readFileSync(dataFile, 'utf8').trim().split('\n')
  .filter((line) => !line.startsWith('subscribables '))
  .map((line) => {
    const [key, , items] = line.split(' ')
    return { auth: `Bearer ${key}`, items: items.split(',') }
  })
const target = new URL(url)
// Enough sockets that a stall of a few hundred ms at 1,000/s never runs out of them.
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 })
const total = Math.round(rate * seconds)
const latenciesMs = new Float64Array(total)
let sent = 0
let answered = 0
let acknowledged = 0
let non2xx = 0
let errors = 0
const firstErrors = []

function send(i, dueAt) {
  const user = users[i % users.length]
  const round = Math.floor(i / users.length)
  const id = user.items[round % user.items.length]
  const pass = Math.floor(round / user.items.length)
  const body = JSON.stringify({ subscription_line_item: { quantity: ((run * 97 + pass + 1) % 9999) + 1 } })
  const req = http.request({
    host: target.hostname, port: target.port, path: `/api/v1/line_items/${id}`, method: 'PATCH', agent,
    headers: { authorization: user.auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
  }, (res) => {
    res.resume()
    res.on('end', () => {
      if (res.statusCode >= 200 && res.statusCode < 300) acknowledged++
      else non2xx++
      done(i, dueAt)
    })
  })
  req.on('error', (err) => {
    errors++
    if (firstErrors.length < 3) firstErrors.push(err.message)
    done(i, dueAt)
  })
  req.end(body)
}

function done(i, dueAt) {
  latenciesMs[i] = performance.now() - dueAt
  if (++answered === total) finish()
}

const start = performance.now() + 50
function tick() {
  const now = performance.now()
  // Everything due by now goes out now: a late timer catches up instead of lowering the rate.
  const due = Math.min(total, Math.floor(((now - start) / 1000) * rate) + 1)
  while (sent < due) {
    const i = sent++
    send(i, start + (i / rate) * 1000)
  }
  if (sent < total) setTimeout(tick, 1)
}
setTimeout(tick, 50)

function finish() {
  const elapsed = (performance.now() - start) / 1000
  const sorted = latenciesMs.slice().sort()
  // When the slowest one was due, in seconds into the run: a stall at the same moment of every run points at a timer.
  const worst = latenciesMs.indexOf(sorted[total - 1])
  const at = (p) => sorted[Math.min(total - 1, Math.ceil((p / 100) * total) - 1)]
  const result = {
    rate, seconds, requests: total, acknowledged, non2xx, errors, firstErrors, elapsedS: elapsed,
    latencyMs: { p50: at(50), p90: at(90), p99: at(99), max: sorted[total - 1] },
    slowestDueAtS: worst / rate,
    over100Ms: latenciesMs.filter((ms) => ms > 100).length,
  }
  process.stdout.write(`PACED_RESULT ${JSON.stringify(result)}\n`)
  agent.destroy()
}
