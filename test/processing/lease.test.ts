import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { LeaseLost, PROCESSING_LEASE } from '../../src/processing/lease.ts'
import { serviceClock } from '../../src/clock.ts'
import { countRows, testSql } from '../helpers/rows.ts'
import { runSqlNow } from '../helpers/database.ts'
import { holdLease, LEASE_DUE, leaseTestStore } from './helpers.ts'

/** The processing lease: one processor at a time per database file, and no waiting on the dead. */
const DUE = LEASE_DUE
const clock = serviceClock('UTC', DUE)
const setup = leaseTestStore
const hold = holdLease
const leases = (store: Store) => testSql(store).all('SELECT name, holder, expires_at FROM leases')
const installments = (store: Store) => countRows(store, 'installments')

test('a lease held by a live processor: a schedule tick gives up at once, touching nothing', async (t) => {
  const store = await setup(t)
  const live = `${hostname()}:${process.pid}:someone`
  await hold(store, live, Date.now() + 60_000)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [false, 0])
  assert.equal(await installments(store), 0)
  assert.deepEqual((await leases(store)).map((l) => l['holder']), [live])
})

test('the CLI waits for the live holder to finish, says so once, then runs', async (t) => {
  const store = await setup(t)
  const live = `${hostname()}:${process.pid}:someone`
  await hold(store, live, Date.now() + 60_000)
  const waits: string[] = []
  setTimeout(() => void store.write((tx) => tx.leases.release(PROCESSING_LEASE, live)), 300)
  const s = await runProcessor(store, { clock, waitForLease: true, onWait: (h) => waits.push(h) })
  assert.deepEqual(waits, [live])
  assert.deepEqual([s.ran, s.installments], [true, 5])
  assert.deepEqual(await leases(store), [], 'released after the run')
})

test('a lease left by a process that no longer exists on this host is taken over at once', async (t) => {
  const store = await setup(t)
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  assert.ok(gone)
  await hold(store, `${hostname()}:${gone}:dead`, Date.now() + 60_000)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [true, 5])
})

test('a processor that lost its lease rolls its batch back instead of committing it', async (t) => {
  const store = await setup(t, 12)
  let stolen = false
  const run = runProcessor(store, {
    clock,
    batchSize: 5,
    onProgress: () => {
      if (stolen) return
      stolen = true
      // It stalled past its expiry, and another processor took over.
      runSqlNow(store, "UPDATE leases SET holder = 'elsewhere:1:thief'")
    },
  })
  await assert.rejects(run, (e: unknown) => e instanceof LeaseLost)
  assert.equal(await installments(store), 5, 'only the batch committed before the lease was lost')
  assert.deepEqual((await leases(store)).map((l) => l['holder']), ['elsewhere:1:thief'], "the thief's lease is left alone")
})
