import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { serviceClock } from '../../src/clock.ts'
import { processingSchedule } from '../../src/processing/schedule.ts'
import { openTestStore } from '../helpers/store.ts'
import { countRows, testSql } from '../helpers/rows.ts'
import { until } from '../helpers/wait.ts'
import { seedDueSubscriptions } from './helpers.ts'

/** The processor inside `serve`: a run at start, quiet when idle, errors logged (never thrown), stop waits for the run. */
const clock = serviceClock('UTC', '2026-02-01')

async function setup(t: import('node:test').TestContext): Promise<Store> {
  return (await openTestStore(t, { synchronous: 'NORMAL' })).store
}

/**
 * The tests wait for the run at start to end (its log line, or its finished row) before they stop
 * the schedule: a stop aborts a run that has not reached its first batch yet, and on a busy machine
 * a fixed pause was sometimes not long enough for it to get there.
 */
const finishedRuns = async (store: Store): Promise<number> =>
  Number((await testSql(store).get('SELECT count(*) AS n FROM process_runs WHERE finished_at IS NOT NULL'))?.['n'])

/** Long enough for a run that should not happen to show (a check that nothing happens cannot wait for it). */
const settle = () => new Promise((r) => setTimeout(r, 50))

test('the schedule runs once at start and logs what it did; a second start is ignored', async (t) => {
  const store = await setup(t)
  await seedDueSubscriptions(store, 3, '2026-02-01')
  const log: any[] = []
  const schedule = processingSchedule({ store, clock, processEvery: 10, log: (e) => log.push(e) })
  schedule.start()
  schedule.start() // a second start is ignored
  await until('the run at start to log', () => log.length > 0)
  await schedule.stop()
  assert.deepEqual(log.map((e) => ({ ...e, time: undefined, ms: undefined })), [{
    time: undefined, level: 'info', msg: 'processor run', as_of: '2026-02-01', processed: 3, installments: 3, ended: 0, canceled: 0,
    resumed: 0, retries_due: 0, abandoned: 0, upcoming: 0, completed: true, ms: undefined,
  }])
  assert.equal(await countRows(store, 'installments'), 3)
  assert.equal(await countRows(store, 'process_runs'), 1)
})

test('stop() waits for the run in progress', async (t) => {
  const store = await setup(t)
  // The run is held at its start (in store.bulk) until the test lets it go.
  let entered = false
  let release = (): void => {}
  const gate = new Promise<void>((resolve) => (release = resolve))
  const held = new Proxy(store, {
    get(target, prop) {
      if (prop === 'bulk') {
        return async <T>(fn: () => Promise<T>): Promise<T> => {
          entered = true
          await gate
          return target.bulk(fn)
        }
      }
      const value: unknown = Reflect.get(target, prop, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
  const schedule = processingSchedule({ store: held, clock, processEvery: 10, log: () => {} })
  schedule.start()
  await until('the run to start', () => entered)
  let stopped = false
  const stopping = schedule.stop().then(() => (stopped = true))
  await settle()
  assert.equal(stopped, false, 'stop() returned while the run was still going')
  release()
  await stopping
  // The run, told to stop before its first batch, recorded its start and nothing more, before stop() returned.
  assert.equal(await countRows(store, 'process_runs'), 1)
  assert.equal(await finishedRuns(store), 0)
})

test('an idle run logs nothing; a schedule of 0 minutes never runs', async (t) => {
  const store = await setup(t)
  const log: any[] = []
  const idle = processingSchedule({ store, clock, processEvery: 10, log: (e) => log.push(e) })
  idle.start()
  await until('the idle run to finish', async () => (await finishedRuns(store)) === 1)
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
  await until('the failed run to log', () => log.length > 0)
  await schedule.stop()
  assert.deepEqual(log.map((e) => ({ ...e, time: undefined })), [{ time: undefined, level: 'error', msg: 'processor run failed', error: 'database is locked' }])
})
