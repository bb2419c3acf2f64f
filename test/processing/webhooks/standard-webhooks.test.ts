/**
 * Standard Webhooks (issue 29, item 4): every delivery also carries `webhook-id`,
 * `webhook-timestamp` and `webhook-signature`, checked here with the `standardwebhooks` package
 * (the specification's own JavaScript library, not code of ours) on real deliveries: scheduled
 * ones, a redelivery, both secrets during a rotation, and an endpoint whose secret predates the
 * base64 format (docs/decisions.md, "Standard Webhooks").
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingHttpHeaders } from 'node:http'
import { Webhook, WebhookVerificationError } from 'standardwebhooks'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer } from '../../helpers/server.ts'
import { registerEndpoint, startDispatcher, startReceiver, type Received } from '../../helpers/webhooks.ts'
import { testSql } from '../../helpers/rows.ts'

const A = '/admin/api/v1'

/** The request's headers as the library takes them (single values). */
const headersOf = (r: Received): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const [k, v] of Object.entries(r.headers as IncomingHttpHeaders)) if (typeof v === 'string') out[k] = v
  return out
}

const verifies = (secret: string, r: Received): boolean => {
  try {
    new Webhook(secret).verify(r.body, headersOf(r))
    return true
  } catch (err) {
    if (err instanceof WebhookVerificationError) return false
    throw err
  }
}

test('a delivery verifies with the standardwebhooks library and the endpoint\'s secret as shown; webhook-id is the event id', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  startDispatcher(server)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  const [got] = await rx.waitFor(1) as [Received]

  const event = new Webhook(endpoint.secret).verify(got.body, headersOf(got)) as { id: number; type: string }
  assert.equal(event.type, 'subscription.created')
  assert.equal(got.headers['webhook-id'], String(event.id))
  assert.equal(got.headers['webhook-id'], got.headers['replenish-event-id'])
  assert.equal(got.headers['webhook-timestamp'], /^t=(\d+),/.exec(got.headers['replenish-signature'] as string)?.[1], 'one time for both schemes')
  assert.match(got.headers['webhook-signature'] as string, /^v1,[A-Za-z0-9+/]{43}=$/)

  assert.equal(verifies(endpoint.secret, { ...got, body: got.body.replace('"state":"active"', '"state":"canceled"') }), false, 'a tampered body')
  assert.equal(verifies(`whsec_${Buffer.alloc(32, 7).toString('base64')}`, got), false, 'another secret')
  assert.equal(verifies(endpoint.secret, { ...got, headers: { ...got.headers, 'webhook-id': String(event.id + 1) } }), false, 'another id')
})

test('after rotate_secret webhook-signature has two v1 entries, the new secret\'s first; either secret verifies; a redelivery verifies too', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  const rotated = (await server.request('POST', `${A}/webhook_endpoints/${endpoint.id}/rotate_secret`, { key: ADMIN_TOKEN })).body.secret as string
  startDispatcher(server)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  const [got] = await rx.waitFor(1) as [Received]

  const signatures = (got.headers['webhook-signature'] as string).split(' ')
  assert.equal(signatures.length, 2)
  const only = (secret: string): Received => ({ ...got, headers: { ...got.headers, 'webhook-signature': new Webhook(secret).sign(String(got.headers['webhook-id']), new Date(Number(got.headers['webhook-timestamp']) * 1000), got.body) } })
  assert.deepEqual(signatures, [only(rotated).headers['webhook-signature'], only(endpoint.secret).headers['webhook-signature']], 'new first, then old')
  assert.equal(verifies(rotated, got), true, 'the new secret')
  assert.equal(verifies(endpoint.secret, got), true, 'the old secret')

  const [delivery] = (await server.request('GET', `${A}/webhook_endpoints/${endpoint.id}/deliveries`, { key: ADMIN_TOKEN })).body.deliveries
  assert.equal((await server.request('POST', `${A}/deliveries/${delivery.id}/redeliver`, { key: ADMIN_TOKEN })).status, 200)
  const again = (await rx.waitFor(2))[1] as Received
  assert.equal(again.body, got.body)
  assert.equal(verifies(rotated, again), true, 'a redelivery is signed the same way')
})

test('a secret made before the base64 format signs with its decoded bytes: the library verifies with its base64 form, and cannot read it as it is', async (t) => {
  const server = await startTestServer(t)
  const rx = await startReceiver(t)
  const endpoint = await registerEndpoint(server, rx.url)
  // A secret as replenish made them before issue 29: base64url, no padding (this one has a - and a _).
  const bytes = Buffer.from('fb'.repeat(31) + 'ff', 'hex')
  const legacy = `whsec_${bytes.toString('base64url')}`
  assert.match(legacy, /[-_]/)
  await testSql(server.store).run('UPDATE webhook_endpoints SET secret = ? WHERE id = ?', legacy, endpoint.id)
  startDispatcher(server)
  const user = await seedUser(server.store)
  await createSubscription(server, user.key)
  const [got] = await rx.waitFor(1) as [Received]

  assert.throws(() => new Webhook(legacy), /incorrect characters/, 'the library reads standard base64 only')
  assert.equal(verifies(`whsec_${bytes.toString('base64')}`, got), true, 'the same bytes in base64 (docs/webhooks.md shows the conversion)')
})
