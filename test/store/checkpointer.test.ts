import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs'
import { getPriority, tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { openSqliteStore } from '../../src/store/sqlite/store.ts'
import { CHECKPOINT_NICE, CONVERGED_FRAMES, Checkpointer, MAX_FRAMES, RESTART_FRAMES, WORKER_SOURCE } from '../../src/store/sqlite/checkpointer.ts'
import { until } from '../helpers/wait.ts'

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))
/** checkpointer.ts's EVERY_MS: the least time between the starts of two background runs. */
const EVERY_MS = 200

/**
 * Background checkpoints (issue 6, checkpointer.ts): under steady writes the WAL is checkpointed
 * by the worker thread, never by a COMMIT on the event loop, and still starts over, so it does not
 * grow without bound; nothing written is lost; the server's close, after the thread's, removes it.
 */
test('under steady writes the worker checkpoints, the WAL restarts and stays bounded, and every row is kept', { timeout: 300_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'c.db')
  const errors: string[] = []
  const store = openSqliteStore(file, { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true, onBackgroundError: (m) => errors.push(m) })
  let closed = false
  t.after(async () => {
    if (closed) return
    await store.stopBackground()
    await store.close()
  })
  assert.equal((store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 0, 'no checkpoint inside a COMMIT')
  store.db.exec('CREATE TABLE blobs (n INTEGER PRIMARY KEY, data BLOB NOT NULL)')
  const insert = store.db.prepare('INSERT INTO blobs (n, data) VALUES (?, randomblob(3000))')

  // A page a unit, 20 units a batch, until the WAL has started over twice, and never more than
  // 80,000 units. Every 1,000 units or so the writes slow to one at a time until the thread has
  // finished a run since the last such pause: it runs niced, so on a busy machine it may get
  // almost no CPU while writes go on (by design: the event loop wins). A fixed 60 ms pause did not
  // let it keep up there, and the test ran past its time limit.
  let n = 0
  let walMax = 0
  let runs = 0
  let paused = 0
  while (n < 80_000 && store.checkpoints()!.inline < 2) {
    const batch: Promise<void>[] = []
    for (let i = 0; i < 20; i++) batch.push(store.write(async () => void insert.run(++n)))
    await Promise.all(batch)
    if (n - paused >= 1000) {
      paused = n
      // A run starts on a COMMIT (at most one every 200 ms): the wait goes on writing, a unit a time.
      await until('a background checkpoint since the last pause', async () => {
        await store.write(async () => void insert.run(++n))
        return store.checkpoints()!.background > runs
      })
      runs = store.checkpoints()!.background
    }
    walMax = Math.max(walMax, statSync(`${file}-wal`).size)
  }
  const total = n
  const c = store.checkpoints()!
  assert.ok(c.background > 0, 'the thread checkpointed')
  assert.ok(c.inline >= 2, `the WAL was restarted (${c.inline} times in ${total} units)`)
  // Without restarts the WAL would hold every page written.
  const pageSize = (store.db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size
  assert.ok(walMax < 2.5 * RESTART_FRAMES * pageSize, `WAL peaked at ${walMax} bytes`)
  assert.deepEqual(errors, [])

  const reader = new DatabaseSync(file, { readOnly: true })
  assert.equal((reader.prepare('SELECT count(*) AS k FROM blobs').get() as { k: number }).k, total)
  reader.close()

  await store.stopBackground()
  await store.close()
  closed = true
  assert.equal(existsSync(`${file}-wal`), false, 'the last connection checkpointed and removed the WAL')
  const again = new DatabaseSync(file, { readOnly: true })
  assert.equal((again.prepare('SELECT count(*) AS k FROM blobs').get() as { k: number }).k, total)
  again.close()
})

test('without background checkpoints (the CLI, tests) SQLite checkpoints every 8,000 pages itself', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const store = openSqliteStore(join(dir, 'c.db'), { synchronous: 'FULL', createDirectory: false })
  t.after(() => store.close())
  assert.equal((store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 8000)
  assert.equal(store.checkpoints(), undefined)
})

test('a checkpoint thread that dies is reported, and SQLite checkpoints inside COMMITs again', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const errors: string[] = []
  const store = openSqliteStore(join(dir, 'c.db'), {
    synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true,
    onBackgroundError: (m) => errors.push(m),
    checkpointThreadSource: "throw new Error('cannot open the database')",
  })
  t.after(() => store.close())
  const autocheckpoint = (): number => (store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint
  assert.equal(autocheckpoint(), 0)
  await until('the thread\'s death reported', () => errors.length > 0)
  assert.deepEqual(errors, ['the checkpoint thread stopped: cannot open the database'])
  await store.write(async () => store.db.exec('CREATE TABLE after_death (n INTEGER)'))
  assert.equal(autocheckpoint(), 8000, 'the next COMMIT handed checkpoints back to SQLite')
  assert.equal(errors.length, 1, 'an unasked exit after an error is not reported twice')
})

test('a thread stopped on purpose is no failure: no error, no fallback', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const errors: string[] = []
  const store = openSqliteStore(join(dir, 'c.db'), { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true, onBackgroundError: (m) => errors.push(m) })
  await store.stopBackground()
  await store.write(async () => store.db.exec('CREATE TABLE after_stop (n INTEGER)'))
  assert.equal((store.db.prepare('PRAGMA wal_autocheckpoint').get() as { wal_autocheckpoint: number }).wal_autocheckpoint, 0)
  await store.close()
  assert.deepEqual(errors, [])
})

test('on Linux the checkpoint thread runs niced, so the event loop wins the core when both want it; the loop keeps its own priority', { skip: !existsSync('/proc/thread-self') && 'threads have no nice value of their own here' }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const before = getPriority(0)
  const store = openSqliteStore(join(dir, 'c.db'), { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true })
  t.after(async () => {
    await store.stopBackground()
    await store.close()
  })
  // The thread sets its priority as it starts, before its first checkpoint.
  await until('the thread\'s first checkpoint', async () => {
    await store.write(async () => store.db.exec('CREATE TABLE IF NOT EXISTS nice (n INTEGER)'))
    return store.checkpoints()!.background > 0
  })
  assert.ok(store.checkpoints()!.background > 0, 'the thread checkpointed')
  const workers = readdirSync('/proc/self/task').filter((tid) => readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() === 'WorkerThread')
  assert.ok(workers.length > 0, 'a worker thread is running')
  assert.ok(workers.some((tid) => getPriority(Number(tid)) === CHECKPOINT_NICE), `a worker thread at nice ${CHECKPOINT_NICE}`)
  assert.equal(getPriority(0), before, 'the event loop keeps its priority')
  assert.equal(getPriority(process.pid), before)
})

/**
 * A thread that answers each checkpoint with the next scripted [busy, frames in the WAL, frames in
 * the database], so the restart rule can be driven exactly.
 */
function scriptedThread(results: readonly (readonly [number, number, number])[]): string {
  return `
const { parentPort } = require('node:worker_threads')
const results = ${JSON.stringify(results)}
let next = 0
parentPort.on('message', (m) => {
  if (m === 'close') { parentPort.close(); return }
  parentPort.postMessage({ result: results[Math.min(next++, results.length - 1)] })
})`
}

/** A fresh WAL database of its own, removed after the test. */
function walDatabase(t: TestContext): { db: DatabaseSync; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'c.db')
  const db = new DatabaseSync(file)
  db.exec('PRAGMA journal_mode = WAL')
  t.after(() => db.close())
  return { db, file }
}

test('the WAL restarts only after a thread run with little left to copy; a long run is followed by another at once, not after the pause', async (t) => {
  const { db, file } = walDatabase(t)
  const long = RESTART_FRAMES + 5_000
  const checkpointer = new Checkpointer(db, file, () => {}, scriptedThread([
    [0, long, long], // caught up, but copied far more than CONVERGED_FRAMES: frames came in meanwhile
    [0, long + CONVERGED_FRAMES, long + CONVERGED_FRAMES], // caught up after copying few
  ]))
  t.after(() => checkpointer.stop())
  const counts = checkpointer.counts

  checkpointer.afterCommit() // the first COMMIT: a run at once
  await until('the first run answered', () => counts.background === 1)
  checkpointer.afterCommit() // within the pause between runs, but the restart is due: at once
  await until('a second run started without waiting for the pause', () => counts.background === 2)
  assert.equal(counts.inline, 0, 'no restart after a run that copied many frames')
  checkpointer.afterCommit()
  assert.equal(counts.inline, 1, 'the restart after the run that copied few')
  assert.equal(checkpointer.frames, 0, 'the WAL starts over')
})

test('issue 25: past MAX_FRAMES the WAL restarts after the thread caught up, however much its run copied', async (t) => {
  const { db, file } = walDatabase(t)
  const checkpointer = new Checkpointer(db, file, () => {}, scriptedThread([
    [0, MAX_FRAMES - 1_000, MAX_FRAMES - 1_000], // long, but copied far more than CONVERGED_FRAMES: another run
    [0, MAX_FRAMES, MAX_FRAMES], // copied 1,000 again (writes outpace the thread), but the WAL is at its bound
  ]))
  t.after(() => checkpointer.stop())
  const counts = checkpointer.counts
  checkpointer.afterCommit()
  await until('the first run answered', () => counts.background === 1)
  checkpointer.afterCommit()
  await until('the second run answered', () => counts.background === 2)
  assert.equal(counts.inline, 0)
  checkpointer.afterCommit()
  assert.equal(counts.inline, 1, 'the restart, without waiting for a run with little left')
})

test('issue 25: under writes faster than the thread copies, the WAL still starts over near MAX_FRAMES instead of growing with the load', { timeout: 120_000 }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'replenish-ckpt-'))
  t.after(() => rmSync(dir, { recursive: true, force: true }))
  const file = join(dir, 'c.db')
  const errors: string[] = []
  // The real thread, made as slow as writes that outpace it (a starved core, a slow disk): before
  // each checkpoint it waits until the WAL file has grown by three times CONVERGED_FRAMES frames
  // (4 KiB pages and their 24-byte headers), so no run of it ever has little left to copy. (At most
  // 2 s, so that it never hangs; once the WAL starts over the file no longer grows.)
  const checkpointCall = 'parentPort.postMessage({ result: checkpoint.get() })'
  assert.ok(WORKER_SOURCE.includes(checkpointCall))
  const outpaced = `
    const walSize = () => { try { return require('node:fs').statSync(workerData.file + '-wal').size } catch { return 0 } }
    const pause = new Int32Array(new SharedArrayBuffer(4))
    const from = walSize()
    for (let waited = 0; walSize() < from + ${3 * CONVERGED_FRAMES} * 4120 && waited < 2000; waited += 5) Atomics.wait(pause, 0, 0, 5)
    ${checkpointCall}`
  const slowed = WORKER_SOURCE.replace(checkpointCall, outpaced)
  const store = openSqliteStore(file, { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true, onBackgroundError: (m) => errors.push(m), checkpointThreadSource: slowed })
  t.after(async () => {
    await store.stopBackground()
    await store.close()
  })
  store.db.exec('CREATE TABLE blobs (n INTEGER PRIMARY KEY, data BLOB NOT NULL)')
  const insert = store.db.prepare('INSERT INTO blobs (n, data) VALUES (?, randomblob(3000))')
  const pageSize = (store.db.prepare('PRAGMA page_size').get() as { page_size: number }).page_size
  // A page a unit, 20 units a batch, without a pause, until the WAL started over or passed three
  // times its bound (where it would be without one).
  let n = 0
  let walMax = 0
  while (store.checkpoints()!.inline === 0 && walMax < 3 * MAX_FRAMES * pageSize) {
    const batch: Promise<void>[] = []
    for (let i = 0; i < 20; i++) batch.push(store.write(async () => void insert.run(++n)))
    await Promise.all(batch)
    walMax = Math.max(walMax, statSync(`${file}-wal`).size)
  }
  assert.deepEqual(errors, [])
  assert.equal(store.checkpoints()!.inline, 1, `the WAL started over (${n} units, WAL ${(walMax / 1048576).toFixed(0)} MB)`)
  // Its bound, plus what piles up during the thread's last run and one batch.
  assert.ok(walMax < 1.5 * MAX_FRAMES * pageSize, `the WAL peaked at ${(walMax / 1048576).toFixed(0)} MB`)
})

test('below the restart mark, COMMITs within the pause between runs start none', async (t) => {
  // The pause counts from a run's start, and on a busy machine the thread's first answer can come
  // after the pause is over (the thread starts a V8 isolate first): COMMITs made on that answer
  // were no longer within the pause. So a round starts a second run once the thread is up, and
  // COMMITs at once on its answer; a round whose COMMITs still came after the pause (the machine
  // was slower yet) tells nothing, and is done again with a fresh thread.
  for (let round = 1; ; round++) {
    const { db, file } = walDatabase(t)
    const checkpointer = new Checkpointer(db, file, () => {}, scriptedThread([[0, 100, 100]]))
    try {
      checkpointer.afterCommit()
      await until('the first run answered', () => checkpointer.counts.background === 1)
      await sleep(EVERY_MS)
      const started = performance.now()
      checkpointer.afterCommit() // the pause since the first run's start is over: a run
      await until('the second run answered', () => checkpointer.counts.background === 2)
      for (let i = 0; i < 5; i++) checkpointer.afterCommit()
      if (performance.now() - started < EVERY_MS) {
        await sleep(50)
        assert.equal(checkpointer.counts.background, 2)
        assert.equal(checkpointer.counts.inline, 0)
        return
      }
    } finally {
      await checkpointer.stop()
    }
    assert.ok(round < 20, `in ${round} rounds the thread never answered within ${EVERY_MS} ms`)
  }
})

test('stop() is bounded: a thread that does not end after its close is terminated after 5 s, and that is reported', async (t) => {
  const { db, file } = walDatabase(t)
  const reported: string[] = []
  // Ignores the close and keeps its event loop alive, as the thread once did in a test process.
  const stuck = `
const { parentPort } = require('node:worker_threads')
setInterval(() => {}, 1000)
parentPort.on('message', () => {})`
  const checkpointer = new Checkpointer(db, file, (m) => reported.push(m), stuck)
  const started = Date.now()
  await checkpointer.stop()
  const waited = Date.now() - started
  // Not before the 5 s; the upper bound only catches a stop that waits for ever.
  assert.ok(waited >= 4_900 && waited < 60_000, `stop() ended after ${waited} ms`)
  assert.deepEqual(reported, ['the checkpoint thread did not end within 5 s of its close; it was terminated'])
})
