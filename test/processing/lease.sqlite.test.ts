import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { PROCESSING_LEASE } from '../../src/processing/lease.ts'
import { serviceClock } from '../../src/clock.ts'
import { openTestStore } from '../helpers/store.ts'
import { seedDueSubscriptions } from './helpers.ts'

/**
 * The processing lease on SQLite (test/processing/lease.test.ts has the rules every backend
 * keeps): a process on another host cannot be asked whether it lives, so its lease is trusted
 * until it expires. PostgreSQL sees whether the holder's process is connected and takes over a
 * lease whose holder is not.
 */
const DUE = '2026-02-01'
const clock = serviceClock('UTC', DUE)

async function setup(t: import('node:test').TestContext, due = 5): Promise<Store> {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  await seedDueSubscriptions(store, due, DUE)
  return store
}

/** Another processor takes the lease (free, expired, or already its own) until `expiresAt`. */
const hold = (store: Store, holder: string, expiresAt: number): Promise<void> =>
  store.write(async (tx) => assert.equal(await tx.leases.acquire(PROCESSING_LEASE, holder, expiresAt, Date.now(), () => false), undefined))

test('a holder on another host is trusted until its lease expires', async (t) => {
  const store = await setup(t)
  await hold(store, 'elsewhere:1:abc', Date.now() + 60_000)
  assert.equal((await runProcessor(store, { clock })).ran, false)
  await hold(store, 'elsewhere:1:abc', Date.now() - 1)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [true, 5])
})
