import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { holdLease, LEASE_DUE, leaseTestStore } from './helpers.ts'

/**
 * The processing lease on SQLite (test/processing/lease.test.ts has the rules every backend
 * keeps): a process on another host cannot be asked whether it lives, so its lease is trusted
 * until it expires. PostgreSQL sees whether the holder's process is connected and takes over a
 * lease whose holder is not.
 */
const DUE = LEASE_DUE
const clock = serviceClock('UTC', DUE)
const setup = leaseTestStore
const hold = holdLease

test('a holder on another host is trusted until its lease expires', async (t) => {
  const store = await setup(t)
  await hold(store, 'elsewhere:1:abc', Date.now() + 60_000)
  assert.equal((await runProcessor(store, { clock })).ran, false)
  await hold(store, 'elsewhere:1:abc', Date.now() - 1)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [true, 5])
})
