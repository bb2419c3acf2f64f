import { DatabaseSync } from 'node:sqlite'

/**
 * What the benches do with webhooks (issue 17) from the outside, as a shop would: register and
 * delete an endpoint through the admin API, read the backlog from /metrics, and ask the receiver
 * (bench/lib/receiver.mjs) what it got.
 */

/** The endpoint's id; it gets every event type (`*`) and posts to the receiver's /hook. */
export async function registerEndpoint(appUrl, adminToken, receiverUrl) {
  const res = await fetch(`${appUrl}/admin/api/v1/webhook_endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ webhook_endpoint: { url: `${receiverUrl}/hook`, events: ['*'], description: 'bench receiver' } }),
  })
  const body = await res.json()
  if (res.status !== 201) throw new Error(`registering the webhook endpoint answered ${res.status}: ${JSON.stringify(body)}`)
  return body.id
}

export async function deleteEndpoint(appUrl, adminToken, id) {
  const res = await fetch(`${appUrl}/admin/api/v1/webhook_endpoints/${id}`, { method: 'DELETE', headers: { authorization: `Bearer ${adminToken}` } })
  await res.arrayBuffer()
  if (res.status !== 200) throw new Error(`deleting webhook endpoint ${id} answered ${res.status}`)
}

/** Pending deliveries and delivered/failed totals of one endpoint, from /metrics. */
export async function endpointMetrics(appUrl, adminToken, id) {
  const res = await fetch(`${appUrl}/metrics`, { headers: { authorization: `Bearer ${adminToken}` } })
  const text = await res.text()
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`)
  const value = (name, extra = '') => {
    const m = new RegExp(`^${name}\\{endpoint_id="${id}"${extra}\\} (\\S+)$`, 'm').exec(text)
    if (!m) throw new Error(`/metrics has no ${name} for endpoint ${id}`)
    return Number(m[1])
  }
  return {
    pending: value('replenish_webhook_deliveries_pending'),
    delivered: value('replenish_webhook_deliveries_total', ',state="delivered"'),
    failed: value('replenish_webhook_deliveries_total', ',state="failed"'),
  }
}

/** What the receiver got; `light`: the counts only, without sorting every lag (cheap to ask often). */
export async function receiverStats(receiverUrl, light = false) {
  const res = await fetch(`${receiverUrl}/stats${light ? '?light=1' : ''}`)
  if (res.status !== 200) throw new Error(`the receiver's /stats answered ${res.status}`)
  return res.json()
}

export async function resetReceiver(receiverUrl) {
  const res = await fetch(`${receiverUrl}/reset`, { method: 'POST' })
  await res.arrayBuffer()
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Waits until the receiver holds at least `expected` distinct events and then until the endpoint
 * has nothing pending; resolves with the time (performance.now()) pending was first seen at 0,
 * the receiver's stats and the endpoint's metrics then. The receiver is asked first and often (it
 * costs replenish nothing); /metrics, which counts the backlog in the database, only once the
 * receiver has everything. Fails after `limitMs`, or at once if any delivery failed for good or
 * arrived unsigned.
 */
export async function drain({ appUrl, adminToken, endpointId, receiverUrl, expected, limitMs, onProgress }) {
  const until = performance.now() + limitMs
  let told = performance.now()
  for (;;) {
    const got = await receiverStats(receiverUrl)
    if (got.unsigned > 0) throw new Error(`the receiver got ${got.unsigned} unsigned requests`)
    if (got.distinct >= expected) break
    if (performance.now() > until) throw new Error(`the receiver got ${got.distinct} of ${expected} events within ${limitMs / 1000} s`)
    if (onProgress && performance.now() - told > 5000) {
      onProgress(got.distinct)
      told = performance.now()
    }
    await sleep(50)
  }
  for (;;) {
    const m = await endpointMetrics(appUrl, adminToken, endpointId)
    const at = performance.now()
    if (m.failed > 0) throw new Error(`${m.failed} webhook deliveries failed for good; the receiver answers 200 to every one`)
    if (m.pending === 0) return { at, receiver: await receiverStats(receiverUrl), metrics: m }
    if (at > until) throw new Error(`${m.pending} deliveries still pending after ${limitMs / 1000} s`)
    await sleep(50)
  }
}

/** The outbox as stored, by state, and attempts beyond one per delivery (retries and repeats). */
export function countDeliveries(file) {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const out = { pending: 0, delivered: 0, failed: 0, canceled: 0, extraAttempts: 0 }
    for (const r of db.prepare('SELECT state, count(*) AS n, sum(max(attempt_count - 1, 0)) AS extra FROM webhook_deliveries GROUP BY state').all()) {
      out[r.state] = r.n
      out.extraAttempts += r.extra
    }
    return out
  } finally {
    db.close()
  }
}
