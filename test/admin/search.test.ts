/**
 * C13 "Search": `GET /users?email=&external_id=` (exact; email ignores case as the users table's
 * NOCASE unique index does, external_id does not) and `GET /installments?user_id=&due_after=&
 * due_before=` (both bounds exclusive, as `actionable_before` is: decisions.md "Admin search"),
 * each combined with the other filters and with keyset paging.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { processAsOf } from '../processing/helpers.ts'

const A = '/admin/api/v1'

async function get(server: TestServer, path: string): Promise<any> {
  const res = await server.request('GET', `${A}${path}`, { key: ADMIN_TOKEN })
  assert.equal(res.status, 200, `${path}: ${res.text}`)
  return res.body
}

async function createUser(server: TestServer, email: string, externalId?: string): Promise<any> {
  const res = await server.request('POST', `${A}/users`, { key: ADMIN_TOKEN, json: { user: { email, external_id: externalId } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

test('GET /users?email=: exact, whatever the case; no partial or pattern match', async (t) => {
  const server = await startTestServer(t)
  const alice = await createUser(server, 'Alice.Smith@Example.com', 'cus_1')
  await createUser(server, 'alice.smith@example.co', 'cus_2')
  await createUser(server, 'bob@example.com')
  for (const email of ['Alice.Smith@Example.com', 'alice.smith@example.com', 'ALICE.SMITH@EXAMPLE.COM']) {
    assert.deepEqual(await get(server, `/users?email=${encodeURIComponent(email)}`), { users: [alice], next_after: null }, email)
  }
  for (const email of ['alice.smith', 'Alice.Smith@Example.co%', '%25example.com', 'alice.smith@example.com ', '_lice.smith@example.com']) {
    assert.deepEqual(await get(server, `/users?email=${encodeURIComponent(email)}`), { users: [], next_after: null }, email)
  }
})

test('GET /users?external_id=: exact and case-sensitive; several users may share one, paged by id', async (t) => {
  const server = await startTestServer(t)
  const first = await createUser(server, 'one@example.com', 'shop-42')
  await createUser(server, 'two@example.com', 'shop-4')
  const third = await createUser(server, 'three@example.com', 'shop-42')
  await createUser(server, 'four@example.com')
  assert.deepEqual(await get(server, '/users?external_id=shop-42'), { users: [first, third], next_after: null })
  assert.deepEqual(await get(server, '/users?external_id=shop-42&limit=1'), { users: [first], next_after: first.id })
  assert.deepEqual(await get(server, `/users?external_id=shop-42&after=${first.id}`), { users: [third], next_after: null })
  for (const externalId of ['SHOP-42', 'shop', 'shop-42 ', 'shop-%', 'shop-4_']) {
    assert.deepEqual(await get(server, `/users?external_id=${encodeURIComponent(externalId)}`), { users: [], next_after: null }, externalId)
  }
  // Both filters: both must match.
  assert.deepEqual(await get(server, '/users?email=THREE@example.com&external_id=shop-42'), { users: [third], next_after: null })
  assert.deepEqual(await get(server, '/users?email=one@example.com&external_id=shop-4'), { users: [], next_after: null })
  // No filter (or an empty one): everyone, as before.
  assert.equal((await get(server, '/users?email=&external_id=')).users.length, 4)
})

/** Alice's subscription is due on the 20th, Bob's on the 21st; three months processed. */
async function withInstallments(t: import('node:test').TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  const bob = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const line = [{ subscribable_id: item, quantity: 1 }]
  await createSubscription(server, alice.key, { actionable_date: '2026-01-20', interval_units: 'month', line_items_attributes: line })
  await createSubscription(server, bob.key, { actionable_date: '2026-01-21', interval_units: 'month', line_items_attributes: line })
  for (const date of ['2026-01-21', '2026-02-21', '2026-03-21']) await processAsOf(server, date)
  const all = (await get(server, '/installments?limit=100')).installments as any[]
  assert.deepEqual(all.map((i) => i.due_date), ['2026-01-20', '2026-01-21', '2026-02-20', '2026-02-21', '2026-03-20', '2026-03-21'])
  const dues = async (query: string): Promise<string[]> => (await get(server, `/installments?${query}`)).installments.map((i: any) => i.due_date)
  return { server, alice, bob, all, dues }
}

test('GET /installments?user_id=: the installments of that customer\'s subscriptions, paged', async (t) => {
  const { server, alice, bob, all, dues } = await withInstallments(t)
  const alices = all.filter((i) => i.user.id === alice.id)
  assert.deepEqual(await get(server, `/installments?user_id=${alice.id}`), { installments: alices, next_after: null })
  assert.deepEqual(await dues(`user_id=${bob.id}`), ['2026-01-21', '2026-02-21', '2026-03-21'])
  assert.deepEqual(await get(server, `/installments?user_id=${alice.id}&limit=2`), { installments: alices.slice(0, 2), next_after: alices[1].id })
  assert.deepEqual(await get(server, `/installments?user_id=${alice.id}&after=${alices[1].id}`), { installments: alices.slice(2), next_after: null })
  assert.deepEqual(await get(server, '/installments?user_id=999999'), { installments: [], next_after: null })
})

test('GET /installments?due_after=&due_before=: both bounds exclusive, combined with each other and user_id', async (t) => {
  const { alice, bob, dues } = await withInstallments(t)
  assert.deepEqual(await dues('due_after=2026-01-20'), ['2026-01-21', '2026-02-20', '2026-02-21', '2026-03-20', '2026-03-21'])
  assert.deepEqual(await dues('due_before=2026-02-21'), ['2026-01-20', '2026-01-21', '2026-02-20'])
  assert.deepEqual(await dues('due_after=2026-01-20&due_before=2026-03-20'), ['2026-01-21', '2026-02-20', '2026-02-21'])
  assert.deepEqual(await dues('due_after=2026-02-20&due_before=2026-02-20'), [])
  assert.deepEqual(await dues('due_after=2026-03-21'), [])
  assert.deepEqual(await dues(`user_id=${alice.id}&due_before=2026-03-01`), ['2026-01-20', '2026-02-20'])
  assert.deepEqual(await dues(`user_id=${bob.id}&due_after=2026-02-21`), ['2026-03-21'])
  assert.deepEqual(await dues(`user_id=${bob.id}&due_after=2026-01-01&due_before=2026-12-31&state=pending&limit=2`), ['2026-01-21', '2026-02-21'])
})
