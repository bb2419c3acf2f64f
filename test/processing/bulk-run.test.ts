import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { openTestStore, sqliteOf } from '../helpers/store.ts'
import { seedDueSubscriptions } from './helpers.ts'

/**
 * A processor run is one bulk job for the store (`store.bulk`): on SQLite the WAL is checkpointed
 * far less often while it runs (each page goes to the database once, not once per batch), and the
 * setting is back as it was once the run ends, also when it fails.
 */
const autocheckpoint = (store: Store): number =>
  (sqliteOf(store).db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint

test('during a run the WAL is checkpointed every 32,000 pages; after it, and after a failed one, as before', async (t) => {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  await seedDueSubscriptions(store, 6, '2026-02-01')
  const before = autocheckpoint(store)
  assert.notEqual(before, 32_000)
  const during: number[] = []
  const run = await runProcessor(store, { clock: serviceClock('UTC', '2026-02-01'), batchSize: 2, onProgress: () => during.push(autocheckpoint(store)) })
  assert.deepEqual([run.completed, run.installments], [true, 6])
  assert.deepEqual(during, [32_000, 32_000, 32_000, 32_000])
  assert.equal(autocheckpoint(store), before)

  await seedDueSubscriptions(store, 2, '2026-02-01')
  const failing = runProcessor(store, {
    clock: serviceClock('UTC', '2026-02-01'),
    onProgress: () => {
      throw new Error('progress could not be shown')
    },
  })
  await assert.rejects(failing, /progress could not be shown/)
  assert.equal(autocheckpoint(store), before)
})
