/**
 * C1 transport rules over real HTTP: routing before authentication (404/405 + Allow), PUT = PATCH,
 * body media types (415), empty bodies, 400s, JSON root wrapping, the Spree missing-param 422,
 * the body limit (413), X-Request-Id, JSON answers, unknown and non-input fields.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import {
  createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer,
} from '../helpers/server.ts'

const TODAY = '2026-03-15'
const JSON_TYPE = 'application/json; charset=utf-8'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/
const missing = (name: string) => {
  const text = `param is missing or the value is empty: ${name}`
  return { error: text, exception: text, missing_param: name }
}

interface RawResponse {
  status: number
  headers: http.IncomingHttpHeaders
  text: string
  body: any
}

/**
 * A request with exactly the headers given (fetch adds a content type to string bodies). A body
 * given as an array of chunks is sent chunked, without Content-Length.
 */
function rawRequest(base: string, method: string, path: string, headers: Record<string, string>, body?: string | Buffer | (string | Buffer)[]): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request(base + path, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8')
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body: parsed })
      })
    })
    // The server may answer (413) and close before the whole body is sent; the answer still counts.
    req.on('error', reject)
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk)
    else if (body !== undefined) req.write(body)
    req.end()
  })
}

let server: TestServer

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: TODAY })
})
after(() => server.close())

describe('routing comes first', () => {
  test('an unknown path is a 404 JSON answer, before authentication', async () => {
    // `/` is the web console's now (a 302 to /admin/, test/web/pages.test.ts).
    for (const path of ['/api', '/api/v1', '/api/v1/nothing', '/api/v2/subscriptions', '/api/v1/subscriptions/1/nothing', '/api/v1/line_items', '/admin/api/v1/nothing']) {
      const res = await server.request('GET', path)
      assert.equal(res.status, 404, path)
      assert.deepEqual(res.body, NOT_FOUND, path)
      assert.equal(res.headers.get('content-type'), JSON_TYPE)
    }
    const withBody = await server.request('POST', '/api/v1/nothing', { json: { a: 1 } })
    assert.equal(withBody.status, 404)
    assert.deepEqual(withBody.body, NOT_FOUND)
  })

  test('a known path with the wrong method is a 405 with Allow, before authentication', async () => {
    const cases: [string, string, string][] = [
      ['DELETE', '/api/v1/subscriptions', 'GET, POST'],
      ['PATCH', '/api/v1/subscriptions', 'GET, POST'],
      ['POST', '/api/v1/subscriptions/1', 'GET, PATCH, PUT'],
      ['DELETE', '/api/v1/subscriptions/1', 'GET, PATCH, PUT'],
      ['GET', '/api/v1/subscriptions/1/skip', 'POST'],
      ['PUT', '/api/v1/subscriptions/1/cancel', 'POST'],
      ['POST', '/api/v1/line_items/1', 'DELETE, GET, PATCH, PUT'],
      ['DELETE', '/admin/api/v1/users', 'GET, POST'],
    ]
    for (const [method, path, allow] of cases) {
      for (const key of [undefined, 'not-a-key']) {
        const res = await server.request(method, path, { key })
        assert.equal(res.status, 405, `${method} ${path}`)
        assert.equal(res.headers.get('allow'), allow, `${method} ${path}`)
        assert.equal(res.headers.get('content-type'), JSON_TYPE)
        assert.deepEqual(res.body, { error: `Method ${method} is not allowed here` })
        assert.equal(res.headers.get('www-authenticate'), null)
      }
    }
  })

  test('PUT is accepted wherever PATCH is, with the same effect', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key, { interval_length: 1, interval_units: 'week' })
    const put = await server.request('PUT', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { interval_length: 2 } } })
    assert.equal(put.status, 200)
    assert.equal(put.body.interval_length, 2)
    assert.equal(put.body.actionable_date, '2026-03-29')
    assert.equal((await server.store.subscriptions.find(sub.id))?.interval_length, 2)
    const patch = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { interval_length: 2 } } })
    assert.deepEqual(patch.body, put.body)

    const item = await seedSubscribable(server.store)
    const withItem = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const itemId = withItem.line_items[0].id
    const putItem = await server.request('PUT', `/api/v1/line_items/${itemId}`, { key: alice.key, json: { subscription_line_item: { quantity: 7 } } })
    assert.equal(putItem.status, 200)
    assert.equal(putItem.body.quantity, 7)
    assert.equal((await server.store.subscriptions.lineItemById(itemId))?.quantity, 7)
    const invalid = await server.request('PUT', `/api/v1/line_items/${itemId}`, { key: alice.key, json: { subscription_line_item: { quantity: -1 } } })
    assert.equal(invalid.status, 422)
    assert.deepEqual(invalid.body, { quantity: ['must be greater than 0'] })
  })
})

describe('request bodies', () => {
  const UNSUPPORTED = { error: 'Unsupported media type: send application/json or application/x-www-form-urlencoded' }

  test('any other media type is a 415 and creates nothing', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    const bodies: [string, string][] = [
      ['text/plain', 'subscription[interval_length]=1'],
      ['application/xml', '<subscription><interval_length>1</interval_length></subscription>'],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="subscription[interval_length]"\r\n\r\n1\r\n--x--\r\n'],
      ['text/json', '{"subscription": {"interval_length": 1}}'],
      ['application/octet-stream', '{"subscription": {"interval_length": 1}}'],
      // Only application/json itself is JSON (C1's "any other"), not the structured-syntax suffix.
      ['application/vnd.api+json', '{"subscription": {"interval_length": 1}}'],
      ['application/merge-patch+json', '{"subscription": {"interval_length": 1}}'],
    ]
    for (const [type, body] of bodies) {
      const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: body, headers: { 'content-type': type } })
      assert.equal(res.status, 415, type)
      assert.deepEqual(res.body, UNSUPPORTED)
      assert.equal(res.headers.get('content-type'), JSON_TYPE)
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('a non-empty body without a content type is a 415', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    const res = await rawRequest(server.url, 'POST', '/api/v1/subscriptions', { authorization: `Bearer ${alice.key}` }, '{"subscription": {"interval_length": 1}}')
    assert.equal(res.status, 415)
    assert.deepEqual(res.body, UNSUPPORTED)
    assert.equal(await snapshot(server.store), before)
  })

  test('the media type is read case-insensitively and with parameters', async () => {
    const alice = await seedUser(server.store)
    const json = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, raw: '{"subscription": {"interval_length": 4}}', headers: { 'content-type': 'Application/JSON; charset=utf-8' },
    })
    assert.equal(json.status, 200)
    assert.equal(json.body.interval_length, 4)
    const form = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, raw: 'subscription[interval_length]=5', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=UTF-8' },
    })
    assert.equal(form.status, 200)
    assert.equal(form.body.interval_length, 5)
  })

  test('an empty body is no body, whatever its content type', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    for (const type of ['text/plain', 'multipart/form-data; boundary=x', 'application/json', 'application/x-www-form-urlencoded', 'image/png']) {
      const create = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: '', headers: { 'content-type': type } })
      assert.equal(create.status, 422, type)
      assert.deepEqual(create.body, missing('subscription'))
      const skip = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key, raw: '', headers: { 'content-type': type } })
      assert.equal(skip.status, 200, type)
    }
    const noType = await rawRequest(server.url, 'POST', `/api/v1/subscriptions/${sub.id}/cancel`, { authorization: `Bearer ${alice.key}`, 'content-length': '0' })
    assert.equal(noType.status, 200)
    assert.equal(noType.body.state, 'canceled')
  })

  test('unparseable JSON is a 400 and creates nothing', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    // White space alone is not empty (C1's "no body" is a body of no bytes), and no JSON text.
    for (const raw of ['{"subscription":', '{subscription: {}}', "{'a': 1}", '{"a": 1,}', 'nope', '{"a": 1}}', '   ', '\n']) {
      const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw, headers: { 'content-type': 'application/json' } })
      assert.equal(res.status, 400, raw)
      assert.deepEqual(res.body, { error: 'The request body is not valid JSON' })
      assert.equal(res.headers.get('content-type'), JSON_TYPE)
    }
    assert.equal(await snapshot(server.store), before)
  })

  test("a body's 400 and 415 come after C2's checks: 401 without a key, 404, then 401 for another's record", async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    const bad: [string, string][] = [['application/json', '{'], ['application/json', '   '], ['text/plain', 'x'], ['application/x-www-form-urlencoded', 'a=1&a[b]=2']]
    for (const [type, raw] of bad) {
      const anonymous = await rawRequest(server.url, 'POST', '/api/v1/subscriptions', { 'content-type': type }, raw)
      assert.deepEqual([anonymous.status, anonymous.body], [401, { error: 'You must specify an API key.' }], type)
      const stranger = await server.request('POST', '/api/v1/subscriptions', { key: 'rpl_not-a-key-at-all', raw, headers: { 'content-type': type } })
      assert.deepEqual([stranger.status, stranger.body], [401, { error: 'Invalid API key specified.' }], type)
      const missingRecord = await server.request('PATCH', '/api/v1/subscriptions/999999', { key: alice.key, raw, headers: { 'content-type': type } })
      assert.deepEqual([missingRecord.status, missingRecord.body], [404, NOT_FOUND], type)
      const others = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: bob.key, raw, headers: { 'content-type': type } })
      assert.deepEqual([others.status, others.body], [401, { error: 'You are not authorized to perform that action.' }], type)
      // With an Idempotency-Key too: the key's request is compared, and refused, in the same order.
      const keyed = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: bob.key, raw, headers: { 'content-type': type, 'idempotency-key': `k-${type}-${raw}` } })
      assert.deepEqual([keyed.status, keyed.body], [401, { error: 'You are not authorized to perform that action.' }], type)
    }
  })

  test('a route that never reads its body still refuses a bad one, and changes nothing', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    const before = await snapshot(server.store)
    for (const [type, raw, status] of [['application/json', '{', 400], ['application/json', '   ', 400], ['text/plain', 'x', 415]] as const) {
      const skip = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: alice.key, raw, headers: { 'content-type': type } })
      assert.equal(skip.status, status, `${type} ${JSON.stringify(raw)}`)
      const dry = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: alice.key, raw, headers: { 'content-type': type, 'replenish-dry-run': '1' } })
      assert.deepEqual([dry.status, dry.headers.get('replenish-dry-run')], [status, '1'])
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('a form structure conflict is a 400 and creates nothing', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    for (const form of ['a=1&a[b]=2', 'subscription=1&subscription[interval_length]=2', 'subscription[interval_length]=1&subscription[interval_length][x]=2', 'a[]=1&a[b]=2', 'a[b]=1&a[]=2']) {
      const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form })
      assert.equal(res.status, 400, form)
      assert.deepEqual(res.body, { error: 'Invalid form parameters: conflicting structure' })
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('form parsing is lenient: a bad % escape is kept literally, a bare key is null', async () => {
    const alice = await seedUser(server.store)
    const ok = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]=2&note=100%&x=%zz&%' })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.interval_length, 2)
    // The bad escape reaches validation as the literal text "%zz": not a number, not a 400.
    const literal = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]=%zz' })
    assert.equal(literal.status, 422)
    assert.deepEqual(literal.body, { interval_length: ['is not a number'] })
    const literalUnits = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]=1&subscription[interval_units]=we%ek' })
    assert.equal(literalUnits.status, 422)
    assert.deepEqual(literalUnits.body, { interval_units: ['is not included in the list'] })
    // A bare key is null: for interval_length that is not a number.
    const bare = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]' })
    assert.equal(bare.status, 422)
    assert.deepEqual(bare.body, { interval_length: ['is not a number'] })
    // A bare optional key (null) means "not given".
    const bareOptional = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'subscription[interval_length]=1&subscription[end_date]&subscription[interval_units]' })
    assert.equal(bareOptional.status, 200)
    assert.equal(bareOptional.body.end_date, null)
    assert.equal(bareOptional.body.interval_units, 'month')
  })

  test('form values are strings and integer fields accept integer strings; + is a space', async () => {
    const alice = await seedUser(server.store)
    const item = await seedSubscribable(server.store)
    const res = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key,
      form: `subscription[interval_length]=11&subscription[line_items_attributes][0][subscribable_id]=${item}&subscription[line_items_attributes][0][quantity]=2` +
        '&subscription[shipping_address_attributes][firstname]=Ada+Lovelace&subscription[shipping_address_attributes][address1]=1%20Main%20St' +
        '&subscription[shipping_address_attributes][city]=M%C3%BCnchen&subscription[shipping_address_attributes][zipcode]=80331&subscription[shipping_address_attributes][country_iso]=de',
    })
    assert.equal(res.status, 200)
    assert.equal(res.body.interval_length, 11)
    assert.deepEqual(res.body.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[item, 2]])
    assert.deepEqual(res.body.shipping_address, {
      firstname: 'Ada Lovelace', lastname: null, company: null, address1: '1 Main St', address2: null, city: 'München',
      zipcode: '80331', state_name: null, country_iso: 'DE', phone: null,
    })
  })

  test('a JSON body without the root key is treated as wrapped', async () => {
    const alice = await seedUser(server.store)
    const created = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { interval_length: 3, interval_units: 'week' } })
    assert.equal(created.status, 200)
    assert.equal(created.body.interval_length, 3)
    assert.equal(created.body.interval_units, 'week')
    const updated = await server.request('PATCH', `/api/v1/subscriptions/${created.body.id}`, { key: alice.key, json: { interval_length: 5 } })
    assert.equal(updated.status, 200)
    assert.equal(updated.body.interval_length, 5)
    const invalid = await server.request('PATCH', `/api/v1/subscriptions/${created.body.id}`, { key: alice.key, json: { interval_length: 0 } })
    assert.equal(invalid.status, 422)
    assert.deepEqual(invalid.body, { interval_length: ['must be greater than 0'] })

    const item = await seedSubscribable(server.store)
    const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const li = await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key, json: { quantity: 6 } })
    assert.equal(li.status, 200)
    assert.equal(li.body.quantity, 6)
    const added = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: alice.key, json: { subscribable_id: item, quantity: 2 } })
    assert.equal(added.status, 200)
    assert.equal(added.body.quantity, 2)
  })

  test('a missing root object, or one that is not an object, is the Spree 422', async () => {
    const alice = await seedUser(server.store)
    const item = await seedSubscribable(server.store)
    const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const before = await snapshot(server.store)
    const json: unknown[] = [{}, { subscription: null }, { subscription: 5 }, { subscription: 'x' }, { subscription: [] }, { subscription: [{ interval_length: 1 }] }, [], [{ interval_length: 1 }], 1, 'subscription', null, true]
    for (const body of json) {
      const create = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: body })
      assert.equal(create.status, 422, JSON.stringify(body))
      assert.deepEqual(create.body, missing('subscription'))
      const update = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: body })
      assert.equal(update.status, 422, JSON.stringify(body))
      assert.deepEqual(update.body, missing('subscription'))
    }
    for (const form of ['', 'interval_length=1', 'subscription=1', 'subscription', 'subscription[]=1', 'other[interval_length]=1']) {
      const create = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form })
      assert.equal(create.status, 422, form)
      assert.deepEqual(create.body, missing('subscription'))
    }
    const noBody = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key })
    assert.deepEqual([noBody.status, noBody.body], [422, missing('subscription')])
    for (const body of [{ subscription_line_item: 3 }, {}, []]) {
      const res = await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key, json: body })
      assert.equal(res.status, 422)
      assert.deepEqual(res.body, missing('subscription_line_item'))
    }
    const formItem = await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: alice.key, form: 'quantity=3' })
    assert.deepEqual([formItem.status, formItem.body], [422, missing('subscription_line_item')])
    assert.equal(await snapshot(server.store), before)
  })

  test('unknown body fields are ignored', async () => {
    const alice = await seedUser(server.store)
    const res = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, json: { subscription: { interval_length: 2, colour: 'blue', nested: { deep: [1, 2] } }, utf8: '✓', commit: 'Save' },
    })
    assert.equal(res.status, 200)
    assert.equal(res.body.interval_length, 2)
    assert.equal('colour' in res.body, false)
    const form = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form: 'utf8=%E2%9C%93&subscription[interval_length]=3&subscription[colour]=blue&authenticity_token=x' })
    assert.equal(form.status, 200)
    assert.equal(form.body.interval_length, 3)
  })
})

describe('fields that are not inputs are never applied', () => {
  const FORGED = {
    id: 999_999, user_id: 0, state: 'canceled', paused: true, skip_count: 7, successive_skip_count: 3,
    processing_state: 'failed', created_at: '2000-01-01T00:00:00.000Z', updated_at: '2000-01-01T00:00:00.000Z',
    created_on: '2000-01-01', anchor_day: 3,
  }

  test('on create', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    for (const body of [{ subscription: { interval_length: 1, ...FORGED, user_id: bob.id } }, { interval_length: 1, ...FORGED, user_id: bob.id }]) {
      const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: body })
      assert.equal(res.status, 200)
      assert.notEqual(res.body.id, FORGED.id)
      assert.equal(res.body.user_id, alice.id)
      assert.equal(res.body.state, 'active')
      assert.equal(res.body.paused, false)
      assert.equal(res.body.skip_count, 0)
      assert.equal(res.body.successive_skip_count, 0)
      assert.equal(res.body.processing_state, 'pending')
      assert.equal(res.body.actionable_date, '2026-04-15')
      assert.ok(res.body.created_at > '2020', res.body.created_at)
      const stored = await server.store.subscriptions.find(res.body.id)
      assert.equal(stored?.created_on, TODAY)
      assert.equal(stored?.anchor_day, 15)
      assert.equal(stored?.user_id, alice.id)
    }
    assert.equal(await server.store.subscriptions.find(FORGED.id), undefined)
  })

  test('on update: nothing changes at all', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    const before = await snapshot(server.store)
    const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: { ...FORGED, user_id: bob.id } } })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, sub)
    const form = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
      key: alice.key, form: `subscription[user_id]=${bob.id}&subscription[state]=canceled&subscription[skip_count]=5&subscription[id]=1&subscription[created_at]=2000-01-01`,
    })
    assert.equal(form.status, 200)
    assert.deepEqual(form.body, sub)
    assert.equal(await snapshot(server.store), before)
  })

  test('on a line item: id and subscription_id in the body change nothing', async () => {
    const alice = await seedUser(server.store)
    const item = await seedSubscribable(server.store)
    const one = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const two = await createSubscription(server, alice.key)
    const li = one.line_items[0]
    const before = await snapshot(server.store)
    const res = await server.request('PATCH', `/api/v1/line_items/${li.id}`, {
      key: alice.key, json: { subscription_line_item: { id: 12345, subscription_id: two.id, created_at: '2000-01-01T00:00:00.000Z' } },
    })
    assert.equal(res.status, 200)
    assert.deepEqual(res.body, li)
    assert.equal(await snapshot(server.store), before)
  })
})

describe('the body limit', () => {
  test('a body over 64 KiB is a 413 and creates nothing; 64 KiB exactly is read', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    const fill = (size: number): string => {
      const head = '{"subscription": {"interval_length": 1, "pad": "'
      return head + 'x'.repeat(size - head.length - 3) + '"}}'
    }
    assert.equal(Buffer.byteLength(fill(65_537)), 65_537)
    const over = await rawRequest(server.url, 'POST', '/api/v1/subscriptions', { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' }, fill(65_537))
    assert.equal(over.status, 413)
    assert.deepEqual(over.body, { error: 'Request body too large' })
    assert.equal(over.headers['content-type'], JSON_TYPE)
    assert.equal(over.headers['connection'], 'close')
    assert.equal(await snapshot(server.store), before)

    const exact = await rawRequest(server.url, 'POST', '/api/v1/subscriptions', { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' }, fill(65_536))
    assert.equal(exact.status, 200)
    assert.equal(exact.body.interval_length, 1)
  })

  test('a chunked body without Content-Length is cut off at the limit too', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    const chunks = Array.from({ length: 20 }, () => Buffer.alloc(4096, 0x20))
    const res = await rawRequest(server.url, 'POST', '/api/v1/subscriptions', { authorization: `Bearer ${alice.key}`, 'content-type': 'application/json' }, ['{"subscription": {"interval_length": 1}}', ...chunks])
    assert.equal(res.status, 413)
    assert.deepEqual(res.body, { error: 'Request body too large' })
    assert.equal(await snapshot(server.store), before)
    // The server still answers afterwards.
    const next = await server.request('GET', '/api/v1/subscriptions', { key: alice.key })
    assert.equal(next.status, 200)
  })

  test('REPLENISH_MAX_BODY_BYTES sets the limit', async (t) => {
    const small = await startTestServer(t, { REPLENISH_TODAY: TODAY, REPLENISH_MAX_BODY_BYTES: '100' })
    const alice = await seedUser(small.store)
    const body = JSON.stringify({ subscription: { interval_length: 1, pad: 'x'.repeat(60) } })
    const fits = await small.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1 } } })
    assert.equal(fits.status, 200)
    const over = await small.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: body.padEnd(101, ' '), headers: { 'content-type': 'application/json' } })
    assert.equal(over.status, 413)
    assert.deepEqual(over.body, { error: 'Request body too large' })
  })
})

describe('responses', () => {
  test('X-Request-Id is echoed when it is a sane token', async () => {
    const alice = await seedUser(server.store)
    for (const id of ['abc-123', 'req_9f8e7d.1:2@host', 'A'.repeat(128), '4b1d2c3e-0000-4000-8000-000000000000']) {
      const res = await server.request('GET', '/api/v1/subscriptions', { key: alice.key, headers: { 'x-request-id': id } })
      assert.equal(res.headers.get('x-request-id'), id)
      const missingRoute = await server.request('GET', '/nowhere', { headers: { 'x-request-id': id } })
      assert.equal(missingRoute.headers.get('x-request-id'), id)
    }
  })

  test('X-Request-Id is generated when absent or not sane', async () => {
    const seen = new Set<string>()
    for (const id of [undefined, '', 'has space', 'semi;colon', 'A'.repeat(129), '<script>', 'a"b', 'path/slash', 'tab\there']) {
      const headers: Record<string, string> = id === undefined ? {} : { 'x-request-id': id }
      const res = await server.request('GET', '/api/v1/subscriptions', { headers })
      const got = res.headers.get('x-request-id') ?? ''
      assert.match(got, UUID, String(id))
      assert.equal(seen.has(got), false)
      seen.add(got)
    }
  })

  test('a 5xx answers {error, request_id} only: no stack, no SQL, no key; the error is logged', async (t) => {
    const broken = await startTestServer(t, { REPLENISH_TODAY: TODAY })
    const alice = await seedUser(broken.store)
    await broken.store.close() // every query now throws inside the handler
    const res = await broken.request('GET', '/api/v1/subscriptions', { key: alice.key, headers: { 'x-request-id': 'req-500' } })
    assert.equal(res.status, 500)
    assert.deepEqual(res.body, { error: 'Internal server error', request_id: 'req-500' })
    assert.equal(res.headers.get('content-type'), JSON_TYPE)
    assert.equal(res.headers.get('x-request-id'), 'req-500')
    assert.equal(broken.errors.length, 1)
    assert.equal((broken.errors[0] as { request_id?: string }).request_id, 'req-500')
    assert.equal(JSON.stringify(broken.errors).includes(alice.key), false)
  })

  test('every answer is JSON with a request id: 200, 400, 401, 404, 405, 413, 415, 422', async () => {
    const alice = await seedUser(server.store)
    const answers = [
      await server.request('GET', '/api/v1/subscriptions', { key: alice.key }),
      await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: '{', headers: { 'content-type': 'application/json' } }),
      await server.request('GET', '/api/v1/subscriptions'),
      await server.request('GET', '/api/v1/subscriptions/999999', { key: alice.key }),
      await server.request('DELETE', '/api/v1/subscriptions'),
      await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: 'x'.repeat(70_000), headers: { 'content-type': 'application/json' } }),
      await server.request('POST', '/api/v1/subscriptions', { key: alice.key, raw: 'x', headers: { 'content-type': 'text/plain' } }),
      await server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: {} }),
      await server.request('GET', '/api/v1/openapi.json'),
    ]
    assert.deepEqual(answers.map((a) => a.status), [200, 400, 401, 404, 405, 413, 415, 422, 200])
    for (const a of answers) {
      assert.equal(a.headers.get('content-type'), JSON_TYPE)
      assert.match(a.headers.get('x-request-id') ?? '', UUID)
      assert.equal(typeof a.body, 'object')
      assert.notEqual(a.body, null)
    }
    assert.deepEqual(server.errors, [])
  })
})
