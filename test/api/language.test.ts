import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedPayment, seedSubscribable, seedUser, startTestServer, type TestResponse } from '../helpers/server.ts'
import { MESSAGES } from '../../src/domain/messages.ts'

/** C4: Accept-Language picks en (default), es, fr or de; keys and structure never change with the language. */
test('the same refusals in every language: identical keys and shapes, translated messages, negotiated with q-values', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15', REPLENISH_MAX_SUCCESSIVE_SKIPS: '1', REPLENISH_MAX_TOTAL_SKIPS: '1' })
  const alice = await seedUser(server.store)
  const bob = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const closed = await seedSubscribable(server.store, { subscribable: false })
  const bobsPayment = await seedPayment(server.store, bob.id)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const paused = await createSubscription(server, alice.key)
  await server.request('POST', `/api/v1/subscriptions/${paused.id}/pause`, { key: alice.key })
  const canceled = await createSubscription(server, alice.key)
  await server.request('POST', `/api/v1/subscriptions/${canceled.id}/cancel`, { key: alice.key })
  const skipped = await createSubscription(server, alice.key)
  await server.request('POST', `/api/v1/subscriptions/${skipped.id}/skip`, { key: alice.key })

  const refusals: [string, string, unknown][] = [
    ['POST', '/api/v1/subscriptions', { subscription: {
      interval_length: -1, interval_units: 'fortnight', currency: 'XXY', actionable_date: '2026-01-01', end_date: '2026-02-30',
      shipping_address_attributes: { firstname: 'A', country_iso: 'USA' },
      line_items_attributes: [{ subscribable_id: closed, quantity: 0 }],
    } }],
    ['POST', '/api/v1/subscriptions', { subscription: { interval_length: 1.5, end_date: '2026-01-15' } }],
    ['POST', '/api/v1/subscriptions', { subscription: { interval_length: 'abc' } }],
    ['POST', '/api/v1/subscriptions', { subscription: { interval_length: 200 } }],
    ['POST', '/api/v1/subscriptions', { subscription: { interval_length: 1, payment_source_id: bobsPayment.sourceId } }],
    ['PATCH', `/api/v1/subscriptions/${sub.id}`, { subscription: { actionable_date: '2026-01-14', billing_address_attributes: { zipcode: '1' } } }],
    ['PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { subscription_line_item: { quantity: 10_000 } }],
    ['POST', `/api/v1/subscriptions/${sub.id}/line_items`, { subscription_line_item: { subscribable_id: closed, quantity: 'x' } }],
    ['POST', `/api/v1/subscriptions/${paused.id}/skip`, undefined],
    ['POST', `/api/v1/subscriptions/${canceled.id}/skip`, undefined],
    ['POST', `/api/v1/subscriptions/${canceled.id}/pause`, undefined],
    ['POST', `/api/v1/subscriptions/${canceled.id}/resume`, undefined],
    ['POST', `/api/v1/subscriptions/${sub.id}/pause`, { subscription: { actionable_date: 'tomorrow' } }],
    ['POST', `/api/v1/subscriptions/${skipped.id}/skip`, undefined],
  ]
  const ask = (method: string, path: string, json: unknown, language: string | undefined): Promise<TestResponse> =>
    server.request(method, path, { key: alice.key, json, headers: language === undefined ? {} : { 'accept-language': language } })
  const shape = (body: Record<string, string[]>) => Object.entries(body).map(([k, v]) => [k, v.length])

  let messagesSeen = 0
  for (const [method, path, json] of refusals) {
    const label = `${method} ${path} ${JSON.stringify(json)}`
    const en = await ask(method, path, json, undefined)
    assert.equal(en.status, 422, label)
    assert.deepEqual((await ask(method, path, json, 'en-GB')).body, en.body, label)
    assert.deepEqual((await ask(method, path, json, 'pt-BR, x-klingon')).body, en.body, `${label}: unknown → en`)
    const bodies: Record<string, Record<string, string[]>> = { en: en.body }
    for (const language of ['es', 'fr', 'de']) {
      const res = await ask(method, path, json, language)
      assert.equal(res.status, 422, label)
      assert.deepEqual(shape(res.body), shape(en.body), `${label}: ${language} has the same keys, in the same order`)
      bodies[language] = res.body
    }
    // Every English message is translated (no English left in another language).
    for (const [field, messages] of Object.entries(en.body as Record<string, string[]>)) {
      messages.forEach((message, i) => {
        messagesSeen++
        for (const language of ['es', 'fr', 'de']) assert.notEqual(bodies[language]?.[field]?.[i], message, `${label}: ${field} in ${language}`)
      })
    }
    assert.deepEqual((await ask(method, path, json, 'es-MX')).body, bodies['es'], `${label}: es-MX → es`)
    assert.deepEqual((await ask(method, path, json, 'fr;q=0.3, de;q=0.9, en;q=0.1')).body, bodies['de'], `${label}: q-values`)
    assert.deepEqual((await ask(method, path, json, 'de;q=0, FR-ca')).body, bodies['fr'], `${label}: q=0 refuses`)
  }
  assert.ok(messagesSeen >= 25, `${messagesSeen} messages compared`)
  t.diagnostic(`${refusals.length} refusals, ${messagesSeen} messages compared in 4 languages`)
})

test('exact translations of the lifecycle refusals', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  const sub = await createSubscription(server, alice.key)
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key })
  for (const language of ['en', 'es', 'fr', 'de'] as const) {
    const skip = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key, headers: { 'accept-language': language } })
    assert.deepEqual([skip.status, skip.body], [422, { state: [MESSAGES.cannot_skip_ended[language]] }])
    const pause = await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: alice.key, headers: { 'accept-language': language } })
    assert.deepEqual([pause.status, pause.body], [422, { paused: [MESSAGES.cannot_pause[language]] }])
  }
  const es = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key, headers: { 'accept-language': 'es-MX,es;q=0.9' } })
  assert.deepEqual(es.body, { state: ['no se puede omitir una suscripción cancelada o inactiva'] })
})

test('fixed-text errors (401, 404, Idempotency-Key, missing param) keep the contract wording in every language', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  const de = { 'accept-language': 'de' }
  const none = await server.request('GET', '/api/v1/subscriptions', { headers: de })
  assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an API key.' }])
  const missing = await server.request('GET', '/api/v1/subscriptions/999', { key: alice.key, headers: de })
  assert.deepEqual([missing.status, missing.body], [404, { error: 'The resource you were looking for could not be found.' }])
  const long = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, headers: { ...de, 'idempotency-key': 'k'.repeat(256) }, json: { subscription: { interval_length: 1 } } })
  assert.deepEqual([long.status, long.body], [422, { error: 'Idempotency-Key is too long (maximum is 255 characters)' }])
  const param = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, headers: de, form: 'x=1' })
  const text = 'param is missing or the value is empty: subscription'
  assert.deepEqual([param.status, param.body], [422, { error: text, exception: text, missing_param: 'subscription' }])
})
