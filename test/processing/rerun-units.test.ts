import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store, Unit } from '../../src/store/api.ts'
import { runProcessor, type RunSummary } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { openTestStore, sqliteOf } from '../helpers/store.ts'
import { seedDueSubscriptions } from './helpers.ts'

/**
 * The store's rule that a unit may be run again (a PostgreSQL backend retries a unit after a
 * serialization conflict, docs/decisions.md): the processor keeps no effect of a unit outside its
 * `tx` until the unit has committed, so a unit rolled back and run again counts once and the walk
 * through the due subscriptions skips nothing.
 */
const CONFLICT = new Error('serialization conflict (simulated)')

/** The store, but every unit runs once, is rolled back as a conflict would make it, then runs again. */
function rerunningUnits(store: Store): Store {
  const write = async <T>(unit: Unit<T>): Promise<T> => {
    await store.write(async (tx) => {
      await unit(tx)
      throw CONFLICT
    }).catch((err: unknown) => {
      if (err !== CONFLICT) throw err
    })
    return store.write(unit)
  }
  return new Proxy(store, { get: (target, name) => (name === 'write' ? write : Reflect.get(target, name)) })
}

/** Every phase of a run has work: due ones (some canceling, some resuming), ended ones, retries due and abandoned. */
async function seed(store: Store): Promise<void> {
  await seedDueSubscriptions(store, 30, '2026-01-10')
  const at = '2026-01-01T00:00:00.000Z'
  sqliteOf(store).db.exec(`
    UPDATE subscriptions SET actionable_date = '2026-03-01', end_date = '2026-01-12' WHERE id % 5 = 0;
    UPDATE subscriptions SET state = 'pending_cancellation' WHERE id % 7 = 0 AND id % 5 <> 0;
    UPDATE subscriptions SET paused = 1 WHERE id % 11 = 0 AND id % 5 <> 0;
    UPDATE subscriptions SET state = 'canceled', actionable_date = NULL WHERE id = 3;
    INSERT INTO installments (subscription_id, due_date, state, retry_at, first_failed_at, line_items, currency, created_at, updated_at)
      SELECT id, '2025-12-10', 'retrying', '2026-01-12T00:00:00.000Z', '${at}', '[]', 'USD', '${at}', '${at}' FROM subscriptions WHERE id IN (1, 2, 3, 7);
  `)
}

/** What a run left, without the times it was written at. */
function outcome(store: Store): unknown {
  const { db } = sqliteOf(store)
  return {
    subscriptions: db.prepare('SELECT id, state, paused, actionable_date FROM subscriptions ORDER BY id').all(),
    installments: db.prepare('SELECT subscription_id, due_date, state, retry_at FROM installments ORDER BY subscription_id, due_date').all(),
    events: db.prepare('SELECT type, subscription_id FROM events ORDER BY id').all(),
  }
}

const counted = ({ elapsedMs: _, ...counts }: RunSummary): Omit<RunSummary, 'elapsedMs'> => counts

for (const batchSize of [2, 5]) {
  test(`a run whose every unit is rolled back and run again does what a plain run does, and counts it once (batches of ${batchSize})`, async (t) => {
    const plain = (await openTestStore(t, { synchronous: "NORMAL" })).store
    const rerun = (await openTestStore(t, { synchronous: "NORMAL" })).store
    await seed(plain)
    await seed(rerun)
    const clock = serviceClock('UTC', '2026-01-15')
    const expected = await runProcessor(plain, { clock, batchSize })
    // Each phase had work, so each one's counts and cursor are under test.
    assert.deepEqual(
      [expected.completed, expected.installments > 0, expected.canceled > 0, expected.resumed > 0, expected.ended > 0, expected.retriesDue > 0, expected.abandoned > 0],
      [true, true, true, true, true, true, true],
    )
    const examined: number[] = []
    const got = await runProcessor(rerunningUnits(rerun), { clock, batchSize, onProgress: (p) => examined.push(p.examined) })
    assert.deepEqual(counted(got), counted(expected))
    assert.deepEqual(outcome(rerun), outcome(plain))
    assert.equal(examined.at(-1), expected.examined, 'progress counts each due subscription once')
  })
}
