/**
 * Issue 30 on PostgreSQL: a GET's body may be kept by the instance that rendered it
 * (store/postgres/kept-bodies.ts), but it is answered only when the database says, in that GET's
 * own statement, that every row it was made of is the version it was rendered from. So whatever
 * changes the rows (another instance, `replenish process`, a script in psql), the next GET of
 * every instance answers what the database holds now (C15), byte for byte what a fresh read renders.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { ON_POSTGRES, openStoreAt, openTestStore, postgresOf } from '../helpers/store.ts'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { KEPT_BODY_MS, KeptBodies, recent } from '../../src/store/postgres/kept-bodies.ts'
import { subscriptionsRepo } from '../../src/store/postgres/subscriptions.ts'
import { sqlOn } from '../../src/store/postgres/sql.ts'
import { readBatch } from '../../src/store/postgres/read-batch.ts'
import { Outage } from '../../src/store/unavailable.ts'
import type { Store } from '../../src/store/api.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

/** A server, a second instance's store on its database, and a subscription of two priced lines, read once (so kept). */
async function setup(t: TestContext) {
  const server = await startTestServer(t)
  const other = await openStoreAt(server.config.db)
  t.after(() => other.close())
  const user = await seedUser(server.store)
  const items = [await seedSubscribable(server.store, { prices: { USD: '12.50' } }), await seedSubscribable(server.store, { prices: { USD: '3.00', EUR: '2.80' }, discount: 1000 })]
  const sub = await createSubscription(server, user.key, {
    line_items_attributes: [{ subscribable_id: items[0], quantity: 1 }, { subscribable_id: items[1], quantity: 2 }],
  })
  const kept = postgresOf(server.store).keptBodies
  const get = async (): Promise<string> => {
    const res = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
    assert.equal(res.status, 200, res.text)
    return res.text
  }
  const sql = (text: string, ...args: unknown[]) => postgresOf(other).pool.query(text, args)
  await get()
  assert.ok(kept.size >= 1, 'the first GET kept the body')
  return { server, other, user, items, sub, kept, get, sql }
}

/** What a read renders now, without any kept body (the same render the store's writes use). */
async function fresh(store: Store, id: number): Promise<string | undefined> {
  return (await subscriptionsRepo(sqlOn(postgresOf(store).pool)).findJson(id))?.body
}

test('an unchanged subscription is answered from its kept body, byte for byte what a fresh read renders', async (t) => {
  const { server, sub, kept, get } = await setup(t)
  const hits = kept.hits
  const second = await get()
  assert.equal(kept.hits, hits + 1, 'the second GET was answered from the kept body')
  assert.equal(second, await fresh(server.store, sub.id))
})

test('every change another instance or a script makes shows at the next GET: the subscription, its line items, their prices and discounts', async (t) => {
  const { server, other, user, items, sub, kept, get, sql } = await setup(t)
  const line = sub.line_items[0].id
  const changes: [string, () => Promise<unknown>][] = [
    ['a column of the subscription (SQL)', () => sql('UPDATE subscriptions SET skip_count = 7 WHERE id = $1', sub.id)],
    ['a line item\'s quantity (SQL)', () => sql('UPDATE line_items SET quantity = 9 WHERE id = $1', line)],
    ['a line item added by the other instance', () => other.write((tx) => tx.subscriptions.addLineItem(sub.id, items[1] as number, 4, false))],
    ['a line item deleted (SQL)', () => sql('DELETE FROM line_items WHERE id = $1', line)],
    ['a price changed', () => sql("UPDATE subscribable_prices SET amount = 400, amount_text = CASE currency WHEN 'USD' THEN '4.00' ELSE '3.80' END WHERE subscribable_id = $1", items[1])],
    ['a price removed', () => sql('DELETE FROM subscribable_prices WHERE subscribable_id = $1 AND currency = $2', items[1], 'USD')],
    ['a price added', () => sql('INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit) VALUES ($1, $2, $3, $4, 2)', items[1], 'USD', 425, '4.25')],
    ['a discount changed', () => sql('UPDATE subscribables SET discount_bp = 2500 WHERE id = $1', items[1])],
    ['the currency changed', () => sql('UPDATE subscriptions SET currency = $1 WHERE id = $2', 'EUR', sub.id)],
    ['a skip through the API', () => server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })],
  ]
  let before = await get()
  for (const [what, change] of changes) {
    await change()
    const hits = kept.hits
    const after = await get()
    assert.equal(kept.hits, hits, `${what}: not answered from the kept body`)
    assert.equal(after, await fresh(server.store, sub.id), `${what}: the GET answers what a fresh read renders`)
    assert.notEqual(after, before, `${what}: the body changed`)
    before = after
    // And the new body is kept in turn.
    assert.equal(await get(), after)
    assert.equal(kept.hits, hits + 1, `${what}: the body read afresh is kept`)
  }
})

test('a subscription deleted elsewhere answers 404, and its kept body is forgotten', async (t) => {
  const { server, user, sub, kept, sql } = await setup(t)
  await sql('DELETE FROM line_items WHERE subscription_id = $1', sub.id)
  await sql('DELETE FROM events WHERE subscription_id = $1', sub.id)
  await sql('DELETE FROM subscriptions WHERE id = $1', sub.id)
  const size = kept.size
  const res = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
  assert.equal(res.status, 404)
  assert.equal(kept.size, size - 1)
})

test('a kept body answers with the credentials\' generation read in the same statement', async (t) => {
  const { server, sub, kept, sql } = await setup(t)
  await sql('UPDATE credential_generations SET n = n + 5 WHERE id = 1')
  const hits = kept.hits
  const found = await server.store.subscriptions.findJson(sub.id, true)
  assert.equal(kept.hits, hits + 1)
  const { rows } = await sql('SELECT n FROM credential_generations WHERE id = 1')
  assert.equal(found?.generation, Number(rows[0].n))
})

test('a kept body older than KEPT_BODY_MS is read again, even unchanged (transaction ids wrap around)', async (t) => {
  const { server, sub } = await setup(t)
  let now = 1_000_000
  const bodies = new KeptBodies(1024 * 1024, () => now)
  const pool = postgresOf(server.store).pool
  const repo = subscriptionsRepo(sqlOn(pool), { bodies, reads: readBatch(pool, new Outage(), { batching: true }, 2) })
  const first = await repo.findJson(sub.id)
  await repo.findJson(sub.id)
  assert.equal(bodies.hits, 1)
  now += KEPT_BODY_MS + 1
  const late = await repo.findJson(sub.id)
  assert.equal(bodies.hits, 1, 'read again, not answered from the old body')
  assert.equal(late?.body, first?.body)
  await repo.findJson(sub.id)
  assert.equal(bodies.hits, 2, 'and kept anew')
})

test('only the pool\'s reads keep bodies: a unit that reads between two writes of one row (one xmin) leaves nothing stale', async (t) => {
  const { server, sub, kept, get } = await setup(t)
  const { hits } = kept
  await server.store.write(async (tx) => {
    const locked = await tx.subscriptions.lock(sub.id)
    assert.ok(locked)
    const paused = await tx.subscriptions.update(locked, { paused: true })
    // Read inside the unit: were it kept, its versions would equal the committed row's.
    assert.match((await tx.subscriptions.findJson(sub.id))?.body ?? '', /"paused":true/)
    await tx.subscriptions.update(paused, { paused: false, skip_count: 5 })
  })
  assert.equal(kept.hits, hits, 'the unit used no kept body')
  const after = await get()
  assert.equal(after, await fresh(server.store, sub.id))
  assert.match(after, /"paused":false/)
  assert.match(after, /"skip_count":5/)
})

test('a budget of 0 keeps nothing: every GET reads the body', async (t) => {
  const { store } = await openTestStore(t, { readCacheBytes: 0 })
  const user = await seedUser(store)
  const id = await store.write((tx) => tx.subscriptions.create(user.id, {
    interval_length: 1, interval_units: 'month', actionable_date: '2026-02-01', anchor_day: 1, end_date: null,
    payment_method_id: null, payment_source_id: null, currency: 'USD', shipping_address: null, billing_address: null, line_items: [],
  }, '2026-01-01'))
  await store.subscriptions.findJson(id)
  await store.subscriptions.findJson(id)
  assert.equal(postgresOf(store).keptBodies.size, 0)
  assert.equal(postgresOf(store).keptBodies.hits, 0)
})

test('a transaction id is trusted as a version only when it is under 2^31 transactions old and not a permanent one (ids wrap around)', async (t) => {
  const { store } = await openTestStore(t)
  const { pool } = postgresOf(store)
  const now = BigInt((await pool.query('SELECT txid_current() % 4294967296 AS n')).rows[0].n)
  const xidAgo = (ago: bigint): string => String((((now - ago) % 4294967296n) + 4294967296n) % 4294967296n)
  const trusted = async (xid: string): Promise<boolean> => (await pool.query(`SELECT ${recent('$1::xid')} AS ok`, [xid])).rows[0].ok
  assert.equal(await trusted(xidAgo(1n)), true, 'written a moment ago')
  assert.equal(await trusted(xidAgo(2n ** 31n - 1000n)), true, 'just under 2^31 ago')
  assert.equal(await trusted(xidAgo(2n ** 31n + 1000n)), false, 'over 2^31 ago: age() wraps negative')
  assert.equal(await trusted('2'), false, 'the frozen id')
})
