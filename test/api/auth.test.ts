/**
 * C2: the two 401 messages and their challenge, the Bearer scheme, keys only from the header,
 * the order authenticate → find (404) → own (401) → validate (422), revoked keys, and the wall
 * between customer keys and admin tokens.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import {
  ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer,
} from '../helpers/server.ts'

const MUST_SPECIFY = { error: 'You must specify an API key.' }
const INVALID_KEY = { error: 'Invalid API key specified.' }
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const NOT_AUTHORIZED = { error: 'You are not authorized to perform that action.' }
const CHALLENGE = 'Bearer realm="replenish"'

let server: TestServer

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
})
after(() => server.close())

/** Every customer route with a record of alice's in it (C5). */
async function customerRoutes(key: string): Promise<[string, string][]> {
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const li = sub.line_items[0].id
  return [
    ['POST', '/api/v1/subscriptions'], ['GET', '/api/v1/subscriptions'], ['GET', `/api/v1/subscriptions/${sub.id}`],
    ['PATCH', `/api/v1/subscriptions/${sub.id}`], ['PUT', `/api/v1/subscriptions/${sub.id}`],
    ['POST', `/api/v1/subscriptions/${sub.id}/skip`], ['POST', `/api/v1/subscriptions/${sub.id}/cancel`],
    ['POST', `/api/v1/subscriptions/${sub.id}/pause`], ['POST', `/api/v1/subscriptions/${sub.id}/resume`],
    ['POST', `/api/v1/subscriptions/${sub.id}/activate`], ['GET', `/api/v1/subscriptions/${sub.id}/events`],
    ['POST', `/api/v1/subscriptions/${sub.id}/line_items`], ['GET', `/api/v1/line_items/${li}`],
    ['PATCH', `/api/v1/line_items/${li}`], ['PUT', `/api/v1/line_items/${li}`], ['DELETE', `/api/v1/line_items/${li}`],
  ]
}

describe('the customer API answers only to an API key', () => {
  test('no Authorization header: 401 "You must specify an API key." with the challenge, on every route', async () => {
    const alice = await seedUser(server.store)
    const routes = await customerRoutes(alice.key)
    const before = await snapshot(server.store)
    for (const [method, path] of routes) {
      const res = await server.request(method, path, method === 'GET' || method === 'DELETE' ? {} : { json: { subscription: { interval_length: 2 } } })
      assert.equal(res.status, 401, `${method} ${path}`)
      assert.deepEqual(res.body, MUST_SPECIFY)
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE)
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('a header that is not "Bearer <key>" is the same 401', async () => {
    const alice = await seedUser(server.store)
    for (const value of ['', 'Bearer', 'Bearer    ', `Basic ${Buffer.from(`${alice.key}:`).toString('base64')}`, `Token ${alice.key}`, alice.key, `Bearer ${alice.key} extra`, `Bearer: ${alice.key}`, `Bearer,${alice.key}`]) {
      const res = await server.request('GET', '/api/v1/subscriptions', { headers: { authorization: value } })
      assert.equal(res.status, 401, JSON.stringify(value))
      assert.deepEqual(res.body, MUST_SPECIFY, JSON.stringify(value))
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE)
    }
  })

  test('an unknown key: 401 "Invalid API key specified." with the challenge, and the key is never echoed', async () => {
    const guessed = 'rpl_thisIsNotAKeyThatExists0123456789'
    for (const [method, path] of [['GET', '/api/v1/subscriptions'], ['POST', '/api/v1/subscriptions'], ['GET', '/api/v1/subscriptions/1'], ['DELETE', '/api/v1/line_items/1']] as const) {
      const res = await server.request(method, path, { key: guessed, ...(method === 'POST' ? { json: { subscription: { interval_length: 1 } } } : {}) })
      assert.equal(res.status, 401)
      assert.deepEqual(res.body, INVALID_KEY)
      assert.equal(res.headers.get('www-authenticate'), CHALLENGE)
      assert.equal(res.text.includes(guessed), false)
      assert.equal(JSON.stringify([...res.headers]).includes(guessed), false)
    }
    assert.equal(JSON.stringify(server.log).includes(guessed), false)
  })

  test('the scheme name is case-insensitive', async () => {
    const alice = await seedUser(server.store)
    for (const scheme of ['Bearer', 'bearer', 'BEARER', 'bEaReR']) {
      const res = await server.request('GET', '/api/v1/subscriptions', { headers: { authorization: `${scheme} ${alice.key}` } })
      assert.equal(res.status, 200, scheme)
    }
  })

  test('a key in the query string is never read', async () => {
    const alice = await seedUser(server.store)
    for (const query of ['api_key', 'token', 'key', 'access_token', 'authorization']) {
      const res = await server.request('GET', `/api/v1/subscriptions?${query}=${encodeURIComponent(alice.key)}`)
      assert.equal(res.status, 401, query)
      assert.deepEqual(res.body, MUST_SPECIFY)
    }
    const body = await server.request('POST', '/api/v1/subscriptions', { json: { api_key: alice.key, subscription: { interval_length: 1 } } })
    assert.equal(body.status, 401)
    assert.deepEqual(body.body, MUST_SPECIFY)
    assert.equal(JSON.stringify(server.log).includes(alice.key), false)
  })

  test('a revoked key is 401 "Invalid API key specified." at once', async () => {
    const user = await server.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'revoked@example.com' } } })
    assert.equal(user.status, 201)
    const made = await server.request('POST', `/admin/api/v1/users/${user.body.id}/api_keys`, { key: ADMIN_TOKEN })
    assert.equal(made.status, 201)
    const works = await server.request('GET', '/api/v1/subscriptions', { key: made.body.key })
    assert.equal(works.status, 200)
    const revoked = await server.request('DELETE', `/admin/api/v1/api_keys/${made.body.id}`, { key: ADMIN_TOKEN })
    assert.equal(revoked.status, 200)
    const refused = await server.request('GET', '/api/v1/subscriptions', { key: made.body.key })
    assert.equal(refused.status, 401)
    assert.deepEqual(refused.body, INVALID_KEY)
    assert.equal(refused.headers.get('www-authenticate'), CHALLENGE)
  })

  test('an admin token never acts as a customer', async () => {
    const res = await server.request('GET', '/api/v1/subscriptions', { key: ADMIN_TOKEN })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, INVALID_KEY)
    const create = await server.request('POST', '/api/v1/subscriptions', { key: ADMIN_TOKEN, json: { subscription: { interval_length: 1 } } })
    assert.equal(create.status, 401)
    assert.deepEqual(create.body, INVALID_KEY)
  })
})

describe('the admin API answers only to an admin token', () => {
  test('no token: 401 "You must specify an admin token."', async () => {
    for (const path of ['/admin/api/v1/users', '/admin/api/v1/subscriptions', '/admin/api/v1/events', '/metrics']) {
      const res = await server.request('GET', path)
      assert.equal(res.status, 401, path)
      assert.deepEqual(res.body, { error: 'You must specify an admin token.' })
    }
  })

  test('a customer key: 401 "Invalid admin token."', async () => {
    const alice = await seedUser(server.store)
    const before = await snapshot(server.store)
    for (const [method, path] of [['GET', '/admin/api/v1/users'], ['POST', '/admin/api/v1/users'], ['GET', `/admin/api/v1/users/${alice.id}`], ['GET', '/metrics']] as const) {
      const res = await server.request(method, path, { key: alice.key, ...(method === 'POST' ? { json: { user: { email: 'x@example.com' } } } : {}) })
      assert.equal(res.status, 401, path)
      assert.deepEqual(res.body, { error: 'Invalid admin token.' })
      assert.equal(res.text.includes(alice.key), false)
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('an admin token is read case-insensitively from the header, never from the query', async () => {
    const ok = await server.request('GET', '/admin/api/v1/users', { headers: { authorization: `bearer ${ADMIN_TOKEN}` } })
    assert.equal(ok.status, 200)
    const query = await server.request('GET', `/admin/api/v1/users?token=${ADMIN_TOKEN}&admin_token=${ADMIN_TOKEN}`)
    assert.equal(query.status, 401)
    assert.deepEqual(query.body, { error: 'You must specify an admin token.' })
  })
})

describe('the order of checks on a record route: authenticate → find → own → validate', () => {
  test('authentication comes before the lookup', async () => {
    for (const path of ['/api/v1/subscriptions/999999', '/api/v1/subscriptions/abc', '/api/v1/line_items/999999']) {
      const none = await server.request('PATCH', path, { json: { subscription: { interval_length: -1 } } })
      assert.deepEqual([none.status, none.body], [401, MUST_SPECIFY], path)
      const bad = await server.request('PATCH', path, { key: 'rpl_unknown_key_000000000000', json: { subscription: { interval_length: -1 } } })
      assert.deepEqual([bad.status, bad.body], [401, INVALID_KEY], path)
    }
  })

  test('a missing record is 404 even with an invalid body; a foreign one is 401 even with an invalid body', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const item = await seedSubscribable(server.store)
    const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
    const li = sub.line_items[0].id
    const before = await snapshot(server.store)
    const invalidSub = { json: { subscription: { interval_length: -1 } } }
    const invalidItem = { json: { subscription_line_item: { quantity: -1 } } }

    const missingSub = await server.request('PATCH', '/api/v1/subscriptions/999999', { key: bob.key, ...invalidSub })
    assert.deepEqual([missingSub.status, missingSub.body], [404, NOT_FOUND])
    const missingItem = await server.request('PATCH', '/api/v1/line_items/999999', { key: bob.key, ...invalidItem })
    assert.deepEqual([missingItem.status, missingItem.body], [404, NOT_FOUND])
    const missingRoot = await server.request('PATCH', '/api/v1/subscriptions/999999', { key: bob.key, json: {} })
    assert.deepEqual([missingRoot.status, missingRoot.body], [404, NOT_FOUND])

    const foreignSub = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: bob.key, ...invalidSub })
    assert.deepEqual([foreignSub.status, foreignSub.body], [401, NOT_AUTHORIZED])
    const foreignItem = await server.request('PATCH', `/api/v1/line_items/${li}`, { key: bob.key, ...invalidItem })
    assert.deepEqual([foreignItem.status, foreignItem.body], [401, NOT_AUTHORIZED])
    const foreignRoot = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: bob.key, json: {} })
    assert.deepEqual([foreignRoot.status, foreignRoot.body], [401, NOT_AUTHORIZED])
    const foreignAdd = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: bob.key, json: { subscription_line_item: { quantity: 0 } } })
    assert.deepEqual([foreignAdd.status, foreignAdd.body], [401, NOT_AUTHORIZED])

    const ownInvalid = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, ...invalidSub })
    assert.deepEqual([ownInvalid.status, ownInvalid.body], [422, { interval_length: ['must be greater than 0'] }])
    const ownInvalidItem = await server.request('PATCH', `/api/v1/line_items/${li}`, { key: alice.key, ...invalidItem })
    assert.deepEqual([ownInvalidItem.status, ownInvalidItem.body], [422, { quantity: ['must be greater than 0'] }])
    assert.equal(await snapshot(server.store), before)
  })

  test('every record route of another user is 401 and changes nothing', async () => {
    const alice = await seedUser(server.store)
    const bob = await seedUser(server.store)
    const routes = (await customerRoutes(alice.key)).filter(([, path]) => /\/\d+/.test(path))
    const before = await snapshot(server.store)
    for (const [method, path] of routes) {
      const res = await server.request(method, path, method === 'GET' || method === 'DELETE' ? { key: bob.key } : { key: bob.key, json: { subscription: { interval_length: 2 }, subscription_line_item: { quantity: 2 } } })
      assert.equal(res.status, 401, `${method} ${path}`)
      assert.deepEqual(res.body, NOT_AUTHORIZED)
    }
    assert.equal(await snapshot(server.store), before)
  })

  test('ids that are not positive integers are 404', async () => {
    const alice = await seedUser(server.store)
    const sub = await createSubscription(server, alice.key)
    const ids = ['abc', '1e3', '-1', '01', '0', '00', '1.0', '1.5', '0x1', '+1', '%201', '1%20', '%00', `${sub.id}abc`, '99999999999999999999', '１', 'null', 'undefined', '%2e%2e']
    for (const id of ids) {
      for (const [method, path] of [
        ['GET', `/api/v1/subscriptions/${id}`], ['PATCH', `/api/v1/subscriptions/${id}`], ['POST', `/api/v1/subscriptions/${id}/skip`],
        ['POST', `/api/v1/subscriptions/${id}/cancel`], ['GET', `/api/v1/line_items/${id}`], ['DELETE', `/api/v1/line_items/${id}`],
      ] as const) {
        const res = await server.request(method, path, { key: alice.key, ...(method === 'PATCH' ? { json: { subscription: { interval_length: 1 } } } : {}) })
        assert.equal(res.status, 404, `${method} ${path}`)
        assert.deepEqual(res.body, NOT_FOUND, `${method} ${path}`)
      }
    }
    assert.deepEqual(server.errors, [])
  })
})
