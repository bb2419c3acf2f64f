/**
 * C13 "Strict admin query parameters": on every admin list a malformed `after`, `limit`, id
 * filter, date filter or `state` is a 422 in the C4 shape naming the parameter (never a silent
 * default), every bad parameter in one body, in the caller's language; unknown names are
 * ignored. The customer API keeps C3's lenient paging.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'

const A = '/admin/api/v1'
const NAN = ['is not a number']
const LIMIT = ['must be between 1 and 100']
const NOT_ID = ['must be greater than 0']
const BAD_DATE = ['is not a valid date']
const NOT_LISTED = ['is not included in the list']

/** Every admin list with the filters it validates (beyond `after` and `limit`, which all share). */
const LISTS: Record<string, readonly string[]> = {
  users: [],
  payment_methods: [],
  payment_sources: ['user_id'],
  subscribables: [],
  subscriptions: ['state', 'user_id', 'actionable_before'],
  installments: ['state', 'subscription_id', 'user_id', 'due_after', 'due_before'],
  events: [],
  webhook_endpoints: [],
  admin_tokens: [],
}

/** Bad values of a parameter (by its kind) and the exact 422 body each must give. */
const PAGING_CASES: [string, Record<string, string[]>][] = [
  ['after=abc', { after: NAN }],
  ['after=1.5', { after: NAN }],
  ['after=1e3', { after: NAN }],
  ['after=%207', { after: NAN }],
  ['after=-1', { after: ['must be greater than or equal to 0'] }],
  ['limit=abc', { limit: NAN }],
  ['limit=2.5', { limit: NAN }],
  ['limit=0', { limit: LIMIT }],
  ['limit=-3', { limit: LIMIT }],
  ['limit=101', { limit: LIMIT }],
  ['limit=1000', { limit: LIMIT }],
]
const idCases = (name: string): [string, Record<string, string[]>][] => [
  [`${name}=abc`, { [name]: NAN }],
  [`${name}=1.5`, { [name]: NAN }],
  [`${name}=0`, { [name]: NOT_ID }],
  [`${name}=-4`, { [name]: NOT_ID }],
]
const dateCases = (name: string): [string, Record<string, string[]>][] => [
  [`${name}=2026-02-30`, { [name]: BAD_DATE }],
  [`${name}=2026-2-3`, { [name]: BAD_DATE }],
  [`${name}=tomorrow`, { [name]: BAD_DATE }],
  [`${name}=2026-03-15T00:00:00Z`, { [name]: BAD_DATE }],
]
function filterCases(list: string, name: string): [string, Record<string, string[]>][] {
  if (name === 'state') {
    // A state of the other kind of object is not in this list either.
    const foreign = list === 'subscriptions' ? 'fulfilled' : 'active'
    return [['state=bogus', { state: NOT_LISTED }], [`state=${foreign}`, { state: NOT_LISTED }], ['state=ACTIVE', { state: NOT_LISTED }]]
  }
  return name.endsWith('_id') ? idCases(name) : dateCases(name)
}

let server: TestServer
before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
})
after(() => server.close())

const get = (path: string, headers: Record<string, string> = {}) => server.request('GET', path, { key: ADMIN_TOKEN, headers })

describe('every admin list × every bad parameter → 422 naming it', () => {
  for (const [list, filters] of Object.entries(LISTS)) {
    test(`GET ${A}/${list}`, async () => {
      const cases = [...PAGING_CASES, ...filters.flatMap((f) => filterCases(list, f))]
      for (const [query, body] of cases) {
        const res = await get(`${A}/${list}?${query}`)
        assert.equal(res.status, 422, `${list}?${query}: ${res.text}`)
        assert.deepEqual(res.body, body, `${list}?${query}`)
      }
    })
  }
})

test('several bad parameters → all of them in one body', async () => {
  const res = await get(`${A}/installments?after=x&limit=500&state=shipped&subscription_id=y&user_id=0&due_after=2026-13-01&due_before=no`)
  assert.equal(res.status, 422)
  assert.deepEqual(res.body, {
    after: NAN, limit: LIMIT, state: NOT_LISTED, subscription_id: NAN, user_id: NOT_ID, due_after: BAD_DATE, due_before: BAD_DATE,
  })
  const subs = await get(`${A}/subscriptions?limit=0&state=paused&actionable_before=soon`)
  assert.deepEqual([subs.status, subs.body], [422, { limit: LIMIT, state: NOT_LISTED, actionable_before: BAD_DATE }])
})

test('the messages follow Accept-Language (es, fr, de); the keys do not', async () => {
  const path = `${A}/subscriptions?after=x&limit=0&state=bogus&actionable_before=2026-02-30`
  const expected = {
    es: { after: ['no es un número'], limit: ['debe estar entre 1 y 100'], state: ['no está incluido en la lista'], actionable_before: ['no es una fecha válida'] },
    fr: { after: ["n'est pas un nombre"], limit: ['doit être compris entre 1 et 100'], state: ["n'est pas inclus(e) dans la liste"], actionable_before: ["n'est pas une date valide"] },
    de: { after: ['ist keine Zahl'], limit: ['muss zwischen 1 und 100 liegen'], state: ['ist kein gültiger Wert'], actionable_before: ['ist kein gültiges Datum'] },
  }
  for (const [language, body] of Object.entries(expected)) {
    const res = await get(path, { 'Accept-Language': language })
    assert.deepEqual([res.status, res.body], [422, body], language)
  }
})

test('authentication comes first: no token and a bad parameter → 401', async () => {
  const res = await server.request('GET', `${A}/users?limit=abc`)
  assert.deepEqual([res.status, res.body], [401, { error: 'You must specify an admin token.' }])
})

test('valid values still answer 200: limits 1 and 100, after=0, every state, ids, dates; empty values count as absent', async () => {
  const alice = await seedUser(server.store)
  const made = await createSubscription(server, alice.key, { actionable_date: '2026-04-01' })
  for (const list of Object.keys(LISTS)) {
    for (const query of ['limit=1', 'limit=100', 'after=0', 'after=999999999', 'after=&limit=']) {
      const res = await get(`${A}/${list}?${query}`)
      assert.equal(res.status, 200, `${list}?${query}: ${res.text}`)
    }
  }
  for (const state of ['active', 'pending_cancellation', 'canceled', 'inactive']) {
    assert.equal((await get(`${A}/subscriptions?state=${state}`)).status, 200, state)
  }
  for (const state of ['pending', 'retrying', 'fulfilled', 'abandoned']) {
    assert.equal((await get(`${A}/installments?state=${state}`)).status, 200, state)
  }
  const filtered = await get(`${A}/subscriptions?user_id=${alice.id}&actionable_before=2026-04-02&state=active&limit=1`)
  assert.deepEqual(filtered.body.subscriptions.map((s: { id: number }) => s.id), [made.id])
  const installments = await get(`${A}/installments?subscription_id=${made.id}&user_id=${alice.id}&due_after=2026-01-01&due_before=2026-12-31`)
  assert.deepEqual([installments.status, installments.body], [200, { installments: [], next_after: null }])
  const blank = await get(`${A}/subscriptions?state=&user_id=&actionable_before=&limit=1`)
  assert.equal(blank.status, 200)
  assert.equal(blank.body.subscriptions.length, 1)
})

test('unknown parameter names are ignored, whatever their values', async () => {
  for (const list of Object.keys(LISTS)) {
    const res = await get(`${A}/${list}?page=abc&per_page=1000&sort=-id&foo=bar`)
    assert.equal(res.status, 200, `${list}: ${res.text}`)
  }
})

test("the customer API's paging stays lenient (C3): nonsense gives the default, over 100 is capped", async () => {
  const bob = await seedUser(server.store)
  await createSubscription(server, bob.key)
  const lenient = await server.request('GET', '/api/v1/subscriptions?page=abc&per_page=1000', { key: bob.key })
  assert.equal(lenient.status, 200)
  assert.deepEqual({ ...lenient.body, subscriptions: lenient.body.subscriptions.length }, {
    subscriptions: 1, count: 1, current_page: 1, pages: 1, per_page: 100, total_count: 1,
  })
  const zero = await server.request('GET', '/api/v1/subscriptions?page=0&per_page=-5&state=bogus', { key: bob.key })
  assert.equal(zero.status, 200)
  assert.deepEqual({ ...zero.body, subscriptions: zero.body.subscriptions.length }, {
    subscriptions: 0, count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0,
  })
})
