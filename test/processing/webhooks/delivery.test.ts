/**
 * Delivery (issue 17, C10) with real receivers on 127.0.0.1: the body is the event, signed; a
 * 2xx is success; failures are retried base × 6ⁿ later; a slow endpoint delays no other; a
 * deleted endpoint gets nothing more; redirects are not followed; 1 KiB of an answer is kept.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createHmac } from 'node:crypto'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../../helpers/server.ts'
import { eventually, makeEvents, registerEndpoint, sleep, startDispatcher, startReceiver, type Received } from '../../helpers/webhooks.ts'
import { webhookDispatcher } from '../../../src/processing/webhooks/dispatcher.ts'
import { testSql } from '../../helpers/rows.ts'
import { until } from '../../helpers/wait.ts'

const A = '/admin/api/v1'

const signaturesOf = (header: string): { t: number; v1: string[] } => {
  const parts = header.split(',').map((p) => p.split('=') as [string, string])
  return { t: Number(parts.find(([k]) => k === 't')?.[1]), v1: parts.filter(([k]) => k === 'v1').map(([, v]) => v) }
}
const hmac = (secret: string, t: number, body: string): string => createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')

const deliveriesOf = async (server: TestServer, endpointId: number): Promise<any[]> =>
  (await server.request('GET', `${A}/webhook_endpoints/${endpointId}/deliveries`, { key: ADMIN_TOKEN })).body.deliveries

/**
 * The endpoint's deliveries once `done` holds for them. An attempt's result is written after the
 * receiver has answered (in a batch of results), so a test waits for it rather than for a time.
 */
async function deliveriesWhen(server: TestServer, endpointId: number, what: string, done: (d: any[]) => boolean): Promise<any[]> {
  let list: any[] = []
  await until(what, async () => done((list = await deliveriesOf(server, endpointId))))
  return list
}

test('a delivery posts the event as the feed shows it, with Replenish-Event-Id and a signature that verifies', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  startDispatcher(server)
  const before = Math.floor(Date.now() / 1000)
  await makeEvents(server, 1)
  const [got] = await rx.waitFor(1) as [Received]
  const [event] = (await server.request('GET', `${A}/events`, { key: ADMIN_TOKEN })).body.events
  assert.deepEqual(JSON.parse(got.body), event)
  assert.equal(got.headers['content-type'], 'application/json')
  assert.equal(got.headers['replenish-event-id'], String(event.id))
  const sig = signaturesOf(got.headers['replenish-signature'] as string)
  // Signed with the time of the attempt: after the event was made, before it arrived.
  assert.ok(sig.t >= before && sig.t <= got.at / 1000, `t=${sig.t}`)
  assert.deepEqual(sig.v1, [hmac(endpoint.secret, sig.t, got.body)])
})

test('500, 500, 200 → three attempts, the second retry six times later than the first (1 s base), then delivered', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t, (_req, res, i) => {
    res.statusCode = i < 2 ? 500 : 200
    res.end(i < 2 ? 'try later' : 'ok')
  })
  const endpoint = await registerEndpoint(server, rx.url)
  // The draw fixed at the middle of the jitter range: the delays are their nominal 1 s and 6 s.
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0.5 })
  await makeEvents(server, 1)
  const got = await rx.waitFor(3)
  // Never early; how late a retry goes out after it is due depends on how busy the machine is, so
  // the upper bounds only tell the delays apart from the next ones of the series (6 s, 36 s).
  const first = got[1]!.at - got[0]!.at
  const second = got[2]!.at - got[1]!.at
  assert.ok(first >= 950 && first < 6_000, `first retry after ${first} ms`)
  assert.ok(second >= 5_950 && second < 36_000, `second retry after ${second} ms`)
  assert.equal(new Set(got.map((r) => r.body)).size, 1)
  const [delivery] = await deliveriesWhen(server, endpoint.id, 'the delivery delivered', (l) => l[0]?.state === 'delivered')
  assert.deepEqual(delivery.attempts.map((a: any) => [a.status_code, a.error, a.response_body, a.redelivery]), [
    [500, 'the receiver answered 500', 'try later', false],
    [500, 'the receiver answered 500', 'try later', false],
    [200, null, 'ok', false],
  ])
  assert.equal(delivery.attempt_count, 3)
  assert.equal(delivery.next_attempt_at, null)
  assert.equal(rx.received.length, 3)
})

test('a hanging receiver does not delay another endpoint', async (t) => {
  const server = await startTestServer(t)
  const hanging = await startReceiver(t, () => {}) // never answers
  const healthy = await startReceiver(t)
  await registerEndpoint(server, hanging.url)
  await registerEndpoint(server, healthy.url)
  // 8 sockets for two endpoints: a share of 4 each. The hanging one's requests never time out
  // during the test: were the healthy endpoint's deliveries to wait for them, they would never
  // arrive (rather than arriving late, which a busy machine also does).
  startDispatcher(server, { concurrency: 4, sockets: 8, timeoutMs: 600_000 })
  await makeEvents(server, 30)
  await healthy.waitFor(30)
  // The hanging one holds exactly its share of the sockets, no more.
  await hanging.waitFor(4)
  await sleep(100)
  assert.equal(hanging.received.length, 4)
})

test('issue 25: a request left unanswered does not hold back the endpoint\'s other deliveries, nor a retry, though the endpoint has one place', async (t) => {
  const server = await startTestServer(t)
  // The first request is never answered, the second fails once; every other one succeeds.
  const rx = await startReceiver(t, (_req, res, i) => {
    if (i === 0) return
    res.statusCode = i === 1 ? 500 : 200
    res.end()
  })
  const endpoint = await registerEndpoint(server, rx.url)
  // One place, and a time-out far beyond the test: before issue 25 nothing else went until it ran out.
  startDispatcher(server, { concurrency: 1, timeoutMs: 120_000, retryBaseSeconds: 1 })
  await makeEvents(server, 5)
  const got = await rx.waitFor(6, 60_000)
  const ids = got.map((r) => Number(r.headers['replenish-event-id']))
  assert.equal(new Set(ids).size, 5, 'all five events were posted')
  assert.equal(ids[5], ids[1], 'the sixth request is the retry of the one that failed')
  await eventually(() => deliveriesOf(server, endpoint.id), (list) => list.filter((d) => d.state === 'delivered').length === 4)
  const hanging = (await deliveriesOf(server, endpoint.id)).find((d) => d.event_id === ids[0])
  assert.deepEqual([hanging.state, hanging.attempt_count], ['pending', 0], 'the hanging request is still in flight')
})

test('after DELETE nothing more is sent to the endpoint, pending retries included; its pending deliveries are canceled', async (t) => {
  const server = await startTestServer(t)
  // Once both first attempts are in, the pacer holds every further send until the endpoint is
  // deleted: the retries (due 0.8 s later) cannot go out before the DELETE, however slow it is.
  let held = false
  const rx = await startReceiver(t, (_req, res, i) => {
    if (i === 1) held = true
    res.statusCode = 503
    res.end()
  })
  const endpoint = await registerEndpoint(server, rx.url)
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0, pacer: { delay: () => (held ? 20 : 0), busy: false, stop() {} } }) // first retry 0.8 s later
  await makeEvents(server, 2)
  await rx.waitFor(2)
  await deliveriesWhen(server, endpoint.id, 'both failures recorded', (l) => l.length === 2 && l.every((d) => d.attempts.length === 1))
  // Recorded before now, so both retries are due 0.8 s from now at the latest.
  const due = Date.now() + 800
  assert.equal((await server.request('DELETE', `${A}/webhook_endpoints/${endpoint.id}`, { key: ADMIN_TOKEN })).status, 200)
  await makeEvents(server, 1)
  const states = async () => (await testSql(server.store).all('SELECT state FROM webhook_deliveries ORDER BY id')).map((r) => r['state'])
  await until('the pending deliveries canceled', async () => (await states()).every((state) => state === 'canceled'))
  assert.deepEqual(await states(), ['canceled', 'canceled'])
  // Let go, and past the time the retries were due: still nothing.
  held = false
  await sleep(Math.max(0, due - Date.now()) + 300)
  assert.equal(rx.received.length, 2)
})

test('after rotate_secret deliveries carry two v1= entries, the new secret first; one again once the old one expires', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  // Rotated before the dispatcher starts: a dispatcher already reading the endpoints when the
  // rotation commits may post the next delivery before its next read (within a second; the old
  // secret is valid for a day), which would make this test a race. The expiry below is read by
  // a running one.
  const rotated = await server.request('POST', `${A}/webhook_endpoints/${endpoint.id}/rotate_secret`, { key: ADMIN_TOKEN })
  assert.equal(rotated.status, 200)
  const dispatcher = startDispatcher(server)
  await makeEvents(server, 1)
  const [got] = await rx.waitFor(1) as [Received]
  const sig = signaturesOf(got.headers['replenish-signature'] as string)
  assert.deepEqual(sig.v1, [hmac(rotated.body.secret, sig.t, got.body), hmac(endpoint.secret, sig.t, got.body)])

  // The old secret's time is up (in the row, rather than waiting a day).
  await testSql(server.store).run("UPDATE webhook_endpoints SET previous_secret_expires_at = '2000-01-01T00:00:00.000Z'")
  dispatcher.refresh()
  // The refresh reads the endpoint in the background: a delivery posted before it has landed may
  // still carry both secrets. Events are made until one carries the new secret alone.
  for (let n = 2; ; n++) {
    await makeEvents(server, 1)
    const later = (await rx.waitFor(n))[n - 1]!
    const sig = signaturesOf(later.headers['replenish-signature'] as string)
    if (sig.v1.length === 1) {
      assert.deepEqual(sig.v1, [hmac(rotated.body.secret, sig.t, later.body)])
      break
    }
    assert.deepEqual(sig.v1, [hmac(rotated.body.secret, sig.t, later.body), hmac(endpoint.secret, sig.t, later.body)])
    assert.ok(n < 100, 'the refresh never took the expired secret out')
  }
})

test('a redirect is not followed: it is a failed attempt naming the Location', async (t) => {
  const server = await startTestServer(t)
  const elsewhere = await startReceiver(t)
  const rx = await startReceiver(t, (_req, res) => {
    res.writeHead(307, { location: elsewhere.url })
    res.end()
  })
  const endpoint = await registerEndpoint(server, rx.url)
  startDispatcher(server, { retryBaseSeconds: 60 })
  await makeEvents(server, 1)
  await rx.waitFor(1)
  const [delivery] = await deliveriesWhen(server, endpoint.id, 'the attempt recorded', (l) => l[0]?.attempts.length === 1)
  assert.equal(delivery.state, 'pending')
  assert.equal(delivery.attempts[0].status_code, 307)
  assert.equal(delivery.attempts[0].error, `the receiver answered 307; redirects are not followed (Location: ${elsewhere.url})`)
  assert.ok(Date.parse(delivery.next_attempt_at) - Date.now() > 40_000)
  assert.equal(elsewhere.received.length, 0)
})

test('at most 1 KiB of an answer is kept; no answer within the time-out is a failed attempt with no status', async (t) => {
  const server = await startTestServer(t)
  const big = await startReceiver(t, (_req, res) => {
    res.statusCode = 500
    res.end('é'.repeat(3000))
  })
  const silent = await startReceiver(t, () => {})
  const bigEndpoint = await registerEndpoint(server, big.url)
  const silentEndpoint = await registerEndpoint(server, silent.url)
  startDispatcher(server, { retryBaseSeconds: 60, timeoutMs: 300 })
  await makeEvents(server, 1)
  const recorded = (l: any[]): boolean => l[0]?.attempts.length === 1
  const [kept] = await deliveriesWhen(server, bigEndpoint.id, 'the 500 recorded', recorded)
  assert.equal(kept.attempts[0].response_body, 'é'.repeat(512))
  const [timedOut] = await deliveriesWhen(server, silentEndpoint.id, 'the time-out recorded', recorded)
  assert.deepEqual([timedOut.attempts[0].status_code, timedOut.attempts[0].error], [null, 'no answer within 0.3 s'])
  assert.equal(timedOut.state, 'pending')
})

test('a delivery not accepted within the retry window is failed, and counted so', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = 500
    res.end()
  })
  const endpoint = await registerEndpoint(server, rx.url)
  // A 2 s window: the first retry (1 s) falls inside it, the second (6 s later) would not.
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0.5, retryWindowMs: 2_000 })
  await makeEvents(server, 1)
  await rx.waitFor(2)
  const [delivery] = await deliveriesWhen(server, endpoint.id, 'the delivery failed', (l) => l[0]?.state === 'failed')
  assert.equal(delivery.state, 'failed')
  assert.equal(delivery.attempt_count, 2)
  assert.equal(delivery.next_attempt_at, null)
  assert.deepEqual(await server.store.deliveries.stats(), [{ endpoint_id: endpoint.id, pending: 0, oldest_pending_ms: null, delivered_total: 0, failed_total: 1 }])
})

test('pending deliveries survive a stop: a new dispatcher on the same store sends every one', async (t) => {
  const server = await startTestServer(t)
  let up = false
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = up ? 200 : 500
    res.end()
  })
  const endpoint = await registerEndpoint(server, rx.url)
  const first = startDispatcher(server, { retryBaseSeconds: 1, random: () => 0 })
  await makeEvents(server, 5)
  await rx.waitFor(5)
  await first.stop()
  up = true
  startDispatcher(server, { retryBaseSeconds: 1 })
  await deliveriesWhen(server, endpoint.id, 'every delivery delivered', (l) => l.length === 5 && l.every((d) => d.state === 'delivered'))
  const events = (await server.request('GET', `${A}/events`, { key: ADMIN_TOKEN })).body.events.map((e: any) => String(e.id))
  const delivered = new Set(rx.received.filter((_r, i) => i >= 5).map((r) => r.headers['replenish-event-id']))
  assert.deepEqual([...delivered].sort(), events.sort())
})

// The read answers that something is due (the worker goes on to fetch it), or that nothing is
// (it goes to sleep): either way it must tell the stop it is idle. Each once waited for ever.
for (const [due, events] of [['something', 3], ['nothing', 0]] as const) {
  test(`a stop while the worker reads what is due ends once that read returns (it does not wait for ever): ${due} due`, async (t) => {
    const server = await startTestServer(t)
    const rx = await startReceiver(t)
    await registerEndpoint(server, rx.url)
    await makeEvents(server, events)
    // The worker's first look for due deliveries is held until the stop has begun.
    let release = (): void => {}
    const gate = new Promise<void>((resolve) => (release = resolve))
    let reading = (): void => {}
    const read = new Promise<void>((resolve) => (reading = resolve))
    const store = Object.create(server.store) as typeof server.store
    const deliveries = Object.create(server.store.deliveries) as typeof server.store.deliveries
    // The store's repositories are frozen: the wrapper shadows them rather than assigning.
    Object.defineProperty(deliveries, 'nextDueMs', {
      value: async (id: number) => {
        reading()
        await gate
        return server.store.deliveries.nextDueMs(id)
      },
    })
    Object.defineProperty(store, 'deliveries', { value: deliveries })
    const dispatcher = webhookDispatcher({ store, retryBaseSeconds: 1, log: (e) => server.errors.push(e), pollMs: 20 })
    dispatcher.start()
    await read
    let stopped = false
    const stopping = dispatcher.stop(50).then(() => (stopped = true))
    await sleep(100)
    release()
    await until('the stop to end', () => stopped)
    await stopping
    assert.equal(rx.received.length, 0, 'nothing was posted after the stop')
  })
}

test('while the pacer holds deliveries back nothing is posted; once it lets go, everything is', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  await registerEndpoint(server, rx.url)
  let held = true
  startDispatcher(server, { pacer: { delay: () => (held ? 20 : 0), busy: false, stop() {} } })
  await makeEvents(server, 5)
  await sleep(300)
  assert.equal(rx.received.length, 0)
  held = false
  await rx.waitFor(5)
})
