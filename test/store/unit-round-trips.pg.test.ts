/**
 * Issue 30 on PostgreSQL: a unit's statements travel in as few round trips as their answers allow
 * (store/postgres/unit-sql.ts). BEGIN and the writes nobody reads wait for the next statement that
 * answers something, or for COMMIT; the values travel as literals of prepared statements and must
 * reach the server exactly as parameters would; a write that waited and fails fails its unit.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { ON_POSTGRES, openTestStore, postgresOf } from '../helpers/store.ts'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { StatementsLost, unitSql } from '../../src/store/postgres/unit-sql.ts'
import { CredentialsMoved } from '../../src/store/api.ts'
import { Secret, type Queryable } from '../../src/store/postgres/sql.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

interface Counted {
  readonly db: Queryable
  readonly client: pg.PoolClient
  /** Round trips sent so far, PREPAREs apart (a connection's first use of a statement). */
  trips(): number
  readonly texts: string[]
}

/** Runs `body` with a client of a fresh test schema whose queries are counted; the client goes back before the store closes. */
async function withCountedClient(t: TestContext, body: (c: Counted) => Promise<void>): Promise<void> {
  const { store } = await openTestStore(t)
  const client = await postgresOf(store).pool.connect()
  const texts: string[] = []
  const db: Queryable = {
    query: (config) => {
      texts.push(config.text)
      return client.query(config)
    },
  }
  try {
    await body({ db, client, trips: () => texts.filter((text) => !text.startsWith('PREPARE ')).length, texts })
  } finally {
    client.release()
  }
}

test('writes nobody reads wait for the next answer or for COMMIT: BEGIN, a read, two writes and COMMIT are two round trips', (t) => withCountedClient(t, async ({ db, client, trips, texts }) => {
  await client.query('CREATE TABLE trips (id int PRIMARY KEY, n int NOT NULL)')
  await client.query('INSERT INTO trips VALUES (1, 0), (2, 0)')
  for (let round = 1; round <= 2; round++) {
    texts.length = 0
    const sql = unitSql(db, preparedOn(client))
    assert.equal(trips(), 0, 'nothing is sent before the unit asks for an answer')
    const row = await sql.one<{ n: number }>('SELECT n FROM trips WHERE id = $1 FOR UPDATE', [1])
    assert.equal(row?.n, round - 1)
    assert.equal(trips(), 1, 'BEGIN went with the read')
    await sql.later('UPDATE trips SET n = $1 WHERE id = $2', [round, 1])
    await sql.later('UPDATE trips SET n = $1 WHERE id = $2', [round, 2])
    assert.equal(trips(), 1, 'the writes wait')
    await sql.end('COMMIT')
    assert.equal(trips(), 2, 'the writes went with COMMIT')
    // The first round PREPAREd its three statements once; the second needs none.
    assert.equal(texts.filter((text) => text.startsWith('PREPARE ')).length, round === 1 ? 2 : 0)
  }
  assert.deepEqual((await client.query('SELECT n FROM trips ORDER BY id')).rows, [{ n: 2 }, { n: 2 }])
}))

test('a unit that asks nothing sends nothing; one that only writes sends its writes with BEGIN and COMMIT in one round trip', (t) => withCountedClient(t, async ({ db, client, trips }) => {
  await client.query('CREATE TABLE quiet (id int PRIMARY KEY)')
  await unitSql(db, preparedOn(client)).end('COMMIT')
  assert.equal(trips(), 0)
  const sql = unitSql(db, preparedOn(client))
  await sql.later('INSERT INTO quiet VALUES ($1)', [7])
  await sql.end('COMMIT')
  assert.equal(trips(), 1)
  assert.deepEqual((await client.query('SELECT id FROM quiet')).rows, [{ id: 7 }])
}))

test('a write that waited and fails rejects the statement it travelled with, and nothing of the unit is committed', (t) => withCountedClient(t, async ({ db, client }) => {
  await client.query('CREATE TABLE strict (id int PRIMARY KEY, n int NOT NULL CHECK (n > 0))')
  await client.query('INSERT INTO strict VALUES (1, 1)')
  const sql = unitSql(db, preparedOn(client))
  await sql.later('INSERT INTO strict VALUES ($1, $2)', [2, 2])
  await sql.later('UPDATE strict SET n = $1 WHERE id = $2', [0, 1])
  await assert.rejects(sql.end('COMMIT'), (err: unknown) => (err as { code?: string }).code === '23514')
  assert.equal(sql.begun, true, 'the unit must roll back what it began')
  await client.query('ROLLBACK')
  assert.deepEqual((await client.query('SELECT id, n FROM strict ORDER BY id')).rows, [{ id: 1, n: 1 }])

  const again = unitSql(db, preparedOn(client))
  await again.later('UPDATE strict SET n = $1 WHERE id = $2', [0, 1])
  await assert.rejects(again.one('SELECT n FROM strict WHERE id = $1', [1]), (err: unknown) => (err as { code?: string }).code === '23514')
  await client.query('ROLLBACK')
}))

test('values reach the server as literals exactly as they would as parameters: quotes, backslashes, non-ASCII, JSON, arrays, NULL', (t) => withCountedClient(t, async ({ db, client, texts }) => {
  const tricky = "O'Brien \\ \\' \" ; DROP TABLE users; -- $$ $1 \n\t ü€😀 E'\\x41'"
  const values = [tricky, 42, -7.5, true, false, null, undefined, [1, 2, 3], ['a,b', 'c"d', "e'f", null, '\\'], JSON.stringify({ q: tricky }), '', '2026-11-28T06:00:00.123Z']
  const text = `SELECT $1::text AS a, $2::int AS b, $3::numeric AS c, $4::boolean AS d, $5::boolean AS e, $6::text AS f, $7::int AS g,
    $8::bigint[] AS h, $9::text[] AS i, $10::jsonb AS j, $11::text AS k, $12::text AS l`
  const expected = (await client.query(text, values)).rows[0]
  const sql = unitSql(db, preparedOn(client))
  assert.deepEqual(await sql.one(text, values), expected)
  await sql.end('ROLLBACK')
  assert.equal(expected.a, tricky)
  assert.ok(texts.some((sent) => sent.includes('EXECUTE ')), 'the values went as literals of a prepared statement')
}))

test('text with a NUL goes as a parameter, so the server refuses it whole as it always did (never a cut statement)', (t) => withCountedClient(t, async ({ db, client, texts }) => {
  const sql = unitSql(db, preparedOn(client))
  await assert.rejects(sql.one('SELECT $1::text AS a', ['before\u0000after']), (err: unknown) => (err as { code?: string }).code === '22021')
  assert.ok(!texts.some((sent) => sent.includes('\u0000')), 'no statement text carried the NUL')
  await client.query('ROLLBACK')
}))

test('a Secret goes as a parameter, never into a statement\'s text (pg_stat_activity, a failed statement\'s log line)', (t) => withCountedClient(t, async ({ db, client, texts }) => {
  const sql = unitSql(db, preparedOn(client))
  await sql.later('SELECT $1::text', ['no secret'])
  const row = await sql.one<{ a: string; b: string }>('SELECT $1::text AS a, $2::text AS b', [new Secret("whsec_it's-mine"), 'plain'])
  assert.deepEqual(row, { a: "whsec_it's-mine", b: 'plain' })
  await sql.end('ROLLBACK')
  assert.ok(!texts.some((sent) => sent.includes('whsec_')), 'no statement text carried the secret')
  assert.ok(texts.some((sent) => sent.includes("EXECUTE ") && sent.includes("'no secret'")), 'what waited still went as a literal')
}))

test('a cached key to confirm: its generation travels with BEGIN and the first answer; a moved one rejects with CredentialsMoved', (t) => withCountedClient(t, async ({ db, client, trips }) => {
  const generation = Number((await client.query('SELECT n FROM credential_generations WHERE id = 1')).rows[0].n)
  const held = { generation, verified: false }
  const sql = unitSql(db, preparedOn(client), held)
  assert.equal((await sql.one<{ one: number }>('SELECT 1 AS one'))?.one, 1)
  assert.equal(held.verified, true)
  assert.equal(trips(), 1)
  await sql.end('COMMIT')

  const moved = { generation: generation + 1, verified: false }
  const stale = unitSql(db, preparedOn(client), moved)
  await assert.rejects(stale.one('SELECT 1 AS one'), CredentialsMoved)
  assert.equal(moved.verified, false)
  await client.query('ROLLBACK')
  // A unit that asks nothing still confirms the key before it ends.
  const idle = unitSql(db, preparedOn(client), { generation: generation + 1, verified: false })
  await assert.rejects(idle.end('COMMIT'), CredentialsMoved)
  await client.query('ROLLBACK')
}))

test("the API's hot writes on PostgreSQL: a line item's PATCH and a skip are two round trips each, a create three", async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store, { prices: { USD: '12.00' } })
  const create = { line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }, { subscribable_id: coffee, quantity: 2 }] }
  const sub = await createSubscription(server, user.key, create)
  const itemId = sub.line_items[0].id as number

  // Each unit's statements: the queries of the connection that sent BEGIN, up to its COMMIT.
  const sent = new Map<object, string[]>()
  const query = pg.Client.prototype.query
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string }
    const text = typeof config === 'string' ? config : config?.text ?? ''
    if (!text.startsWith('PREPARE ')) sent.set(this, [...(sent.get(this) ?? []), text])
    return (query as (...a: unknown[]) => unknown).apply(this, args)
  } as typeof query
  t.after(() => (pg.Client.prototype.query = query))
  const tripsOf = async (request: () => Promise<{ status: number }>): Promise<number> => {
    sent.clear()
    assert.equal((await request()).status, 200)
    const units = [...sent.values()].map((texts) => texts.slice(texts.findIndex((x) => x.startsWith('BEGIN')))).filter((texts) => texts[0]?.startsWith('BEGIN'))
    assert.equal(units.length, 1, 'one unit')
    const unit = units[0] as string[]
    assert.match(unit.at(-1) as string, /COMMIT$/)
    return unit.findIndex((x) => x.endsWith('COMMIT')) + 1
  }
  // Twice each: the first use of a statement on a connection also PREPAREs it (not counted).
  for (let i = 1; i <= 2; i++) {
    const patch = await tripsOf(() => server.request('PATCH', `/api/v1/line_items/${itemId}`, { key: user.key, json: { subscription_line_item: { quantity: 3 + i } } }))
    assert.equal(patch, 2)
    const skip = await tripsOf(() => server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key }))
    assert.equal(skip, 2)
    const made = await tripsOf(() => server.request('POST', '/api/v1/subscriptions', { key: user.key, json: { subscription: { interval_length: 1, ...create } } }))
    assert.equal(made, 3)
  }
  const events = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: user.key })
  const types = (events.body.events as { type: string }[]).map((e) => e.type)
  assert.deepEqual(types.slice(0, 4), ['subscription.skipped', 'line_item.updated', 'subscription.skipped', 'line_item.updated'])
})

test('a connection whose prepared statements are gone (a pooler in transaction mode) is StatementsLost; without PREPARE, one statement a round trip as parameters', (t) => withCountedClient(t, async ({ db, client, trips, texts }) => {
  await client.query('CREATE TABLE pooled (id int PRIMARY KEY, n int NOT NULL)')
  await client.query('INSERT INTO pooled VALUES (1, 0)')
  const map = preparedOn(client)
  const first = unitSql(db, map)
  await first.later('UPDATE pooled SET n = $1 WHERE id = $2', [1, 1])
  await first.end('COMMIT')
  // Another server connection now serves this client: what it PREPAREd is not there.
  for (const { name } of (await client.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'b%'")).rows) await client.query(`DEALLOCATE ${name}`)
  const lost = unitSql(db, map)
  await lost.later('UPDATE pooled SET n = $1 WHERE id = $2', [2, 1])
  await assert.rejects(lost.end('COMMIT'), StatementsLost)
  await client.query('ROLLBACK')
  assert.deepEqual((await client.query('SELECT n FROM pooled')).rows, [{ n: 1 }])

  const plain = unitSql(db, undefined, { generation: Number((await client.query('SELECT n FROM credential_generations WHERE id = 1')).rows[0].n), verified: false })
  texts.length = 0
  assert.equal((await plain.one<{ n: number }>('SELECT n FROM pooled WHERE id = $1 FOR UPDATE', [1]))?.n, 1)
  await plain.later('UPDATE pooled SET n = $1 WHERE id = $2', [3, 1])
  await plain.end('COMMIT')
  assert.equal(trips(), 4, 'BEGIN with the generation, the read, the write, COMMIT')
  assert.ok(!texts.some((text) => text.includes('EXECUTE') || text.includes('PREPARE')))
  assert.deepEqual((await client.query('SELECT n FROM pooled')).rows, [{ n: 3 }])
}))

test('a store whose prepared statements vanish between units (a pooler) runs the unit again one statement a round trip, and keeps answering', async (t) => {
  // One connection, so the PATCH after the DEALLOCATE meets the connection that PREPAREd its statements.
  const server = await startTestServer(t, { REPLENISH_DB_POOL: '1' })
  const user = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store, { prices: { USD: '12.00' } })
  const sub = await createSubscription(server, user.key, { line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
  const itemId = sub.line_items[0].id as number
  const patch = (quantity: number) => server.request('PATCH', `/api/v1/line_items/${itemId}`, { key: user.key, json: { subscription_line_item: { quantity } } })
  assert.equal((await patch(2)).status, 200)
  // What a pooler does: the next transaction meets a server connection without this one's PREPAREs.
  const { pool } = postgresOf(server.store)
  const c = await pool.connect()
  const names = (await c.query("SELECT name FROM pg_prepared_statements WHERE name LIKE 'b%'")).rows
  assert.ok(names.length > 0, 'the PATCH PREPAREd its statements')
  for (const { name } of names) await c.query(`DEALLOCATE ${name}`)
  c.release()
  for (const quantity of [3, 4]) {
    const res = await patch(quantity)
    assert.equal(res.status, 200, res.text)
    assert.equal(res.body.quantity, quantity)
  }
  const shown = await server.request('GET', `/api/v1/line_items/${itemId}`, { key: user.key })
  assert.equal(shown.body.quantity, 4)
  const events = await server.request('GET', `/api/v1/subscriptions/${sub.id}/events`, { key: user.key })
  assert.deepEqual(events.body.events.slice(0, 3).map((e: { data: { object: { quantity: number } } }) => e.data.object.quantity), [4, 3, 2])
})

/** Each connection's prepared statements, as unit.ts keeps them. */
const prepared = new WeakMap<object, Map<string, Promise<void>>>()
function preparedOn(client: object): Map<string, Promise<void>> {
  let map = prepared.get(client)
  if (!map) prepared.set(client, (map = new Map()))
  return map
}
