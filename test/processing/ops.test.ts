import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import type { Store } from '../../src/store/api.ts'
import { serviceClock } from '../../src/clock.ts'
import { processingMonitor } from '../../src/processing/monitor.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { openTestStore } from '../helpers/store.ts'
import { countRows } from '../helpers/rows.ts'
import { until } from '../helpers/wait.ts'
import { seedDueSubscriptions } from './helpers.ts'

/** What an operator sees: /metrics gauges, /readyz for a stalled processor, and the schedule inside `serve`. */
const ROOT = new URL('../../', import.meta.url).pathname
const MINUTE = 60_000

async function setup(t: import('node:test').TestContext): Promise<{ store: Store; file: string }> {
  const { store, location } = await openTestStore(t, { synchronous: 'NORMAL' })
  return { store, file: location }
}

test('/readyz: stalled once something has been due for more than two schedule periods without a finished run', async (t) => {
  const { store } = await setup(t)
  await seedDueSubscriptions(store, 3, '2026-02-01')
  const clock = serviceClock('UTC', '2026-02-03')
  const startedAt = Date.parse('2026-11-01T10:00:00.000Z')
  let now = startedAt + 20 * MINUTE
  const monitor = processingMonitor(store, clock, { processEvery: 10, startedAt, now: () => now })
  assert.equal(await monitor.readiness(), undefined, 'a fresh start has two periods to catch up')
  now += 1
  assert.equal(await monitor.readiness(), 'processor stalled: subscriptions due since 2026-02-01 are not processed (last finished run started never)')
  // A schedule turned off here has no period to be late by.
  assert.equal(await processingMonitor(store, clock, { processEvery: 0, startedAt, now: () => now }).readiness(), undefined)
  // A finished run, in this process or any other, clears it: nothing is due any more.
  await runProcessor(store, { clock })
  assert.equal(await monitor.readiness(), undefined)
  // Due again later, while the newest finished run is older than two periods: stalled again.
  const later = serviceClock('UTC', '2026-03-02')
  const lastRun = (await store.leases.lastCompletedRunStart()) as string
  const monitorLater = processingMonitor(store, later, { processEvery: 10, startedAt: 0, now: () => Date.parse(lastRun) + 21 * MINUTE })
  assert.equal(await monitorLater.readiness(), `processor stalled: subscriptions due since 2026-03-01 are not processed (last finished run started ${lastRun})`)
  const fresh = processingMonitor(store, later, { processEvery: 10, startedAt: 0, now: () => Date.parse(lastRun) + 19 * MINUTE })
  assert.equal(await fresh.readiness(), undefined)
})

test('/metrics: installments by state, retries due, the oldest overdue actionable date and the last finished run', async (t) => {
  const { store } = await setup(t)
  const clock = serviceClock('UTC', '2026-02-04')
  const monitor = processingMonitor(store, clock, { processEvery: 10, startedAt: Date.now() })
  await seedDueSubscriptions(store, 2, '2026-02-01')
  const lines = (text: string) => text.split('\n').filter((l) => l !== '' && !l.startsWith('#'))
  assert.deepEqual(lines(await monitor.metrics()), [
    'replenish_installments{state="pending"} 0',
    'replenish_installments{state="retrying"} 0',
    'replenish_installments{state="fulfilled"} 0',
    'replenish_installments{state="abandoned"} 0',
    'replenish_installments_retry_due 0',
    `replenish_processing_oldest_overdue_actionable_date_seconds ${Date.parse('2026-02-01T00:00:00Z') / 1000}`,
    'replenish_processing_last_completed_run_timestamp_seconds 0',
  ])
  await runProcessor(store, { clock })
  const lastRun = Date.parse((await store.leases.lastCompletedRunStart()) as string) / 1000
  assert.deepEqual(lines(await monitor.metrics()), [
    'replenish_installments{state="pending"} 2',
    'replenish_installments{state="retrying"} 0',
    'replenish_installments{state="fulfilled"} 0',
    'replenish_installments{state="abandoned"} 0',
    'replenish_installments_retry_due 0',
    'replenish_processing_oldest_overdue_actionable_date_seconds 0',
    `replenish_processing_last_completed_run_timestamp_seconds ${lastRun}`,
  ])
  for (const l of (await monitor.metrics()).split('\n').filter((x) => x.startsWith('# TYPE'))) assert.match(l, /^# TYPE replenish_\w+ gauge$/)
})

test('`serve` catches up at start on its schedule, logs the run, shows it on /metrics and is ready; SIGTERM exits 0', async (t) => {
  const { store, file } = await setup(t)
  await seedDueSubscriptions(store, 4, '2026-01-10') // fell due while the service was down
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve'], {
    cwd: ROOT,
    env: { ...process.env, REPLENISH_DB: file, REPLENISH_PORT: '0', REPLENISH_TODAY: '2026-01-20', REPLENISH_PROCESS_EVERY: '1', REPLENISH_METRICS_PUBLIC: '1', REPLENISH_LOG: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)))
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL')
  })
  let stderr = ''
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString()
      const m = /replenish listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1]) resolve(m[1])
    })
    void exited.then(() => reject(new Error(`serve exited: ${stderr}`)))
  })
  // The run at start is asynchronous: wait until it has logged.
  await until('the run at start to log', () => stderr.includes('"msg":"processor run"'))
  const log = JSON.parse(stderr.split('\n').find((l) => l.includes('"msg":"processor run"')) ?? '{}')
  assert.deepEqual({ ...log, time: undefined, ms: undefined }, {
    time: undefined, level: 'info', msg: 'processor run', as_of: '2026-01-20', processed: 4, installments: 4, ended: 0, canceled: 0,
    resumed: 0, retries_due: 0, abandoned: 0, upcoming: 0, completed: true, ms: undefined,
  })
  const metrics = await (await fetch(`${url}/metrics`)).text()
  assert.match(metrics, /^replenish_installments\{state="pending"\} 4$/m)
  assert.match(metrics, /^replenish_processing_oldest_overdue_actionable_date_seconds 0$/m)
  const ready = await fetch(`${url}/readyz`)
  assert.deepEqual([ready.status, await ready.json()], [200, { status: 'ready', oldest_overdue_actionable_date: null }])
  child.kill('SIGTERM')
  assert.equal(await exited, 0)
  assert.equal(await countRows(store, 'installments'), 4)
})
