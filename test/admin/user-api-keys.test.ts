/**
 * Issue 18 item 3, C13: GET /admin/api/v1/users/:id/api_keys lists a user's keys, revoked ones
 * too, with `last_used_at` and never the key; strict list parameters as every admin list. A key's
 * last use is written when authentication reads the key (a cache miss), at most once a minute.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { ADMIN_TOKEN, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.ts'
import { buildApp } from '../../src/cli/app.ts'
import { authenticate } from '../../src/api/kit/auth.ts'
import type { Ctx } from '../../src/http/types.ts'
import { writeFailures } from '../helpers/database.ts'

const A = '/admin/api/v1'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const FIELDS = ['id', 'user_id', 'prefix', 'created_at', 'updated_at', 'last_used_at', 'revoked_at']

let counter = 0
const admin = (server: TestServer, method: string, path: string, options: RequestOptions = {}) =>
  server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })

async function newUser(server: TestServer): Promise<number> {
  const res = await admin(server, 'POST', '/users', { json: { user: { email: `keys-${++counter}-${Date.now()}@example.com` } } })
  assert.equal(res.status, 201, res.text)
  return res.body.id
}

async function newKey(server: TestServer, userId: number, key?: string): Promise<any> {
  const res = await admin(server, 'POST', `/users/${userId}/api_keys`, key === undefined ? {} : { json: { api_key: { key } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** The key as listed, once the writes asked so far have landed (last_used_at is not awaited by its request). */
async function listed(server: TestServer, userId: number, keyId: number): Promise<any> {
  await server.settled()
  const res = await admin(server, 'GET', `/users/${userId}/api_keys?limit=100`)
  assert.equal(res.status, 200, res.text)
  return res.body.api_keys.find((k: any) => k.id === keyId)
}

describe('the list', () => {
  let server: TestServer
  before(async () => {
    server = await startTestServer(undefined)
  })
  after(() => server.close())

  test('every key of the user, revoked ones too, in the C13 shape; never a key; other users\' keys are not there', async () => {
    const userId = await newUser(server)
    const made = await newKey(server, userId)
    const imported = await newKey(server, userId, 'spree-legacy-key-0123456789')
    const revoked = await newKey(server, userId)
    const gone = await admin(server, 'DELETE', `/api_keys/${revoked.id}`)
    assert.equal(gone.status, 200, gone.text)
    await newKey(server, await newUser(server))

    const res = await admin(server, 'GET', `/users/${userId}/api_keys`)
    assert.equal(res.status, 200, res.text)
    assert.deepEqual(Object.keys(res.body), ['api_keys', 'next_after'])
    assert.equal(res.body.next_after, null)
    for (const k of res.body.api_keys) assert.deepEqual(Object.keys(k), FIELDS)
    const shown = (k: any, revokedAt: string | null) => ({
      id: k.id, user_id: userId, prefix: k.key.slice(0, 8), created_at: k.created_at, updated_at: revokedAt ?? k.updated_at, last_used_at: null, revoked_at: revokedAt,
    })
    assert.deepEqual(res.body.api_keys, [shown(made, null), shown(imported, null), shown(revoked, gone.body.revoked_at)])
    assert.match(gone.body.revoked_at, ISO_TIME)
    for (const k of [made, imported, revoked]) assert.ok(!res.text.includes(k.key), 'a key is never listed')
  })

  test('keyset pages with ?after= and ?limit=; the strict parameters of every admin list; 404 for an unknown user', async () => {
    const userId = await newUser(server)
    const ids = [(await newKey(server, userId)).id, (await newKey(server, userId)).id]
    const first = await admin(server, 'GET', `/users/${userId}/api_keys?limit=1`)
    assert.deepEqual([first.body.api_keys.map((k: any) => k.id), first.body.next_after], [[ids[0]], ids[0]])
    const second = await admin(server, 'GET', `/users/${userId}/api_keys?limit=1&after=${first.body.next_after}`)
    assert.deepEqual([second.body.api_keys.map((k: any) => k.id), second.body.next_after], [[ids[1]], null])
    const bad = await admin(server, 'GET', `/users/${userId}/api_keys?limit=0&after=abc`)
    assert.deepEqual([bad.status, bad.body], [422, { after: ['is not a number'], limit: ['must be between 1 and 100'] }])
    const missing = await admin(server, 'GET', '/users/999999/api_keys')
    assert.deepEqual([missing.status, missing.body], [404, NOT_FOUND])
  })
})

describe('last_used_at', () => {
  test('written when a key is first used, not again within the minute, again once a minute has passed', async (t) => {
    const server = await startTestServer(t)
    const userId = await newUser(server)
    const key = await newKey(server, userId)
    const use = async () => assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: key.key })).status, 200)
    // Date alone is mocked (timers run as usual): it is the clock of the key cache and of last_used_at.
    const start = Date.now()
    t.mock.timers.enable({ apis: ['Date'], now: start })
    assert.equal((await listed(server, userId, key.id)).last_used_at, null)
    await use()
    assert.equal((await listed(server, userId, key.id)).last_used_at, new Date(start).toISOString())
    // 30 s on: the cache entry (10 s) is gone, so the key is read again, but the stored time is recent.
    t.mock.timers.setTime(start + 30_000)
    await use()
    assert.equal((await listed(server, userId, key.id)).last_used_at, new Date(start).toISOString())
    // Another process on the same database (its own cache, nothing asked yet) goes by the stored time too.
    const otherProcess = buildApp(server.config, server.store, () => {})
    const request = { headers: { authorization: `Bearer ${key.key}` }, socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage
    assert.equal(await authenticate(otherProcess, { req: request, userId: null } as unknown as Ctx), userId)
    assert.equal((await listed(server, userId, key.id)).last_used_at, new Date(start).toISOString())
    t.mock.timers.setTime(start + 61_000)
    await use()
    assert.equal((await listed(server, userId, key.id)).last_used_at, new Date(start + 61_000).toISOString())
    // A revoked key keeps its last use.
    assert.equal((await admin(server, 'DELETE', `/api_keys/${key.id}`)).status, 200)
    assert.equal((await listed(server, userId, key.id)).last_used_at, new Date(start + 61_000).toISOString())
  })

  test('a failed write of it goes to the error log with the key\'s id, never the key; the request still answers 200', async (t) => {
    const failures = writeFailures()
    const server = await startTestServer(t, {}, failures.storeOptions)
    const userId = await newUser(server)
    const key = await newKey(server, userId)
    await failures.set(server.store, true)
    assert.equal((await server.request('GET', '/api/v1/subscriptions', { key: key.key })).status, 200)
    await server.settled()
    await failures.set(server.store, false)
    const logged = server.errors.map((e) => JSON.stringify(e)).filter((line) => line.includes('could not record the use of API key'))
    assert.deepEqual(logged.length, 1)
    assert.ok(logged[0]?.includes(`API key ${key.id}: `) && logged[0]?.includes(failures.message), logged[0])
    assert.ok(!logged[0]?.includes(key.key), 'the key itself is never logged')
    assert.equal((await listed(server, userId, key.id)).last_used_at, null)
  })
})
