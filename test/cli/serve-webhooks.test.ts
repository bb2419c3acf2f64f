/**
 * `serve` runs the webhook dispatcher with the configured retry base (C10:
 * REPLENISH_WEBHOOK_RETRY_BASE_SECONDS), and its /metrics carries the delivery lines.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { startServe, tempDir } from './harness.ts'
import { request } from '../helpers/server.ts'
import { startReceiver } from '../helpers/webhooks.ts'
import { until } from '../helpers/wait.ts'

const ADMIN = 'serve-webhooks-admin-token-0123456789'

test('serve delivers, retrying after REPLENISH_WEBHOOK_RETRY_BASE_SECONDS; /metrics shows the endpoint\'s deliveries', async (t) => {
  const rx = await startReceiver(t, (_req, res, i) => {
    res.statusCode = i === 0 ? 500 : 200
    res.end()
  })
  const serve = await startServe(t, {
    REPLENISH_DB: join(tempDir(t), 'r.db'), REPLENISH_ADMIN_TOKEN: ADMIN, REPLENISH_WEBHOOK_RETRY_BASE_SECONDS: '2', REPLENISH_LOG: 'off',
  })
  const admin = { key: ADMIN }
  const endpoint = await request(serve.url, 'POST', '/admin/api/v1/webhook_endpoints', { ...admin, json: { webhook_endpoint: { url: rx.url, events: ['*'] } } })
  assert.equal(endpoint.status, 201)
  const user = await request(serve.url, 'POST', '/admin/api/v1/users', { ...admin, json: { user: { email: 'w@example.com' } } })
  const key = await request(serve.url, 'POST', `/admin/api/v1/users/${user.body.id}/api_keys`, admin)
  const created = await request(serve.url, 'POST', '/api/v1/subscriptions', { key: key.body.key, json: { subscription: { interval_length: 1 } } })
  assert.equal(created.status, 200, created.text)
  const [first, second] = await rx.waitFor(2)
  const gap = second!.at - first!.at
  // 2 s ± 20 %: the configured base, not the default 10 s (which is 8 s at the least). How late a
  // retry goes out after it is due depends on how busy the machine is: the bound tells the two apart.
  assert.ok(gap >= 1_550 && gap < 8_000, `retry after ${gap} ms`)
  assert.equal(second!.body, first!.body)
  // The 200's result is written a few ms after the receiver answered it.
  const delivered = new RegExp(`^replenish_webhook_deliveries_total\\{endpoint_id="${endpoint.body.id}",state="delivered"\\} 1$`, 'm')
  await until('the delivery counted in /metrics', async () => delivered.test((await request(serve.url, 'GET', '/metrics', admin)).text))
})
