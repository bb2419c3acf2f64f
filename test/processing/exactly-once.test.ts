import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { Store } from '../../src/store/api.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { openTestStore, sqliteOf } from '../helpers/store.ts'
import { assertExactlyOnePerSubscription, seedDueSubscriptions } from './helpers.ts'
import type { RoundRequest } from './fixtures/process-worker.ts'

/** C9 "exactly once": concurrent processors, a crash inside a batch, and kill -9 in the middle of a run. */
const DUE = '2026-02-01'
const ROOT = new URL('../../', import.meta.url).pathname

function tempDir(t: import('node:test').TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-once-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A connection of its own to the store at `file` (the test removes the directory). */
async function freshStore(file: string, options: { beforeCommit?: () => void } = {}): Promise<Store> {
  return (await openTestStore(undefined, { synchronous: 'NORMAL', ...options }, { location: file, remove: () => {} })).store
}

function ask(worker: Worker, req: RoundRequest): Promise<{ ran: boolean; installments: number; error?: string }> {
  return new Promise((resolve, reject) => {
    const done = (answer: { ran: boolean; installments: number }): void => {
      worker.off('error', reject)
      resolve(answer)
    }
    worker.once('message', done)
    worker.once('error', reject)
    worker.postMessage(req)
  })
}

test('two processors started at once on one database never make a duplicate (50 rounds, two threads, two connections)', async (t) => {
  const dir = tempDir(t)
  const workers = [0, 1].map(() => new Worker(new URL('./fixtures/process-worker.ts', import.meta.url)))
  t.after(() => Promise.all(workers.map((w) => w.terminate())))
  const subscriptions = 200
  for (let round = 0; round < 50; round++) {
    const file = join(dir, `round-${round}.db`)
    const store = await freshStore(file)
    await seedDueSubscriptions(store, subscriptions, DUE)
    await store.close()
    const barrier = new SharedArrayBuffer(4)
    // Even rounds wait for the lease like the CLI; odd rounds give up at once like a schedule tick.
    const waitForLease = round % 2 === 0
    const results = await Promise.all(workers.map((w) => ask(w, { file, asOf: DUE, waitForLease, barrier })))
    for (const r of results) assert.equal(r.error, undefined)
    assert.equal(results.reduce((n, r) => n + r.installments, 0), subscriptions, `round ${round}`)
    const check = await freshStore(file)
    await assertExactlyOnePerSubscription(check, subscriptions)
    await check.close()
  }
})

test('a crash inside a batch commits nothing of it; the rerun makes exactly the rest', async (t) => {
  const file = join(tempDir(t), 'crash.db')
  let armed = true
  const installments = (s: Store) => (sqliteOf(s).db.prepare('SELECT count(*) AS n FROM installments').get() as { n: number }).n
  const store: Store = await freshStore(file, {
    beforeCommit: () => {
      // The second batch's commit fails, as a full disk or a pulled plug would make it.
      if (armed && installments(store) > 10) {
        armed = false
        throw new Error('disk full')
      }
    },
  })
  t.after(() => store.close())
  await seedDueSubscriptions(store, 25, DUE)
  const clock = serviceClock('UTC', DUE)
  await assert.rejects(runProcessor(store, { clock, batchSize: 10 }), /disk full/)
  assert.equal(installments(store), 10)
  const { db } = sqliteOf(store)
  const untouched = db.prepare('SELECT count(*) AS n FROM subscriptions WHERE actionable_date = ?').get(DUE) as { n: number }
  assert.equal(untouched.n, 15)
  assert.equal((db.prepare("SELECT count(*) AS n FROM events WHERE type = 'installment.created'").get() as { n: number }).n, 10)
  assert.equal(db.prepare('SELECT * FROM leases').all().length, 0, 'the lease is released after a failed run')
  const rerun = await runProcessor(store, { clock, batchSize: 10 })
  assert.deepEqual([rerun.ran, rerun.installments, rerun.completed], [true, 15, true])
  await assertExactlyOnePerSubscription(store, 25)
})

test('kill -9 in the middle of `replenish process`, then a rerun: exactly one installment per due subscription', async (t) => {
  const file = join(tempDir(t), 'kill.db')
  const subscriptions = 40_000
  const setup = await freshStore(file)
  await seedDueSubscriptions(setup, subscriptions, DUE)
  await setup.close()

  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'process', '--as-of', DUE], {
    cwd: ROOT,
    env: { ...process.env, REPLENISH_DB: file, REPLENISH_TODAY: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  let stderr = ''
  await new Promise<void>((resolve, reject) => {
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString()
      // The first batch is committed and reported: the run is under way. Kill it there.
      if (/examined \d+\/40000 due/.test(stderr)) {
        child.kill('SIGKILL')
        resolve()
      }
    })
    void exited.then(() => reject(new Error(`the run ended before it could be killed: ${stderr}`)))
  })
  assert.deepEqual(await exited, { code: null, signal: 'SIGKILL' })

  const store = await freshStore(file)
  t.after(() => store.close())
  const { db } = sqliteOf(store)
  assert.equal((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok')
  const done = (db.prepare('SELECT count(*) AS n FROM installments').get() as { n: number }).n
  assert.ok(done > 0 && done < subscriptions, `killed mid-run: ${done} of ${subscriptions} made`)
  // Every committed installment moved its subscription on, and no other did.
  const moved = (db.prepare('SELECT count(*) AS n FROM subscriptions WHERE actionable_date > ?').get(DUE) as { n: number }).n
  assert.equal(moved, done)
  // The dead run's lease names a process that no longer exists: the rerun takes it at once.
  assert.equal(db.prepare('SELECT * FROM leases').all().length, 1)
  const rerun = await runProcessor(store, { clock: serviceClock('UTC', DUE) })
  assert.deepEqual([rerun.ran, rerun.installments], [true, subscriptions - done])
  await assertExactlyOnePerSubscription(store, subscriptions)
})

test('the unique key alone makes a repeat a no-op: the same batch written twice makes one installment and one event', async (t) => {
  const file = join(tempDir(t), 'unique.db')
  const store = await freshStore(file)
  t.after(() => store.close())
  await seedDueSubscriptions(store, 3, DUE)
  const plans = [1, 2, 3].map((id) => ({ subscription_id: id, due_date: DUE, actionable_date: '2026-03-01', state: 'active' as const }))
  const first = await store.write((tx) => tx.installments.processMany(plans, new Date().toISOString()))
  const second = await store.write((tx) => tx.installments.processMany(plans, new Date().toISOString()))
  assert.deepEqual([[...first].sort(), [...second]], [[1, 2, 3], []])
  await assertExactlyOnePerSubscription(store, 3)
})
