/**
 * Issue 30 on PostgreSQL: GET's reads that wait for a connection travel together, one simple query
 * of EXECUTEs a round trip (store/postgres/read-batch.ts). Each read must get its own answer, a
 * failing one its own error, and a pooler that keeps no prepared statements must turn it off
 * without a wrong answer.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { ON_POSTGRES, newTestLocation } from '../helpers/store.ts'
import { readBatch } from '../../src/store/postgres/read-batch.ts'
import { Outage } from '../../src/store/unavailable.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

/** A pool of `max` connections on a fresh schema, with a table of squares, and how many times a connection was taken. */
async function squares(t: TestContext, max: number) {
  const at = await newTestLocation()
  const pool = new pg.Pool({ connectionString: at.location, max })
  t.after(async () => {
    await pool.end()
    await at.remove()
  })
  await pool.query('CREATE TABLE squares (n int PRIMARY KEY, square int NOT NULL, word text)')
  await pool.query("INSERT INTO squares SELECT n, n * n, 'it''s ' || n FROM generate_series(1, 50) n")
  let taken = 0
  pool.on('acquire', () => taken++)
  return { pool, taken: () => taken }
}

const SQUARE = 'SELECT square, word FROM squares WHERE n = $1'
const HALF = 'SELECT n / 2 AS half FROM squares WHERE n = $1'

test('reads waiting for the one connection go together in one round trip, each answered its own row', async (t) => {
  const { pool, taken } = await squares(t, 1)
  const mode = { batching: true }
  const reads = readBatch(pool, new Outage(), mode, 1)
  const ns = Array.from({ length: 30 }, (_, i) => i + 1)
  const answers = await Promise.all(ns.map((n) => (n % 3 === 0 ? reads.one<{ half: number }>(HALF, [n]) : reads.one<{ square: number; word: string }>(SQUARE, [n]))))
  answers.forEach((row, i) => {
    const n = i + 1
    assert.deepEqual(row, n % 3 === 0 ? { half: Math.floor(n / 2) } : { square: n * n, word: `it's ${n}` })
  })
  assert.ok(taken() <= 2, `thirty reads took the connection ${taken()} times`)
  assert.equal(await reads.one(SQUARE, [99]), undefined, 'no row answers undefined')
  assert.equal(mode.batching, true)
})

test('a read that fails among others fails alone: the others get their answers', async (t) => {
  const { pool } = await squares(t, 1)
  const reads = readBatch(pool, new Outage(), { batching: true }, 1)
  const DIVIDE = 'SELECT 100 / ($1::int - 5) AS q'
  const settled = await Promise.allSettled([1, 2, 5, 6, 7].map((n) => reads.one<{ q: number }>(DIVIDE, [n])))
  assert.deepEqual(settled.map((s) => (s.status === 'fulfilled' ? s.value?.q : (s.reason as { code?: string }).code)), [-25, -33, '22012', 100, 50])
})

test('prepared statements lost between round trips (a pooler) turn batching off, and every read still gets its answer', async (t) => {
  const { pool } = await squares(t, 1)
  const mode = { batching: true }
  const reads = readBatch(pool, new Outage(), mode, 1)
  assert.deepEqual(await Promise.all([2, 3].map((n) => reads.one(SQUARE, [n]))), [{ square: 4, word: "it's 2" }, { square: 9, word: "it's 3" }])
  // What a pooler in transaction mode does: the next round trip lands where nothing was prepared.
  await pool.query('DEALLOCATE ALL')
  assert.deepEqual(await Promise.all([4, 5].map((n) => reads.one(SQUARE, [n]))), [{ square: 16, word: "it's 4" }, { square: 25, word: "it's 5" }])
  assert.equal(mode.batching, false, 'batching is off for good')
  assert.deepEqual(await reads.one(SQUARE, [6]), { square: 36, word: "it's 6" })
})

test('with batching off (a pooler found before), reads go one a round trip', async (t) => {
  const { pool, taken } = await squares(t, 2)
  const reads = readBatch(pool, new Outage(), { batching: false }, 2)
  const answers = await Promise.all([1, 2, 3, 4].map((n) => reads.one<{ square: number }>(SQUARE, [n])))
  assert.deepEqual(answers.map((a) => a?.square), [1, 4, 9, 16])
  assert.equal(taken(), 4)
})
