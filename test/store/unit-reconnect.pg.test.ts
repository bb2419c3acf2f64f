/**
 * Issue 25 items 1 and 6 at the store: a unit whose connection is terminated before its COMMIT
 * (a restart, `pg_terminate_backend`, a cut network) committed nothing, so the store runs it once
 * more on a fresh connection before its caller hears of it; a second loss fails it as
 * StoreUnavailable (a 503), and still nothing of it is committed. The terminated connection never
 * takes the process down (node-pg's 'error' on a checked-out client is listened to).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ON_POSTGRES, openTestStore, postgresOf } from '../helpers/store.ts'
import { StoreUnavailable } from '../../src/store/unavailable.ts'
import { sessionName } from '../../src/store/postgres/store.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

/** Terminates this process's sessions that sit inside a transaction: the unit that asks is the only one. */
const TERMINATE_UNIT = `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
  WHERE datname = current_database() AND application_name = $1 AND state = 'idle in transaction'`

test('a unit whose connection is terminated before COMMIT runs once more on a fresh connection; a second loss is StoreUnavailable, nothing committed', async (t) => {
  const { store } = await openTestStore(t)
  const { pool } = postgresOf(store)
  const terminate = async (): Promise<number> => (await pool.query<{ n: number }>(TERMINATE_UNIT, [sessionName()])).rows[0]?.n ?? 0
  const emails = async (): Promise<string[]> => (await pool.query<{ email: string }>("SELECT email FROM users WHERE email LIKE '%@reconnect.example' ORDER BY email")).rows.map((r) => r.email)

  // Lost once: the second run commits, once.
  let runs = 0
  const id = await store.write(async (tx) => {
    runs++
    const user = await tx.accounts.createUser('once@reconnect.example', null)
    if (runs === 1) assert.equal(await terminate(), 1, 'the unit\'s own connection was terminated')
    await tx.accounts.createUser(`second-${runs}@reconnect.example`, null)
    return user.id
  })
  assert.equal(runs, 2)
  assert.ok(id > 0)
  assert.deepEqual(await emails(), ['once@reconnect.example', 'second-2@reconnect.example'])

  // Lost every time: run twice in all, then StoreUnavailable; nothing of it is in the database.
  let again = 0
  await assert.rejects(
    store.write(async (tx) => {
      again++
      await tx.accounts.createUser(`lost-${again}@reconnect.example`, null)
      await terminate()
      await tx.accounts.createUser(`after-${again}@reconnect.example`, null)
    }),
    (err: unknown) => err instanceof StoreUnavailable && /^the connection to PostgreSQL was lost \(/.test(err.message) && err.retryAfterSeconds === 2,
  )
  assert.equal(again, 2)
  assert.deepEqual(await emails(), ['once@reconnect.example', 'second-2@reconnect.example'])
  // The store goes on: the lost connections left the pool.
  await store.write(async (tx) => tx.accounts.createUser('later@reconnect.example', null))
  assert.equal((await emails()).length, 3)
})
