/**
 * C18 dry runs, route by route: every write of the customer API and of the admin API, as the route
 * tables list them, sent first with `Replenish-Dry-Run: 1` and then for real. The dry run must
 * answer what the real request then answers (status and body; times and fresh secrets aside),
 * say `Replenish-Dry-Run: 1`, and leave every table and the event feed as they were; the real
 * request must change something (or the sample proves nothing). A write route added to either
 * table without a sample here fails the first test.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { customerRoutes } from '../../src/api/v1/routes.ts'
import { adminRoutes } from '../../src/admin/routes.ts'
import { ADMIN_TOKEN, createSubscription, seedPayment, seedSubscribable, seedUser, snapshot, startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts'
import { startReceiver, type Receiver } from '../helpers/webhooks.ts'
import { processAsOf } from '../processing/helpers.ts'
import { postgresOf } from '../helpers/store.ts'
import { openApiDocument } from '../../src/api/openapi/document.ts'

const TODAY = '2026-03-02'
const DRY = { 'replenish-dry-run': '1' }

interface Sample {
  readonly path: string
  /** The admin token unless given (a customer route's sample names its key). */
  readonly key?: string
  readonly json?: unknown
  readonly raw?: string
  readonly headers?: Record<string, string>
  /** Why the dry answer's body cannot be the real one's (the real one did something only it can). */
  readonly bodyDiffers?: string
}

type Samples = Record<string, Sample>

/** What the samples act on: made through the APIs and the processor before the routes run. */
async function fixture(server: TestServer, receiver: Receiver) {
  const admin = async (method: string, path: string, json?: unknown): Promise<any> => {
    const res = await server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path} → ${res.status} ${res.text}`)
    return res.body
  }
  const alice = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store)
  const tea = await seedSubscribable(server.store)
  const pay = await seedPayment(server.store, alice.id)
  const item = (id: number, quantity = 1) => ({ line_items_attributes: [{ subscribable_id: id, quantity }] })
  // One subscription per customer lifecycle route, so that each acts on a subscription it can change.
  const sub = async (attrs: Record<string, unknown> = {}) => (await createSubscription(server, alice.key, { ...item(coffee, 2), ...attrs })).id as number
  const subs = {
    patch: await sub(), skip: await sub(), cancel: await sub(), pause: await sub(), resume: await sub(),
    activate: await sub(), lineItems: await sub(),
    adminPatch: await sub(), adminSkip: await sub(), adminCancel: await sub(), adminPause: await sub(), adminResume: await sub(), adminActivate: await sub(),
  }
  for (const id of [subs.resume, subs.adminResume]) await server.request('POST', `/api/v1/subscriptions/${id}/pause`, { key: alice.key })
  for (const id of [subs.activate, subs.adminActivate]) await server.request('POST', `/api/v1/subscriptions/${id}/cancel`, { key: alice.key })
  const lineItem = (await server.request('GET', `/api/v1/subscriptions/${subs.lineItems}`, { key: alice.key })).body.line_items[0].id as number
  const doomedItem = (await server.request('POST', `/api/v1/subscriptions/${subs.lineItems}/line_items`, { key: alice.key, json: { subscription_line_item: { subscribable_id: tea, quantity: 1 } } })).body.id as number
  // Two installments (one outcome, one bulk outcome), due today.
  const due = [await sub({ actionable_date: TODAY }), await sub({ actionable_date: TODAY })]
  await processAsOf(server, TODAY)
  const installments = (await admin('GET', '/installments')).installments.map((i: any) => i.id as number)
  // A webhook endpoint and one delivery to send again (made by the event of a change after it).
  const endpoint = await admin('POST', '/webhook_endpoints', { webhook_endpoint: { url: receiver.url, events: ['*'] } })
  const doomedEndpoint = await admin('POST', '/webhook_endpoints', { webhook_endpoint: { url: receiver.url, events: ['subscription.skipped'] } })
  await server.request('POST', `/api/v1/subscriptions/${due[0]}/pause`, { key: alice.key })
  const delivery = (await admin('GET', `/webhook_endpoints/${endpoint.id}/deliveries`)).deliveries[0].id as number
  // Rows the deletes and the erasure remove.
  const bob = await admin('POST', '/users', { user: { email: 'bob@example.com' } })
  const carol = await admin('POST', '/users', { user: { email: 'carol@example.com' } })
  // Erased with a subscription of theirs, whose erasure writes events.
  const dave = await admin('POST', '/users', { user: { email: 'dave@example.com' } })
  await admin('POST', '/subscriptions', { subscription: { user_id: dave.id, interval_length: 1, shipping_address_attributes: { firstname: 'Dave', address1: '1 Road', city: 'Leeds', zipcode: 'LS1', country_iso: 'GB' } } })
  const bobsKey = await admin('POST', `/users/${bob.id}/api_keys`)
  const bobsCard = await seedPayment(server.store, bob.id)
  const oldProduct = await seedSubscribable(server.store)
  const token = await admin('POST', '/admin_tokens', { admin_token: { scope: 'read', label: 'old' } })
  return { alice, bob, carol, dave, bobsKey, bobsCard, coffee, tea, pay, subs, lineItem, doomedItem, installments, endpoint, doomedEndpoint, delivery, oldProduct, token }
}

function samples(f: Awaited<ReturnType<typeof fixture>>): Samples {
  const key = f.alice.key
  const s = f.subs
  const A = '/admin/api/v1'
  return {
    'POST /api/v1/subscriptions': { key, path: '/api/v1/subscriptions', json: { subscription: { interval_length: 2, line_items_attributes: [{ subscribable_id: f.tea, quantity: 3 }] } } },
    'PATCH /api/v1/subscriptions/:id': { key, path: `/api/v1/subscriptions/${s.patch}`, json: { subscription: { interval_length: 3, line_items_attributes: [{ subscribable_id: f.tea, quantity: 1 }] } } },
    'POST /api/v1/subscriptions/:id/skip': { key, path: `/api/v1/subscriptions/${s.skip}/skip` },
    'POST /api/v1/subscriptions/:id/cancel': { key, path: `/api/v1/subscriptions/${s.cancel}/cancel` },
    'POST /api/v1/subscriptions/:id/pause': { key, path: `/api/v1/subscriptions/${s.pause}/pause` },
    'POST /api/v1/subscriptions/:id/resume': { key, path: `/api/v1/subscriptions/${s.resume}/resume` },
    'POST /api/v1/subscriptions/:id/activate': { key, path: `/api/v1/subscriptions/${s.activate}/activate` },
    'POST /api/v1/subscriptions/:id/line_items': { key, path: `/api/v1/subscriptions/${s.lineItems}/line_items`, json: { subscription_line_item: { subscribable_id: f.tea, quantity: 4 } } },
    'PATCH /api/v1/line_items/:id': { key, path: `/api/v1/line_items/${f.lineItem}`, json: { subscription_line_item: { quantity: 7 } } },
    'DELETE /api/v1/line_items/:id': { key, path: `/api/v1/line_items/${f.doomedItem}` },

    'POST /admin/api/v1/users': { path: `${A}/users`, json: { user: { email: 'dora@example.com', external_id: 'cus_9' } } },
    'PATCH /admin/api/v1/users/:id': { path: `${A}/users/${f.bob.id}`, json: { user: { email: 'robert@example.com', external_id: 'cus_2' } } },
    'POST /admin/api/v1/users/:id/erase': { path: `${A}/users/${f.dave.id}/erase` },
    'POST /admin/api/v1/users/:id/api_keys': { path: `${A}/users/${f.bob.id}/api_keys` },
    'POST /admin/api/v1/users/:id/portal_sessions': { path: `${A}/users/${f.bob.id}/portal_sessions`, json: { portal_session: { return_url: 'https://shop.example/account' } } },
    'DELETE /admin/api/v1/api_keys/:id': { path: `${A}/api_keys/${f.bobsKey.id}` },
    'POST /admin/api/v1/payment_methods': { path: `${A}/payment_methods`, json: { payment_method: { name: 'SEPA' } } },
    'PATCH /admin/api/v1/payment_methods/:id': { path: `${A}/payment_methods/${f.pay.methodId}`, json: { payment_method: { name: 'Card (old)', active: false } } },
    'POST /admin/api/v1/payment_sources': { path: `${A}/payment_sources`, json: { payment_source: { user_id: f.carol.id, payment_method_id: f.bobsCard.methodId, last_digits: '1111' } } },
    'DELETE /admin/api/v1/payment_sources/:id': { path: `${A}/payment_sources/${f.pay.sourceId}` },
    'POST /admin/api/v1/subscribables': { path: `${A}/subscribables`, json: { subscribable: { sku: 'OATS-1KG', name: 'Oats' } } },
    'PATCH /admin/api/v1/subscribables/:id': { path: `${A}/subscribables/${f.coffee}`, json: { subscribable: { sku: 'COFFEE-2', name: 'Coffee, new blend' } } },
    'DELETE /admin/api/v1/subscribables/:id': { path: `${A}/subscribables/${f.tea}` },
    'POST /admin/api/v1/subscriptions': { path: `${A}/subscriptions`, json: { subscription: { user_id: f.carol.id, interval_length: 1, actionable_date: '2026-01-01', line_items_attributes: [{ subscribable_id: f.coffee, quantity: 1 }] } } },
    'PATCH /admin/api/v1/subscriptions/:id': { path: `${A}/subscriptions/${s.adminPatch}`, json: { subscription: { skip_count: 5, actionable_date: '2026-02-01' } } },
    'POST /admin/api/v1/subscriptions/:id/cancel': { path: `${A}/subscriptions/${s.adminCancel}/cancel` },
    'POST /admin/api/v1/subscriptions/:id/skip': { path: `${A}/subscriptions/${s.adminSkip}/skip` },
    'POST /admin/api/v1/subscriptions/:id/pause': { path: `${A}/subscriptions/${s.adminPause}/pause` },
    'POST /admin/api/v1/subscriptions/:id/resume': { path: `${A}/subscriptions/${s.adminResume}/resume` },
    'POST /admin/api/v1/subscriptions/:id/activate': { path: `${A}/subscriptions/${s.adminActivate}/activate` },
    'POST /admin/api/v1/installments/:id/outcome': { path: `${A}/installments/${f.installments[0]}/outcome`, json: { outcome: { result: 'payment_failed', message: 'Declined' } } },
    // The second entry is refused because of the first: a dry run sees its entries one after another, as the real one does.
    'POST /admin/api/v1/installments/outcomes': { path: `${A}/installments/outcomes`, json: { outcomes: [
      { installment_id: f.installments[1], result: 'fulfilled', order_reference: 'R1' },
      { installment_id: f.installments[1], result: 'failed' },
      { installment_id: 999_999, result: 'fulfilled' },
    ] } },
    'POST /admin/api/v1/webhook_endpoints': { path: `${A}/webhook_endpoints`, json: { webhook_endpoint: { url: 'https://shop.example/hooks', events: ['subscription.created'] } } },
    'DELETE /admin/api/v1/webhook_endpoints/:id': { path: `${A}/webhook_endpoints/${f.doomedEndpoint.id}` },
    'PATCH /admin/api/v1/webhook_endpoints/:id': { path: `${A}/webhook_endpoints/${f.endpoint.id}`, json: { webhook_endpoint: { description: 'the shop', events: ['subscription.created'] } } },
    'POST /admin/api/v1/webhook_endpoints/:id/test': {
      path: `${A}/webhook_endpoints/${f.endpoint.id}/test`,
      bodyDiffers: 'a real test posts to the receiver and answers the delivery with that attempt; a dry one posts nothing and answers the delivery as it would be made',
    },
    'POST /admin/api/v1/webhook_endpoints/:id/rotate_secret': { path: `${A}/webhook_endpoints/${f.endpoint.id}/rotate_secret` },
    'POST /admin/api/v1/deliveries/:id/redeliver': {
      path: `${A}/deliveries/${f.delivery}/redeliver`,
      bodyDiffers: 'a real redelivery posts to the receiver and logs what it answered; a dry one posts nothing and answers the delivery as it stands',
    },
    'POST /admin/api/v1/admin_tokens': { path: `${A}/admin_tokens`, json: { admin_token: { scope: 'read', label: 'reports' } } },
    'DELETE /admin/api/v1/admin_tokens/:id': { path: `${A}/admin_tokens/${f.token.id}` },
    'POST /admin/api/v1/imports': {
      path: `${A}/imports`,
      headers: { 'content-type': 'application/x-ndjson' },
      raw: '{"type":"user","id":900,"email":"imported@example.com","external_id":"C-900","created_at":"2024-03-18T16:40:00.000Z","updated_at":"2024-03-18T16:40:00.000Z"}\n',
    },
  }
}

/** Every write route of both tables, as `METHOD template`. */
function writeRoutes(server: TestServer): string[] {
  return [...customerRoutes(server.app), ...adminRoutes(server.app)].filter(([method]) => method !== 'GET').map(([method, path]) => `${method} ${path}`)
}

const send = (server: TestServer, method: string, sample: Sample, extra: Record<string, string> = {}): Promise<TestResponse> =>
  server.request(method, sample.path, {
    key: sample.key ?? ADMIN_TOKEN,
    headers: { ...sample.headers, ...extra },
    ...(sample.json !== undefined ? { json: sample.json } : {}),
    ...(sample.raw !== undefined ? { raw: sample.raw } : {}),
  })

/** Every table as stored, and the event feed (everything a shop or a receiver could see change). */
async function state(server: TestServer): Promise<string> {
  return JSON.stringify([await snapshot(server.store), await server.store.events.feed(0, 100_000, undefined)])
}

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/
const SECRET = /^(rpl_|rpladm_|whsec_)|\/portal\/sessions\/rplp_/

/** The answer without what differs between any two runs of the same request: the time, and secrets made for it. */
function comparable(value: unknown): unknown {
  if (typeof value === 'string') return TIME.test(value) ? '<time>' : SECRET.test(value) ? '<secret>' : value
  if (Array.isArray(value)) return value.map(comparable)
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, comparable(v)]))
  return value
}

/**
 * PostgreSQL's sequences are not transactional: a dry run that made a row took an id for good.
 * The test hands those ids back before the real request, so that the two answers may be compared
 * whole (docs/decisions.md, "Dry runs": a dry run's ids are not promised to the real request).
 */
async function sequences(server: TestServer): Promise<() => Promise<void>> {
  if (server.store.kind !== 'postgres') return async () => {}
  const { pool } = postgresOf(server.store)
  const { rows } = await pool.query<{ name: string; last: string | null }>(
    'SELECT sequencename AS name, last_value::text AS last FROM pg_sequences WHERE schemaname = current_schema()')
  return async () => {
    for (const r of rows) {
      if (r.last === null) await pool.query('SELECT setval($1::regclass, 1, false)', [r.name])
      else await pool.query('SELECT setval($1::regclass, $2::bigint, true)', [r.name, r.last])
    }
  }
}

async function setUp(t: TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const receiver = await startReceiver(t)
  const f = await fixture(server, receiver)
  return { server, receiver, f, samples: samples(f) }
}

test('every write route of both APIs has a dry-run sample here', async (t) => {
  const { server, samples } = await setUp(t)
  const routes = writeRoutes(server)
  assert.ok(routes.length >= 39, `only ${routes.length} write routes found`)
  assert.deepEqual(routes.filter((r) => samples[r] === undefined), [], 'write routes without a sample: add one to samples()')
  assert.deepEqual(Object.keys(samples).filter((r) => !routes.includes(r)), [], 'samples of routes that no longer exist')
  // And the OpenAPI document says each of them takes the header.
  const paths = openApiDocument['paths'] as Record<string, Record<string, { parameters?: { $ref?: string }[] }>>
  const undocumented = routes.filter((r) => {
    const [method, template] = r.split(' ') as [string, string]
    const operation = paths[template.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()]
    return !operation?.parameters?.some((p) => p.$ref === '#/components/parameters/DryRun')
  })
  assert.deepEqual(undocumented, [], 'write operations whose OpenAPI entry lacks Replenish-Dry-Run')
})

test('each write route: a dry run answers as the real request then does, and changes nothing', { timeout: 240_000 }, async (t) => {
  const { server, receiver, samples } = await setUp(t)
  for (const route of writeRoutes(server)) {
    const sample = samples[route] as Sample
    const method = route.slice(0, route.indexOf(' '))
    const before = await state(server)
    const posted = receiver.received.length
    const giveBackIds = await sequences(server)
    const dry = await send(server, method, sample, DRY)
    assert.equal(dry.headers.get('replenish-dry-run'), '1', `${route}: the dry answer says so`)
    assert.equal(await state(server), before, `${route}: the dry run changed the database (${dry.status} ${dry.text.slice(0, 200)})`)
    assert.equal(receiver.received.length, posted, `${route}: the dry run posted to a webhook receiver`)
    await giveBackIds()
    const real = await send(server, method, sample)
    assert.equal(real.headers.get('replenish-dry-run'), null, `${route}: only a dry answer says it is one`)
    assert.ok(real.status < 300, `${route}: the sample must succeed for real: ${real.status} ${real.text.slice(0, 300)}`)
    assert.equal(dry.status, real.status, `${route}: status`)
    if (sample.bodyDiffers === undefined) assert.deepEqual(comparable(dry.body), comparable(real.body), `${route}: body`)
    assert.notEqual(await state(server), before, `${route}: the real request changed nothing, so the sample proves nothing`)
  }
})

test('refusals: a dry run answers the 404 or 422 the real request gets, with its header', async (t) => {
  const { server, f } = await setUp(t)
  const refused: [string, Sample][] = [
    ['PATCH', { key: f.alice.key, path: `/api/v1/subscriptions/${f.subs.patch}`, json: { subscription: { interval_length: 0, interval_units: 'fortnight' } } }],
    ['POST', { key: f.alice.key, path: `/api/v1/subscriptions/${f.subs.resume}/skip` }],
    ['POST', { path: '/admin/api/v1/users', json: { user: { email: f.bob.email } } }],
    ['POST', { path: `/admin/api/v1/installments/${f.installments[0]}/outcome`, json: { outcome: { result: 'lost' } } }],
    ['POST', { path: '/admin/api/v1/subscriptions/999999/cancel' }],
    ['DELETE', { key: f.alice.key, path: '/api/v1/line_items/999999' }],
  ]
  for (const [method, sample] of refused) {
    const before = await state(server)
    const dry = await send(server, method, sample, DRY)
    const real = await send(server, method, sample)
    assert.ok(real.status === 404 || real.status === 422, `${method} ${sample.path}: ${real.status} ${real.text}`)
    assert.deepEqual([dry.status, dry.body, dry.headers.get('replenish-dry-run')], [real.status, real.body, '1'], `${method} ${sample.path}`)
    assert.equal(await state(server), before)
  }
})

test('Idempotency-Key with a dry run: nothing is stored, and the real request with that key then runs for real', async (t) => {
  const { server, f } = await setUp(t)
  const sample: Sample = { key: f.alice.key, path: `/api/v1/subscriptions/${f.subs.skip}/skip`, headers: { 'idempotency-key': 'skip-once' } }
  const before = await state(server)
  const dry = await send(server, 'POST', sample, DRY)
  assert.equal(dry.status, 200)
  assert.equal(dry.headers.get('idempotent-replayed'), null)
  // A second dry run is not a replay of the first: the first stored nothing.
  const again = await send(server, 'POST', sample, DRY)
  assert.equal(again.headers.get('idempotent-replayed'), null)
  assert.deepEqual(comparable(again.body), comparable(dry.body))
  assert.equal(await state(server), before, 'neither dry run stored the key (or anything else)')
  const real = await send(server, 'POST', sample)
  assert.equal(real.headers.get('idempotent-replayed'), null, 'the real request ran, it was not replayed')
  assert.deepEqual(comparable(real.body), comparable(dry.body))
  // Now the key holds the real answer: a dry run with it answers the replay, as the real one would.
  const replayed = await send(server, 'POST', sample, DRY)
  assert.deepEqual([replayed.status, replayed.headers.get('idempotent-replayed'), replayed.headers.get('replenish-dry-run'), replayed.text], [200, 'true', '1', real.text])
  // A refused dry run stores no refusal either: the same key then works for a valid request.
  const badKey: Sample = { key: f.alice.key, path: `/api/v1/subscriptions/${f.subs.patch}`, json: { subscription: { interval_length: 0 } }, headers: { 'idempotency-key': 'patch-1' } }
  assert.equal((await send(server, 'PATCH', badKey, DRY)).status, 422)
  const fixed = await send(server, 'PATCH', { ...badKey, json: { subscription: { interval_length: 4 } } })
  assert.deepEqual([fixed.status, fixed.body.interval_length], [200, 4])
})

test('Replenish-Dry-Run other than 1 is refused before anything runs; reads ignore it', async (t) => {
  const { server, f } = await setUp(t)
  const before = await state(server)
  for (const value of ['true', '0', 'yes', '', '1, 1']) {
    const res = await server.request('POST', `/api/v1/subscriptions/${f.subs.skip}/skip`, { key: f.alice.key, headers: { 'replenish-dry-run': value } })
    assert.deepEqual([res.status, res.body, res.headers.get('replenish-dry-run')],
      [422, { error: 'Replenish-Dry-Run must be 1 (a dry run), or be left out for a real request.' }, null], `value ${JSON.stringify(value)}`)
  }
  assert.equal(await state(server), before)
  const read = await server.request('GET', `/api/v1/subscriptions/${f.subs.skip}`, { key: f.alice.key, headers: { 'replenish-dry-run': 'true' } })
  assert.deepEqual([read.status, read.headers.get('replenish-dry-run')], [200, null])
})

test('a body refused before any handler runs (400, 415, 413, an import\'s 401) still says Replenish-Dry-Run: 1, as the real refusal then answers', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_MAX_BODY_BYTES: '1024' })
  const alice = await seedUser(server.store)
  const refused: [string, string, string | undefined, Record<string, string>, string][] = [
    ['POST', '/api/v1/subscriptions', alice.key, { 'content-type': 'application/json' }, '{"subscription": '],
    ['POST', '/api/v1/subscriptions', alice.key, { 'content-type': 'text/plain' }, 'interval_length=1'],
    ['POST', '/admin/api/v1/users', ADMIN_TOKEN, { 'content-type': 'application/json' }, JSON.stringify({ user: { email: `${'x'.repeat(2000)}@example.com` } })],
    ['POST', '/admin/api/v1/users', ADMIN_TOKEN, { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&a[b]=2'],
    ['POST', '/admin/api/v1/imports', undefined, { 'content-type': 'application/x-ndjson' }, '{"type":"user","id":1,"email":"a@example.com"}\n'],
  ]
  for (const [method, path, key, headers, raw] of refused) {
    const before = await snapshot(server.store)
    const dry = await server.request(method, path, { key, headers: { ...headers, ...DRY }, raw })
    const real = await server.request(method, path, { key, headers, raw })
    assert.ok(real.status >= 400 && real.status < 500, `${path}: ${real.status}`)
    assert.deepEqual([dry.status, dry.body, dry.headers.get('replenish-dry-run')], [real.status, real.body, '1'], `${path} ${raw.slice(0, 20)}`)
    assert.equal(real.headers.get('replenish-dry-run'), null)
    assert.deepEqual(await snapshot(server.store), before)
  }
})
