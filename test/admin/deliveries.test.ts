/**
 * The delivery log and replay (issue 17, C11): `GET /webhook_endpoints/:id/deliveries` with each
 * delivery's attempts, `POST /deliveries/:id/redeliver` (a new attempt now, 200 with the
 * delivery), and the webhook lines of /metrics.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, startTestServer, type TestServer } from '../helpers/server.ts'
import { makeEvents, registerEndpoint, sleep, startDispatcher, startReceiver } from '../helpers/webhooks.ts'
import { until } from '../helpers/wait.ts'
import { testSql } from '../helpers/rows.ts'
import { webhookMetricsText } from '../../src/processing/webhooks/metrics.ts'
import { lintPromFamilies, parsePromText } from '../helpers/prom-text.ts'

/** `name{labels}` → value, from text that must parse and lint clean (the Prometheus format's rules). */
function parsePrometheus(text: string): Map<string, number> {
  const families = parsePromText(text)
  assert.deepEqual(lintPromFamilies(families), [])
  const out = new Map<string, number>()
  for (const f of families) for (const s of f.samples) out.set(`${s.name}{${Object.entries(s.labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`, s.value)
  return out
}

const A = '/admin/api/v1'
const admin = (server: TestServer, method: string, path: string) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN })
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }

/** The endpoint's deliveries once `done` holds for them (a result is written after the receiver answered). */
async function settled(server: TestServer, endpointId: number, done: (d: any[]) => boolean): Promise<any[]> {
  let list: any[] = []
  await until('the deliveries to settle', async () => done((list = (await admin(server, 'GET', `/webhook_endpoints/${endpointId}/deliveries?limit=100`)).body.deliveries)))
  return list
}

test('the delivery log: keyset pages, each delivery with its attempts; state filter strict; 404 for an unknown or deleted endpoint', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = (await registerEndpoint(server, rx.url)).id
  startDispatcher(server)
  await makeEvents(server, 3)
  const all = await settled(server, endpoint, (d) => d.length === 3 && d.every((x) => x.state === 'delivered'))
  // C3's keys in C3's order, with event_type, attempt_count and delivered_at beside them.
  assert.deepEqual(Object.keys(all[0]), ['id', 'event_id', 'webhook_endpoint_id', 'event_type', 'state', 'attempt_count', 'next_attempt_at', 'delivered_at', 'attempts', 'created_at', 'updated_at'])
  assert.deepEqual(Object.keys(all[0].attempts[0]), ['status_code', 'duration_ms', 'error', 'created_at', 'response_body', 'redelivery'])
  const events = (await admin(server, 'GET', '/events')).body.events
  assert.deepEqual(all.map((d) => [d.webhook_endpoint_id, d.event_id, d.event_type]), events.map((e: any) => [endpoint, e.id, e.type]))

  const page1 = await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries?limit=2`)
  assert.deepEqual(page1.body.deliveries.map((d: any) => d.id), [all[0].id, all[1].id])
  assert.equal(page1.body.next_after, all[1].id)
  const page2 = await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries?limit=2&after=${page1.body.next_after}`)
  assert.deepEqual(page2.body, { deliveries: [all[2]], next_after: null })
  assert.deepEqual((await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries?state=pending`)).body, { deliveries: [], next_after: null })
  assert.equal((await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries?state=delivered`)).body.deliveries.length, 3)
  for (const state of ['bogus', 'canceled']) {
    const bad = await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries?state=${state}`)
    assert.deepEqual([bad.status, bad.body], [422, { state: ['is not included in the list'] }])
  }
  assert.deepEqual(await admin(server, 'GET', `/deliveries/${all[0].id}`).then((r) => r.body), all[0])

  assert.deepEqual((await admin(server, 'GET', '/webhook_endpoints/999/deliveries')).body, NOT_FOUND)
  await admin(server, 'DELETE', `/webhook_endpoints/${endpoint}`)
  assert.equal((await admin(server, 'GET', `/webhook_endpoints/${endpoint}/deliveries`)).status, 404)
  assert.equal((await admin(server, 'GET', `/deliveries/${all[0].id}`)).status, 404)
  assert.equal((await admin(server, 'POST', `/deliveries/${all[0].id}/redeliver`)).status, 404)
})

test('redeliver: a new attempt now, 200 with the delivery; a failed delivery that now gets a 2xx is delivered', async (t) => {
  const server = await startTestServer(t)
  let status = 500
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = status
    res.end(String(status))
  })
  const endpoint = (await registerEndpoint(server, rx.url)).id
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0.5, retryWindowMs: 500 })
  await makeEvents(server, 1)
  const [failed] = await settled(server, endpoint, (d) => d[0]?.state === 'failed')
  assert.equal(failed.attempt_count, 1)

  const again = await admin(server, 'POST', `/deliveries/${failed.id}/redeliver`)
  assert.equal(again.status, 200)
  assert.equal(again.body.state, 'failed')
  assert.deepEqual(again.body.attempts.map((a: any) => [a.status_code, a.redelivery]), [[500, false], [500, true]])
  assert.equal(rx.received.length, 2)
  assert.equal(rx.received[1]!.body, rx.received[0]!.body)

  status = 200
  const ok = await admin(server, 'POST', `/deliveries/${failed.id}/redeliver`)
  assert.equal(ok.status, 200)
  assert.equal(ok.body.state, 'delivered')
  assert.equal(ok.body.attempt_count, 3)
  assert.ok(Date.parse(ok.body.delivered_at) >= Date.parse(ok.body.attempts[2].created_at))
  assert.deepEqual(ok.body, (await admin(server, 'GET', `/deliveries/${failed.id}`)).body)
  // A delivered one can be sent again too (a shop that lost it): still delivered, one more attempt.
  const twice = await admin(server, 'POST', `/deliveries/${failed.id}/redeliver`)
  assert.deepEqual([twice.body.state, twice.body.attempt_count], ['delivered', 4])
  assert.deepEqual(await server.store.deliveries.stats(), [{ endpoint_id: endpoint, pending: 0, oldest_pending_ms: null, delivered_total: 1, failed_total: 1 }])

  assert.deepEqual((await admin(server, 'POST', '/deliveries/999/redeliver')).body, NOT_FOUND)
  // Events go with their deliveries (retention); a delivery whose event vanished meanwhile is this.
  await testSql(server.store).run('DELETE FROM events')
  const pruned = await admin(server, 'POST', `/deliveries/${failed.id}/redeliver`)
  assert.equal(pruned.status, 422)
  assert.match(pruned.body.error, /no longer kept/)
})

test('/metrics: pending per endpoint and the oldest one\'s age while a receiver is down (/readyz stays ready), totals once it is back', async (t) => {
  const server = await startTestServer(t)
  let up = false
  const rx = await startReceiver(t, (_req, res) => {
    res.statusCode = up ? 204 : 500
    res.end()
  })
  const endpoint = (await registerEndpoint(server, rx.url)).id
  startDispatcher(server, { retryBaseSeconds: 1, random: () => 0 })
  const before = Date.now()
  await makeEvents(server, 3)
  await rx.waitFor(3)
  await sleep(300)
  const at = Date.now()
  const down = parsePrometheus(await webhookMetricsText(server.store, at))
  const label = `endpoint_id="${endpoint}"`
  assert.equal(down.get(`replenish_webhook_deliveries_pending{${label}}`), 3)
  // At least the 300 ms waited; at most the time since before the events were made (how long that
  // is depends on how busy the machine is).
  const age = down.get(`replenish_webhook_oldest_pending_delivery_age_seconds{${label}}`) as number
  assert.ok(age >= 0.3 && age <= (at - before) / 1000 + 0.001, `age ${age}`)
  assert.equal((await server.request('GET', '/readyz')).status, 200)

  up = true
  await settled(server, endpoint, (d) => d.every((x) => x.state === 'delivered'))
  const back = parsePrometheus(await webhookMetricsText(server.store, Date.now()))
  assert.equal(back.get(`replenish_webhook_deliveries_pending{${label}}`), 0)
  assert.equal(back.get(`replenish_webhook_oldest_pending_delivery_age_seconds{${label}}`), 0)
  assert.equal(back.get(`replenish_webhook_deliveries_total{${label},state="delivered"}`), 3)
  assert.equal(back.get(`replenish_webhook_deliveries_total{${label},state="failed"}`), 0)
})
