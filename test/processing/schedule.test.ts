import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { serviceClock } from '../../src/clock.ts'
import { processingSchedule } from '../../src/processing/schedule.ts'
import { openTestStore } from '../helpers/store.ts'
import { countRows } from '../helpers/rows.ts'
import { seedDueSubscriptions } from './helpers.ts'

/** The processor inside `serve`: a run at start, quiet when idle, errors logged (never thrown), stop waits for the run. */
const clock = serviceClock('UTC', '2026-02-01')

async function setup(t: import('node:test').TestContext): Promise<Store> {
  return (await openTestStore(t, { synchronous: 'NORMAL' })).store
}

const settle = () => new Promise((r) => setTimeout(r, 50))

test('the schedule runs once at start, logs what it did, and stop() waits for the run', async (t) => {
  const store = await setup(t)
  await seedDueSubscriptions(store, 3, '2026-02-01')
  const log: any[] = []
  const schedule = processingSchedule({ store, clock, processEvery: 10, log: (e) => log.push(e) })
  schedule.start()
  schedule.start() // a second start is ignored
  await settle()
  await schedule.stop()
  assert.deepEqual(log.map((e) => ({ ...e, time: undefined, ms: undefined })), [{
    time: undefined, level: 'info', msg: 'processor run', as_of: '2026-02-01', processed: 3, installments: 3, ended: 0, canceled: 0,
    resumed: 0, retries_due: 0, abandoned: 0, upcoming: 0, completed: true, ms: undefined,
  }])
  assert.equal(await countRows(store, 'installments'), 3)
})

test('an idle run logs nothing; a schedule of 0 minutes never runs', async (t) => {
  const store = await setup(t)
  const log: any[] = []
  const idle = processingSchedule({ store, clock, processEvery: 10, log: (e) => log.push(e) })
  idle.start()
  await settle()
  await idle.stop()
  assert.equal(log.length, 0)
  assert.equal(await countRows(store, 'process_runs'), 1)
  await seedDueSubscriptions(store, 2, '2026-02-01')
  const off = processingSchedule({ store, clock, processEvery: 0, log: (e) => log.push(e) })
  off.start()
  await settle()
  await off.stop()
  assert.equal(log.length, 0)
  assert.equal(await countRows(store, 'installments'), 0)
})

test('a failing run is logged as an error line and the schedule lives on', async () => {
  const broken = { write: () => Promise.reject(new Error('database is locked')) } as unknown as Store
  const log: any[] = []
  const schedule = processingSchedule({ store: broken, clock, processEvery: 10, log: (e) => log.push(e) })
  schedule.start()
  await settle()
  await schedule.stop()
  assert.deepEqual(log.map((e) => ({ ...e, time: undefined })), [{ time: undefined, level: 'error', msg: 'processor run failed', error: 'database is locked' }])
})
