import { test } from 'node:test'
import assert from 'node:assert/strict'
import { LockSharing, RowBudget, type PacingOptions } from '../../src/processing/pacing.ts'

/**
 * How much of the write lock a processor unit takes (issue 15, item 6), on a clock the test
 * moves: the full batch while nobody else writes, as many rows as the small budget holds while
 * another connection commits, and a pause between units only then.
 */
const OPTIONS: PacingOptions = { sharedBudgetMs: 8, quietBudgetMs: 40, gapMs: 1, windowMs: 1_000 }

function harness() {
  let now = 0
  let version = 1
  const sharing = new LockSharing(() => version, OPTIONS, () => now)
  const budget = new RowBudget(sharing, 2000, () => now)
  /** One unit that takes what the budget allows at `msPerRow`; answers the rows it took. */
  const unit = (msPerRow: number): number => {
    const rows = budget.begin()
    now += rows * msPerRow
    budget.end(rows)
    return rows
  }
  return {
    sharing,
    unit,
    otherCommits: () => void version++,
    advance: (ms: number) => void (now += ms),
  }
}

test('with nobody else writing, units take the full batch while it fits the quiet budget, fewer on a slow disk', () => {
  const h = harness()
  assert.equal(h.unit(0.01), 2000)
  assert.equal(h.unit(0.01), 2000)
  assert.equal(h.sharing.shared, false)
  // Rows ten times slower (a slow disk): once the average has followed, 40 ms holds 400 of them.
  for (let i = 0; i < 20; i++) h.unit(0.1)
  assert.equal(h.unit(0.1), 400)
})

test('once another connection commits, units fit the small budget and each is followed by a pause, until it has been quiet for the window', async () => {
  const h = harness()
  assert.equal(h.unit(0.01), 2000)
  await h.sharing.pause()
  assert.equal(h.sharing.shared, false)
  h.otherCommits()
  await h.sharing.pause()
  assert.equal(h.sharing.shared, true)
  // 8 ms at 0.01 ms a row.
  assert.equal(h.unit(0.01), 800)
  h.advance(990)
  await h.sharing.pause()
  assert.equal(h.sharing.shared, true, 'within the window of the last commit seen')
  h.advance(5)
  await h.sharing.pause()
  assert.equal(h.sharing.shared, false)
  assert.equal(h.unit(0.01), 2000)
})

test('a phase not timed yet starts small while the lock is shared, and rows however slow still move the run on', async () => {
  let version = 1
  let now = 0
  const sharing = new LockSharing(() => version, OPTIONS, () => now)
  version++
  await sharing.pause()
  const budget = new RowBudget(sharing, 2000, () => now)
  assert.equal(budget.begin(), 100)
  now += 100 * 50
  budget.end(100)
  assert.equal(budget.begin(), 10)
})
