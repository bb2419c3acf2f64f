import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { fdatasync, statSync } from 'node:fs'
import type { SqliteStore, StoreOptions } from '../../src/store/sqlite/store.ts'
import { scratchStore } from '../helpers/scratch-store.ts'
import { DurabilityLost } from '../../src/store/sqlite/wal-sync.ts'

/**
 * Durable group commit (issue 6, C12): with synchronous=FULL the COMMIT no longer fsyncs on the
 * event loop; the WAL is fdatasynced on the thread pool, and a unit settles only after a sync
 * that began after its COMMIT has finished. The fdatasync is replaced here by a hook that
 * records each call and can hold or fail it.
 */
interface Sync {
  readonly fd: number
  /** Completes this fdatasync: for real, or with an error. */
  finish(err?: Error): void
}

function open(t: TestContext, options: Partial<StoreOptions> = {}) {
  const syncs: Sync[] = []
  let hold = false
  const scratch = scratchStore(t, {
    syncWal: (fd, done) => {
      const sync: Sync = { fd, finish: (err) => (err ? done(err) : fdatasync(fd, (e) => done(e))) }
      syncs.push(sync)
      if (!hold) sync.finish()
    },
    ...options,
  })
  return {
    ...scratch,
    syncs,
    holdSyncs: (on: boolean) => {
      hold = on
    },
  }
}

type Harness = ReturnType<typeof open> & { store: SqliteStore }

const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))
/** Lets the thread pool answer (a real fdatasync) and its callbacks run. */
const settleIo = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20))

function tracked<T>(p: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise: p }
  p.then(
    () => (state.settled = true),
    () => (state.settled = true),
  )
  return state
}

test('synchronous=FULL on a WAL file: the connection runs NORMAL and the WAL file itself is fdatasynced after each COMMIT', async (t) => {
  const h: Harness = open(t)
  assert.equal((h.store.db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 1)
  await h.store.write(async () => h.insert(1))
  assert.equal(h.syncs.length, 1)
  // The descriptor synced is the database's own -wal file.
  const { fstatSync } = await import('node:fs')
  assert.equal(fstatSync(h.syncs[0]!.fd).ino, statSync(`${h.file}-wal`).ino)
})

test('synchronous=NORMAL keeps the pragma and syncs nothing itself', async (t) => {
  const h = open(t, { synchronous: 'NORMAL' })
  assert.equal((h.store.db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 1)
  await h.store.write(async () => h.insert(1))
  assert.equal(h.syncs.length, 0)
  assert.deepEqual(h.committed(), [1])
})

test('a unit does not settle when its COMMIT returns, only when the WAL sync after it has finished', async (t) => {
  const h = open(t)
  h.holdSyncs(true)
  const unit = tracked(h.store.write(async () => h.insert(1)))
  await nextTurn()
  await settleIo()
  // Committed (another connection reads it), but not yet known to be on the disk: no answer.
  assert.deepEqual(h.committed(), [1])
  assert.equal(h.syncs.length, 1)
  assert.equal(unit.settled, false)
  h.syncs[0]!.finish()
  await unit.promise
  assert.equal(unit.settled, true)
})

test('while a sync runs, new units gather in the open batch; it commits once when that sync returns, and settles after its own', async (t) => {
  let commits = 0
  const h = open(t, { beforeCommit: () => void commits++ })
  h.holdSyncs(true)
  const first = tracked(h.store.write(async () => h.insert(1)))
  await nextTurn() // batch 1 commits, its sync starts and is held
  assert.equal(commits, 1)
  const later = [2, 3, 4].map((n) => tracked(h.store.write(async () => h.insert(n))))
  await nextTurn()
  await nextTurn()
  // Not committed while sync 1 runs: one batch is gathering.
  assert.equal(commits, 1)
  assert.deepEqual(h.committed(), [1])

  h.syncs[0]!.finish()
  await first.promise
  await settleIo()
  // Sync 1 returned: the gathered batch committed at once, as one, and waits for its own sync.
  assert.equal(commits, 2)
  assert.deepEqual(h.committed(), [1, 2, 3, 4])
  assert.ok(later.every((u) => !u.settled))
  assert.equal(h.syncs.length, 2)
  h.syncs[1]!.finish()
  await Promise.all(later.map((u) => u.promise))
})

test('a full batch commits at once even while a sync runs, and its units wait for the next sync', async (t) => {
  let commits = 0
  // Whether the turn the full batch's units were asked in had ended, at each COMMIT.
  let turned = false
  const turnedAtCommit: boolean[] = []
  const h = open(t, { beforeCommit: () => void (commits++, turnedAtCommit.push(turned)), maxBatch: 3 })
  h.holdSyncs(true)
  const first = tracked(h.store.write(async () => h.insert(1)))
  await nextTurn()
  setImmediate(() => (turned = true))
  const full = [2, 3, 4].map((n) => tracked(h.store.write(async () => h.insert(n))))
  await nextTurn()
  assert.equal(commits, 2)
  assert.equal(turnedAtCommit[1], false, 'the third unit filled the batch: it committed at once, within the turn')
  assert.deepEqual(h.committed(), [1, 2, 3, 4])
  h.syncs[0]!.finish()
  await first.promise
  await settleIo()
  assert.ok(full.every((u) => !u.settled), 'sync 1 began before their COMMIT')
  h.syncs[1]!.finish()
  await Promise.all(full.map((u) => u.promise))
})

test('a failed WAL sync fails its units, the units gathered behind it, every later write, and readiness', async (t) => {
  const h = open(t)
  h.holdSyncs(true)
  const units = [1, 2, 3].map((n) => h.store.write(async () => h.insert(n)))
  await nextTurn()
  const gathered = h.store.write(async () => h.insert(4)) // joins the batch that waits for this sync
  await nextTurn()
  assert.equal(await h.store.problem(), undefined)
  h.syncs[0]!.finish(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))
  for (const unit of units) await assert.rejects(unit, DurabilityLost)
  await assert.rejects(gathered, DurabilityLost)
  await assert.rejects(h.store.write(async () => h.insert(5)), DurabilityLost)
  assert.match(String(await h.store.problem()), /^writes are stopped until a restart: /)
  assert.deepEqual(h.committed(), [1, 2, 3], 'nothing after the failed sync was committed')
})

test('closing the store syncs the last batch on the spot and settles its units', async (t) => {
  const h = open(t)
  h.holdSyncs(true)
  const unit = h.store.write(async () => h.insert(9))
  await h.store.close()
  await unit
  assert.deepEqual(h.committed(), [9])
})
