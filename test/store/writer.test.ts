import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import type { SqliteStore } from '../../src/store/sqlite/store.ts'
import { scratchStore } from '../helpers/scratch-store.ts'
import { TransactionLost } from '../../src/store/sqlite/writer.ts'

/**
 * Group commit at the unit level (issue 6): a real store on a temporary file, a scratch table to
 * write into, and a second connection that sees only what has been committed.
 */
interface Harness {
  readonly store: SqliteStore
  readonly file: string
  /** How many COMMITs have been attempted. */
  commits(): number
  /** Makes the next COMMIT fail. */
  failNextCommit(): void
  /** Runs at each COMMIT, just before it. */
  onCommit(fn: () => void): void
  insert(n: number): void
  /** The rows a separate connection sees: committed ones only. */
  committed(): number[]
}

function open(t: TestContext, options: { maxBatch?: number } = {}): Harness {
  let commits = 0
  let failNext = false
  let hook: (() => void) | undefined
  const scratch = scratchStore(t, {
    ...options,
    beforeCommit: () => {
      commits++
      hook?.()
      if (failNext) {
        failNext = false
        throw new Error('injected COMMIT failure')
      }
    },
  })
  return {
    ...scratch,
    commits: () => commits,
    failNextCommit: () => {
      failNext = true
    },
    onCommit: (fn) => {
      hook = fn
    },
  }
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

test('units that arrive together share one COMMIT, and every one of them lands', async (t) => {
  const h = open(t)
  const units = range(1, 100).map((n) => h.store.write(async () => (h.insert(n), n * 10)))
  assert.deepEqual(await Promise.all(units), range(1, 100).map((n) => n * 10))
  assert.equal(h.commits(), 1)
  assert.deepEqual(h.committed(), range(1, 100))
})

test('a full batch commits at once, without waiting for the event loop; the rest form the next batch', async (t) => {
  const h = open(t, { maxBatch: 10 })
  // Queued before the batch's own flush: while this has not run, the loop has not turned.
  let turned = false
  setImmediate(() => (turned = true))
  const seenAtStart = new Map<number, { turned: boolean; commits: number; committed: number[] }>()
  const units = range(1, 25).map((n) => h.store.write(async () => {
    if (n === 11 || n === 21) seenAtStart.set(n, { turned, commits: h.commits(), committed: h.committed() })
    h.insert(n)
  }))
  await Promise.all(units)
  // Each full batch had committed by the time the next unit started, within the same turn.
  assert.deepEqual(seenAtStart.get(11), { turned: false, commits: 1, committed: range(1, 10) })
  assert.deepEqual(seenAtStart.get(21), { turned: false, commits: 2, committed: range(1, 20) })
  assert.equal(h.commits(), 3)
  assert.deepEqual(h.committed(), range(1, 25))
})

test('a unit that throws rolls back only its own savepoint; the others of its batch commit', async (t) => {
  const h = open(t)
  const boom = new Error('unit 20 fails after writing')
  const units = range(1, 50).map((n) =>
    h.store.write(async () => {
      h.insert(n)
      if (n === 20) throw boom
      return n
    }),
  )
  const results = await Promise.allSettled(units)
  assert.deepEqual(results[19], { status: 'rejected', reason: boom })
  assert.equal(results.filter((r) => r.status === 'fulfilled').length, 49)
  assert.equal(h.commits(), 1)
  assert.deepEqual(h.committed(), range(1, 50).filter((n) => n !== 20))
})

test('no unit settles before the COMMIT that holds its writes has returned', async (t) => {
  const h = open(t)
  const settled: boolean[] = []
  const seenAtCommit: { settled: number; committed: number }[] = []
  h.onCommit(() => seenAtCommit.push({ settled: settled.filter(Boolean).length, committed: h.committed().length }))
  const units = range(1, 30).map((n, i) => {
    settled[i] = false
    return h.store.write(async () => h.insert(n)).then(() => {
      // By the time a unit learns it succeeded, another connection can read its row.
      assert.ok(h.committed().includes(n))
      settled[i] = true
    })
  })
  await Promise.all(units)
  assert.deepEqual(seenAtCommit, [{ settled: 0, committed: 0 }])
  assert.ok(settled.every(Boolean))
})

test('a failing COMMIT fails every unit of its batch and keeps none of their writes; the next batch works', async (t) => {
  const h = open(t)
  h.failNextCommit()
  const failed = await Promise.allSettled(range(1, 20).map((n) => h.store.write(async () => h.insert(n))))
  assert.ok(failed.every((r) => r.status === 'rejected' && (r.reason as Error).message === 'injected COMMIT failure'))
  assert.deepEqual(h.committed(), [])
  assert.equal(h.store.db.isTransaction, false)

  await Promise.all(range(21, 25).map((n) => h.store.write(async () => h.insert(n))))
  assert.equal(h.commits(), 2)
  assert.deepEqual(h.committed(), range(21, 25))
})

test('a lone write commits on the next turn of the event loop, without waiting for a batch to fill', async (t) => {
  const h = open(t) // maxBatch 256: one unit is far from a full batch
  const unit = h.store.write(async () => h.insert(1))
  assert.equal(h.commits(), 0)
  assert.deepEqual(h.committed(), [])
  await nextTurn() // the flush was queued first, so it has run by now
  assert.equal(h.commits(), 1)
  assert.deepEqual(h.committed(), [1])
  await unit
})

test('when SQLite rolls the open batch back by itself, its units fail instead of being reported written', async (t) => {
  const h = open(t)
  const lost = h.store.write(async () => h.insert(1))
  // Once the unit has ended (a read through the store waits for that), before its batch commits:
  // what SQLite does on an I/O error or a full disk, the whole transaction is gone.
  await h.store.accounts.findUser(1)
  assert.equal(h.commits(), 0)
  h.store.db.exec('ROLLBACK')
  const next = h.store.write(async () => h.insert(2))
  await assert.rejects(lost, TransactionLost)
  await next
  assert.deepEqual(h.committed(), [2])
})

test('a unit that ends the shared transaction itself fails, and so do the units before it', async (t) => {
  const h = open(t)
  const before = h.store.write(async () => h.insert(1))
  const culprit = h.store.write(async () => {
    h.insert(2)
    h.store.db.exec('ROLLBACK')
  })
  const after = h.store.write(async () => h.insert(3))
  await assert.rejects(culprit, /no such savepoint/)
  await assert.rejects(before, TransactionLost)
  await after
  assert.deepEqual(h.committed(), [3])
})

// Units are asynchronous now (issue 16): the rule "a unit must be synchronous" became "a unit
// awaits only its tx"; its tests are in async-units.test.ts (UnitEscaped, nested writes).

test('closing the store while a unit runs waits for it, then commits the open batch before the connection goes', async (t) => {
  const h = open(t)
  const unit = h.store.write(async (tx) => {
    h.insert(7)
    await tx.accounts.emailTaken('closing@example.com') // close() is asked for meanwhile
    h.insert(8)
  })
  await h.store.close()
  await unit
  assert.deepEqual(h.committed(), [7, 8])
})

test('a backup asked for while a unit runs waits for it and copies its writes', async (t) => {
  const h = open(t)
  const unit = h.store.write(async (tx) => {
    h.insert(1)
    await tx.accounts.emailTaken('backup@example.com') // backup() is asked for meanwhile
    h.insert(2)
  })
  const target = `${h.file}.backup`
  t.after(() => rmSync(target, { force: true }))
  await h.store.backup(target)
  await unit
  const copy = new DatabaseSync(target, { readOnly: true })
  t.after(() => copy.close())
  assert.deepEqual(copy.prepare('SELECT n FROM unit_rows ORDER BY n').all().map((r) => r['n']), [1, 2])
})
