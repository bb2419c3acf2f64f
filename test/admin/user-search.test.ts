/**
 * Issue 28 item 4 (C18 "Search"): `GET /admin/api/v1/users?q=` matches a case-insensitive
 * (ASCII) prefix of the email, the external id or the part of the email after `@`, through
 * indexes on both backends (migration 13); `GET /subscriptions?paused=true|false`, strict.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { PREFIX_INDEXED as SQLITE_PREFIX_INDEXED } from '../../src/store/sqlite/accounts-store.ts'
import { PREFIX_INDEXED as POSTGRES_PREFIX_INDEXED } from '../../src/store/postgres/accounts.ts'
import { ADMIN_TOKEN, createSubscription, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { bulkUsers, testSql } from '../helpers/rows.ts'
import { postgresOf } from '../helpers/store.ts'

const A = '/admin/api/v1'

async function emails(server: TestServer, query: string): Promise<string[]> {
  const res = await server.request('GET', `${A}/users?${query}`, { key: ADMIN_TOKEN })
  assert.equal(res.status, 200, `${query}: ${res.text}`)
  return res.body.users.map((u: { email: string | null; external_id: string | null }) => u.email ?? `(erased ${u.external_id})`)
}

async function users(store: Store, list: readonly [string, string | null][]): Promise<void> {
  for (const [email, externalId] of list) await store.write((tx) => tx.accounts.createUser(email, externalId))
}

const q = (text: string): string => `q=${encodeURIComponent(text)}`

test('q= is a prefix of the email, the external id or the email after @, in any ASCII case; nothing in the middle', async (t) => {
  const server = await startTestServer(t)
  await users(server.store, [
    ['Alice.Smith@Example.com', 'CUS_42'],
    ['bob@shop.example', 'cus_7'],
    ['carol@example.org', null],
    ['smith.jones@mail.example', 'alice-ext'],
  ])
  assert.deepEqual(await emails(server, q('alice')), ['Alice.Smith@Example.com', 'smith.jones@mail.example'])
  assert.deepEqual(await emails(server, q('ALICE.SMITH@EXAMPLE.COM')), ['Alice.Smith@Example.com'])
  assert.deepEqual(await emails(server, q('cus_4')), ['Alice.Smith@Example.com'])
  assert.deepEqual(await emails(server, q('CUS_')), ['Alice.Smith@Example.com', 'bob@shop.example'])
  assert.deepEqual(await emails(server, q('example.')), ['Alice.Smith@Example.com', 'carol@example.org'])
  assert.deepEqual(await emails(server, q('Example.COM')), ['Alice.Smith@Example.com'])
  assert.deepEqual(await emails(server, q('shop')), ['bob@shop.example'])
  // A prefix only: not a part in the middle, not the part before @ of the domain.
  for (const text of ['lice', 'mith', '.com', 'example.com.', 'ob@', 'us_42']) assert.deepEqual(await emails(server, q(text)), [], text)
  // Spaces around are ignored; a blank q is no search.
  assert.deepEqual(await emails(server, q('  bob ')), ['bob@shop.example'])
  assert.equal((await emails(server, 'q=%20%20')).length, 4)
  assert.equal((await emails(server, 'q=')).length, 4)
})

test('q=: %, _ and \\ are plain characters; a prefix ending in @ takes in no [ ] ^ _ ` (the NOCASE range trap); non-ASCII letters as they are', async (t) => {
  const server = await startTestServer(t)
  await users(server.store, [
    ['a_b@example.com', null],
    ['axb@example.com', null],
    ['%off@example.com', 'x\\y'],
    ['ann@example.com', null],
    ['ann[1@example.com', null],
    ['ann_2@example.com', null],
    ['ann`3@example.com', null],
    ['anna@example.com', null],
    ['Élodie@example.com', 'ÉLO'],
  ])
  assert.deepEqual(await emails(server, q('a_')), ['a_b@example.com'])
  assert.deepEqual(await emails(server, q('%')), ['%off@example.com'])
  assert.deepEqual(await emails(server, q('x\\')), ['%off@example.com'])
  assert.deepEqual(await emails(server, q('x\\Y')), ['%off@example.com'])
  assert.deepEqual(await emails(server, q('ann@')), ['ann@example.com'])
  assert.deepEqual(await emails(server, q('ANN')), ['ann@example.com', 'ann[1@example.com', 'ann_2@example.com', 'ann`3@example.com', 'anna@example.com'])
  // ASCII folds; other letters are compared as written, by both databases alike.
  assert.deepEqual(await emails(server, q('Élo')), ['Élodie@example.com'])
  assert.deepEqual(await emails(server, q('élo')), [])
  assert.deepEqual(await emails(server, q('ÉL')), ['Élodie@example.com'])
})

test('q= pages by id with after= and limit=, combines with email= and external_id=, and finds an erased user by external id only', async (t) => {
  const server = await startTestServer(t)
  await users(server.store, [
    ['p1@example.com', 'ext-1'], ['other@example.net', 'ext-2'], ['p2@example.com', 'x'], ['p3@example.com', 'ext-3'],
  ])
  const all = (await server.request('GET', `${A}/users?${q('p')}`, { key: ADMIN_TOKEN })).body.users as { id: number; email: string }[]
  assert.deepEqual(all.map((u) => u.email), ['p1@example.com', 'p2@example.com', 'p3@example.com'])
  const first = (await server.request('GET', `${A}/users?${q('p')}&limit=2`, { key: ADMIN_TOKEN })).body
  assert.deepEqual([first.users.map((u: any) => u.email), first.next_after], [['p1@example.com', 'p2@example.com'], all[1]?.id])
  assert.deepEqual(await emails(server, `${q('p')}&after=${first.next_after}`), ['p3@example.com'])
  assert.deepEqual(await emails(server, `${q('ext-')}&email=P3@example.com`), ['p3@example.com'])
  assert.deepEqual(await emails(server, `${q('ext-')}&external_id=ext-2`), ['other@example.net'])
  const erased = all[0] as { id: number }
  assert.equal((await server.request('POST', `${A}/users/${erased.id}/erase`, { key: ADMIN_TOKEN })).status, 200)
  assert.deepEqual(await emails(server, q('p1')), [])
  assert.deepEqual(await emails(server, q('ext-1')), ['(erased ext-1)'])
})

test('q= with a NUL (and email=, external_id=) is a 422 naming it, on both databases (PostgreSQL cannot be sent one)', async (t) => {
  const server = await startTestServer(t)
  for (const name of ['q', 'email', 'external_id']) {
    const res = await server.request('GET', `${A}/users?${name}=a%00b`, { key: ADMIN_TOKEN })
    assert.deepEqual([res.status, res.body], [422, { [name]: ['must not contain a NUL character'] }], name)
  }
})

test('a prefix most users share and one few share answer the same pages as a scan would (SQLite reads them two ways)', async (t) => {
  const server = await startTestServer(t)
  await bulkUsers(server.store, 6000, 'many', 'big.example')
  await bulkUsers(server.store, 30, 'few', 'small.example')
  await bulkUsers(server.store, 6000, 'more', 'big.example')
  const everyone = await server.store.accounts.listUsers(0, 20_000)
  const expected = (prefix: string): number[] => everyone.filter((u) => [u.email, u.external_id, u.email?.split('@')[1]].some((v) => v?.toLowerCase().startsWith(prefix))).map((u) => u.id)
  for (const prefix of ['m', 'many1', 'big.', 'few', 'small', 'few-2', 'more-59', 'zzz']) {
    const want = expected(prefix)
    let after = 0
    const got: number[] = []
    for (let page = 0; page < 3; page++) {
      const body = (await server.request('GET', `${A}/users?${q(prefix)}&limit=100&after=${after}`, { key: ADMIN_TOKEN })).body
      got.push(...body.users.map((u: { id: number }) => u.id))
      if (body.next_after === null) break
      after = body.next_after
    }
    assert.deepEqual(got, want.slice(0, got.length), prefix)
    assert.equal(got.length, Math.min(want.length, 300), prefix)
  }
})

test('the search is indexed: each of its three expressions is read through an index (migration 13), on either database', async (t) => {
  const server = await startTestServer(t)
  const { store } = server
  if (store.kind === 'postgres') {
    // Tables this small are read whole by preference: forbid that, to see the indexes can serve.
    const client = await postgresOf(store).pool.connect()
    try {
      await client.query('SET enable_seqscan = off')
      for (const [expression, index] of POSTGRES_PREFIX_INDEXED.map((e, i) => [e, ['users_email', 'users_external_id_lower', 'users_email_domain'][i]])) {
        const plan = (await client.query(`EXPLAIN SELECT id FROM users WHERE ${expression} >= 'ab' AND ${expression} < 'ac'`)).rows.map((r) => r['QUERY PLAN']).join('\n')
        assert.match(plan, new RegExp(`Index (Only )?Scan using ${index} |Bitmap Index Scan on ${index}\\b`), `${expression}:\n${plan}`)
      }
    } finally {
      await client.query('RESET enable_seqscan')
      client.release()
    }
    return
  }
  for (const [expression, index] of SQLITE_PREFIX_INDEXED.map((e, i) => [e, ['sqlite_autoindex_users_1', 'users_external_id_lower', 'users_email_domain'][i]])) {
    const plan = (await testSql(store).all(`EXPLAIN QUERY PLAN SELECT id FROM users WHERE ${expression} >= 'ab' AND ${expression} < 'ac'`)).map((r) => r['detail']).join('\n')
    assert.match(plan, new RegExp(`USING (COVERING )?INDEX ${index} `), `${expression}:\n${plan}`)
  }
})

test('GET /subscriptions?paused=true|false: only paused ones, or only the others; anything else is a 422 in the C13 shape', async (t) => {
  const server = await startTestServer(t)
  const alice = await seedUser(server.store)
  const running = await createSubscription(server, alice.key, {})
  const paused = await createSubscription(server, alice.key, {})
  const canceled = await createSubscription(server, alice.key, {})
  await server.request('POST', `${A}/subscriptions/${paused.id}/pause`, { key: ADMIN_TOKEN })
  await server.request('POST', `${A}/subscriptions/${canceled.id}/cancel`, { key: ADMIN_TOKEN })
  const ids = async (query: string): Promise<number[]> => {
    const res = await server.request('GET', `${A}/subscriptions?${query}`, { key: ADMIN_TOKEN })
    assert.equal(res.status, 200, res.text)
    return res.body.subscriptions.map((s: { id: number; paused: boolean }) => s.id)
  }
  assert.deepEqual(await ids('paused=true'), [paused.id])
  assert.deepEqual(await ids('paused=false'), [running.id, canceled.id])
  assert.deepEqual(await ids('paused=false&state=active'), [running.id])
  assert.deepEqual(await ids('paused=false&limit=1'), [running.id])
  assert.deepEqual(await ids('paused='), [running.id, paused.id, canceled.id])
  for (const value of ['1', '0', 'TRUE', 'yes', 'true ', 'null']) {
    const res = await server.request('GET', `${A}/subscriptions?paused=${encodeURIComponent(value)}`, { key: ADMIN_TOKEN })
    assert.deepEqual([res.status, res.body], [422, { paused: ['is not included in the list'] }], value)
  }
  const spanish = await server.request('GET', `${A}/subscriptions?paused=si`, { key: ADMIN_TOKEN, headers: { 'accept-language': 'es' } })
  assert.equal(spanish.status, 422)
  assert.deepEqual(Object.keys(spanish.body), ['paused'])
})
