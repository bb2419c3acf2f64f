/**
 * Webhook endpoints (issue 17; C10, C11, C13): registration over the admin API. The secret is
 * shown in the answers of create and rotate_secret only, is kept so that deliveries can sign with
 * it (and with the previous one for 24 h after a rotation), and never reaches a log.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, seedUser, snapshot, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.ts'
import { EVENT_TYPES } from '../../src/domain/events.ts'
import { testSql } from '../helpers/rows.ts'

const A = '/admin/api/v1'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** The Standard Webhooks format: `whsec_` and base64 (with its padding) of 32 bytes. */
const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/
const DAY_MS = 24 * 60 * 60 * 1000
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const HOOK = 'https://shop.example.com/replenish/hooks'

let server: TestServer
before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

const admin = (method: string, path: string, options: RequestOptions = {}) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })

async function create(attrs: Record<string, unknown> = {}): Promise<any> {
  const res = await admin('POST', '/webhook_endpoints', { json: { webhook_endpoint: { url: HOOK, events: ['*'], ...attrs } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** The answer without its secret: what every later read must show. */
function shown(body: any): Record<string, unknown> {
  const { secret: _secret, ...rest } = body
  return rest
}

describe('create', () => {
  test('POST JSON → 201 with the endpoint and a whsec_ secret of 256 random bits, stored as is', async () => {
    const res = await admin('POST', '/webhook_endpoints', {
      json: { webhook_endpoint: { url: HOOK, events: ['installment.created', 'subscription.canceled'], description: 'Orders' } },
    })
    assert.equal(res.status, 201)
    const body = res.body
    assert.match(body.secret, SECRET)
    assert.match(body.created_at, ISO_TIME)
    assert.equal(body.updated_at, body.created_at)
    assert.deepEqual(Object.keys(body), ['id', 'url', 'events', 'description', 'disabled', 'secret', 'created_at', 'updated_at'])
    assert.deepEqual(body, {
      id: body.id, url: HOOK, events: ['installment.created', 'subscription.canceled'], description: 'Orders', disabled: false,
      secret: body.secret, created_at: body.created_at, updated_at: body.created_at,
    })
    assert.equal(Buffer.from(body.secret.slice('whsec_'.length), 'base64').length, 32)
    assert.deepEqual(await server.store.webhooks.secretsOf(body.id), { secret: body.secret, previous_secret: null, previous_secret_expires_at: null })
    const other = await create()
    assert.notEqual(other.secret, body.secret)
  })

  test('a form with events[] registers each type; an unwrapped JSON body is wrapped', async () => {
    const form = await admin('POST', '/webhook_endpoints', {
      form: `webhook_endpoint[url]=${encodeURIComponent(HOOK)}&webhook_endpoint[events][]=installment.created&webhook_endpoint[events][]=installment.failed`,
    })
    assert.equal(form.status, 201, form.text)
    assert.deepEqual(form.body.events, ['installment.created', 'installment.failed'])
    assert.equal(form.body.description, null)
    assert.deepEqual(shown((await admin('GET', `/webhook_endpoints/${form.body.id}`)).body), shown(form.body))
    const unwrapped = await admin('POST', '/webhook_endpoints', { json: { url: HOOK, events: ['*'] } })
    assert.equal(unwrapped.status, 201)
    assert.deepEqual(unwrapped.body.events, ['*'])
  })

  test('plain http and loopback addresses are allowed (C10: self-hosters on a LAN)', async () => {
    for (const url of ['http://127.0.0.1:9000/hook', 'http://localhost/hook', 'http://[::1]:8080/', 'HTTPS://Shop.Example.com']) {
      assert.equal((await create({ url })).url, url)
    }
  })

  test('`*` stands for every type; duplicates are kept once, in the order given; empty form entries are dropped', async () => {
    assert.deepEqual((await create({ events: ['installment.created', '*'] })).events, ['*'])
    assert.deepEqual((await create({ events: ['line_item.deleted', 'installment.created', 'line_item.deleted'] })).events, ['line_item.deleted', 'installment.created'])
    assert.deepEqual((await create({ events: ['', 'subscription.paused'] })).events, ['subscription.paused'])
    assert.deepEqual((await create({ events: [...EVENT_TYPES] })).events, [...EVENT_TYPES])
  })
})

describe('422: nothing is created, the field is named', () => {
  const cases: [string, unknown, Record<string, string[]>][] = [
    ['url missing', { events: ['*'] }, { url: ["can't be blank"] }],
    ['url blank', { url: '  ', events: ['*'] }, { url: ["can't be blank"] }],
    ['url of another scheme', { url: 'ftp://shop.example.com/hook', events: ['*'] }, { url: ['is invalid'] }],
    ['url not absolute', { url: 'shop.example.com/hook', events: ['*'] }, { url: ['is invalid'] }],
    ['url without slashes', { url: 'http:shop.example.com', events: ['*'] }, { url: ['is invalid'] }],
    ['url without a host', { url: 'http://', events: ['*'] }, { url: ['is invalid'] }],
    ['url not a string', { url: { a: 1 }, events: ['*'] }, { url: ['is invalid'] }],
    ['url too long', { url: `https://e.com/${'a'.repeat(2040)}`, events: ['*'] }, { url: ['is too long (maximum is 2048 characters)'] }],
    ['events missing', { url: HOOK }, { events: ["can't be blank"] }],
    ['events empty', { url: HOOK, events: [] }, { events: ["can't be blank"] }],
    ['events not a list', { url: HOOK, events: '*' }, { events: ['is invalid'] }],
    ['an unknown event type', { url: HOOK, events: ['installment.created', 'order.shipped'] }, { events: ['is not included in the list'] }],
    ['an event type that is not a string', { url: HOOK, events: [7] }, { events: ['is not included in the list'] }],
    ['description too long', { url: HOOK, events: ['*'], description: 'd'.repeat(256) }, { description: ['is too long (maximum is 255 characters)'] }],
    ['every field at once', { url: 'mailto:a@b.c', events: ['nope'] }, { url: ['is invalid'], events: ['is not included in the list'] }],
  ]
  for (const [name, attrs, errors] of cases) {
    test(name, async () => {
      const before = await snapshot(server.store)
      const res = await admin('POST', '/webhook_endpoints', { json: { webhook_endpoint: attrs } })
      assert.equal(res.status, 422, res.text)
      assert.deepEqual(res.body, errors)
      assert.equal(await snapshot(server.store), before)
    })
  }

  test('a form with an unknown type among known ones', async () => {
    const res = await admin('POST', '/webhook_endpoints', {
      form: `webhook_endpoint[url]=${encodeURIComponent(HOOK)}&webhook_endpoint[events][]=installment.created&webhook_endpoint[events][]=installment.shipped`,
    })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, { events: ['is not included in the list'] })
  })

  test('no webhook_endpoint root → the Spree missing-param 422', async () => {
    const text = 'param is missing or the value is empty: webhook_endpoint'
    const res = await admin('POST', '/webhook_endpoints', { form: 'url=x' })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, { error: text, exception: text, missing_param: 'webhook_endpoint' })
  })

  test('messages are localised', async () => {
    const res = await admin('POST', '/webhook_endpoints', { json: { webhook_endpoint: { url: 'ftp://x', events: ['nope'] } }, headers: { 'accept-language': 'es' } })
    assert.equal(res.status, 422)
    assert.deepEqual(res.body, { url: ['no es válido'], events: ['no está incluido en la lista'] })
  })
})

describe('reads, rotation and delete', () => {
  test('the secret is in no other answer and in no log line', async () => {
    const made = await create({ description: 'audit' })
    const rotated = await admin('POST', `/webhook_endpoints/${made.id}/rotate_secret`)
    const answers = [
      await admin('GET', `/webhook_endpoints/${made.id}`),
      await admin('GET', '/webhook_endpoints?limit=100'),
      await admin('DELETE', `/webhook_endpoints/${made.id}`),
    ]
    for (const res of answers) {
      assert.equal(res.status, 200)
      assert.equal(res.text.includes('whsec_'), false, res.text)
    }
    assert.deepEqual(answers[0]?.body, shown(rotated.body))
    assert.deepEqual(answers[2]?.body, shown(rotated.body))
    const logged = JSON.stringify([server.log, server.errors])
    assert.ok(server.log.some((e) => e.status === 201), 'the create was logged')
    assert.equal(logged.includes(made.secret), false)
    assert.equal(logged.includes(rotated.body.secret), false)
    assert.equal(logged.includes('whsec_'), false)
  })

  test('rotate_secret → 200 with a new secret; the old one is kept, valid for 24 h after the rotation', async () => {
    const made = await create()
    const res = await admin('POST', `/webhook_endpoints/${made.id}/rotate_secret`)
    assert.equal(res.status, 200)
    const rotated = res.body
    assert.match(rotated.secret, SECRET)
    assert.notEqual(rotated.secret, made.secret)
    assert.deepEqual(shown(rotated), { ...shown(made), updated_at: rotated.updated_at })
    assert.ok(rotated.updated_at >= made.updated_at)
    const expires = new Date(Date.parse(rotated.updated_at) + DAY_MS).toISOString()
    assert.deepEqual(await server.store.webhooks.secretsOf(made.id), { secret: rotated.secret, previous_secret: made.secret, previous_secret_expires_at: expires })

    // A second rotation keeps the one it replaces: the first secret stops signing at once.
    const again = (await admin('POST', `/webhook_endpoints/${made.id}/rotate_secret`)).body
    const kept = await server.store.webhooks.secretsOf(made.id)
    assert.equal(kept?.secret, again.secret)
    assert.equal(kept?.previous_secret, rotated.secret)
  })

  test('DELETE → 200 with the endpoint; then it is gone: 404 everywhere, out of the list, its secrets blanked', async () => {
    const made = await create({ events: ['installment.created'] })
    const rotated = (await admin('POST', `/webhook_endpoints/${made.id}/rotate_secret`)).body
    const res = await admin('DELETE', `/webhook_endpoints/${made.id}`)
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, shown(rotated))
    for (const [method, path] of [['GET', ''], ['DELETE', ''], ['POST', '/rotate_secret']] as const) {
      const after = await admin(method, `/webhook_endpoints/${made.id}${path}`)
      assert.equal(after.status, 404, `${method} ${path}`)
      assert.deepEqual(after.body, NOT_FOUND)
    }
    const list = await admin('GET', `/webhook_endpoints?after=${made.id - 1}&limit=100`)
    assert.equal(list.body.webhook_endpoints.some((e: any) => e.id === made.id), false)
    assert.equal(await server.store.webhooks.secretsOf(made.id), undefined)
    // A deleted endpoint's secrets have no more use: they are not kept (its row, read with SQL).
    const row = await testSql(server.store).get('SELECT secret, previous_secret, deleted_at FROM webhook_endpoints WHERE id = ?', made.id)
    assert.deepEqual({ ...row }, { secret: '', previous_secret: null, deleted_at: row?.['deleted_at'] })
    assert.match(String(row?.['deleted_at']), ISO_TIME)
  })

  test('404 for ids that do not exist or are not positive integers', async () => {
    for (const id of ['999999', '0', 'abc', '1e3', '-1']) {
      for (const [method, path] of [['GET', ''], ['DELETE', ''], ['POST', '/rotate_secret']] as const) {
        const res = await admin(method, `/webhook_endpoints/${id}${path}`)
        assert.equal(res.status, 404, `${method} ${id}${path}`)
        assert.deepEqual(res.body, NOT_FOUND)
      }
    }
  })

  test('the admin token is required: 401 without one, and a customer key is not one', async () => {
    const made = await create()
    const customer = await seedUser(server.store)
    const routes: [string, string][] = [
      ['POST', '/webhook_endpoints'], ['GET', '/webhook_endpoints'], ['GET', `/webhook_endpoints/${made.id}`],
      ['DELETE', `/webhook_endpoints/${made.id}`], ['POST', `/webhook_endpoints/${made.id}/rotate_secret`],
    ]
    for (const [method, path] of routes) {
      const json = method === 'POST' ? { webhook_endpoint: { url: HOOK, events: ['*'] } } : undefined
      const none = await server.request(method, `${A}${path}`, { json })
      assert.equal(none.status, 401, `${method} ${path}`)
      assert.deepEqual(none.body, { error: 'You must specify an admin token.' })
      const wrong = await server.request(method, `${A}${path}`, { key: customer.key, json })
      assert.equal(wrong.status, 401, `${method} ${path}`)
      assert.deepEqual(wrong.body, { error: 'Invalid admin token.' })
    }
    assert.deepEqual(await server.store.webhooks.secretsOf(made.id), { secret: made.secret, previous_secret: null, previous_secret_expires_at: null })
  })
})

test('list: keyset pages of `limit`, oldest first, next_after null on the last page', async (t) => {
  const own = await startTestServer(t)
  const ids: number[] = []
  for (let n = 0; n < 5; n++) {
    const res = await own.request('POST', `${A}/webhook_endpoints`, { key: ADMIN_TOKEN, json: { webhook_endpoint: { url: `${HOOK}/${n}`, events: ['*'] } } })
    ids.push(res.body.id)
  }
  const page = async (query: string) => (await own.request('GET', `${A}/webhook_endpoints${query}`, { key: ADMIN_TOKEN })).body
  const first = await page('?limit=2')
  assert.deepEqual(first.webhook_endpoints.map((e: any) => e.id), ids.slice(0, 2))
  assert.equal(first.next_after, ids[1])
  const second = await page(`?limit=2&after=${first.next_after}`)
  assert.deepEqual(second.webhook_endpoints.map((e: any) => e.id), ids.slice(2, 4))
  const last = await page(`?limit=2&after=${second.next_after}`)
  assert.deepEqual(last.webhook_endpoints.map((e: any) => e.id), ids.slice(4))
  assert.equal(last.next_after, null)
  const all = await page('')
  assert.deepEqual(all.webhook_endpoints.map((e: any) => e.url), ids.map((_, n) => `${HOOK}/${n}`))
  assert.equal(all.next_after, null)
  assert.equal(all.webhook_endpoints.some((e: any) => 'secret' in e), false)
})
