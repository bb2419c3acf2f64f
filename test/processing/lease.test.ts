import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { hostname } from 'node:os'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { LeaseLost } from '../../src/processing/lease.ts'
import { serviceClock } from '../../src/clock.ts'
import { openTestStore, sqliteOf } from '../helpers/store.ts'
import { seedDueSubscriptions } from './helpers.ts'

/** The processing lease: one processor at a time per database file, and no waiting on the dead. */
const DUE = '2026-02-01'
const clock = serviceClock('UTC', DUE)

async function setup(t: import('node:test').TestContext, due = 5): Promise<Store> {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  seedDueSubscriptions(store, due, DUE)
  return store
}

const hold = (store: Store, holder: string, expiresAt: number): void => {
  sqliteOf(store).db.prepare('INSERT OR REPLACE INTO leases (name, holder, expires_at) VALUES (?, ?, ?)').run('processor', holder, expiresAt)
}
const leases = (store: Store) => sqliteOf(store).db.prepare('SELECT name, holder, expires_at FROM leases').all().map((r) => ({ ...r }))
const installments = (store: Store) => (sqliteOf(store).db.prepare('SELECT count(*) AS n FROM installments').get() as { n: number }).n

test('a lease held by a live processor: a schedule tick gives up at once, touching nothing', async (t) => {
  const store = await setup(t)
  const live = `${hostname()}:${process.pid}:someone`
  hold(store, live, Date.now() + 60_000)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [false, 0])
  assert.equal(installments(store), 0)
  assert.deepEqual(leases(store).map((l) => l.holder), [live])
})

test('the CLI waits for the live holder to finish, says so once, then runs', async (t) => {
  const store = await setup(t)
  const live = `${hostname()}:${process.pid}:someone`
  hold(store, live, Date.now() + 60_000)
  const waits: string[] = []
  setTimeout(() => sqliteOf(store).db.prepare('DELETE FROM leases').run(), 300)
  const s = await runProcessor(store, { clock, waitForLease: true, onWait: (h) => waits.push(h) })
  assert.deepEqual(waits, [live])
  assert.deepEqual([s.ran, s.installments], [true, 5])
  assert.deepEqual(leases(store), [], 'released after the run')
})

test('a lease left by a process that no longer exists on this host is taken over at once', async (t) => {
  const store = await setup(t)
  const gone = spawnSync(process.execPath, ['-e', '']).pid
  assert.ok(gone)
  hold(store, `${hostname()}:${gone}:dead`, Date.now() + 60_000)
  const s = await runProcessor(store, { clock })
  assert.deepEqual([s.ran, s.installments], [true, 5])
})

test('a holder on another host is trusted until its lease expires', async (t) => {
  const store = await setup(t)
  hold(store, 'elsewhere:1:abc', Date.now() + 60_000)
  assert.equal((await runProcessor(store, { clock })).ran, false)
  hold(store, 'elsewhere:1:abc', Date.now() - 1)
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
      sqliteOf(store).db.prepare("UPDATE leases SET holder = 'elsewhere:1:thief'").run()
    },
  })
  await assert.rejects(run, (e: unknown) => e instanceof LeaseLost)
  assert.equal(installments(store), 5, 'only the batch committed before the lease was lost')
  assert.deepEqual(leases(store).map((l) => l.holder), ['elsewhere:1:thief'], "the thief's lease is left alone")
})
