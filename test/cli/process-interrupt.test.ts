/**
 * Issue 25, item 10: Ctrl-C (SIGINT) during `replenish process` finishes the batch in hand, prints
 * what was done and `interrupted after N of M; run it again to go on`, and exits 130; running it
 * again does the rest, and nothing twice. A real process (a signal needs one) on a database with
 * enough due subscriptions that the run is far from its end when the signal comes: it is sent
 * once the first batch has been reported.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ON_POSTGRES, openStoreAt } from '../helpers/store.ts'
import { testSql } from '../helpers/rows.ts'
import { assertExactlyOnePerSubscription, seedDueSubscriptions } from '../processing/helpers.ts'
import { migratedDb, runCli, spawnCli } from './harness.ts'

const DUE = '2026-01-01'
/** 20 (PostgreSQL) or 30 batches of 2,000: the signal comes after the first, long before the last. */
const COUNT = ON_POSTGRES ? 40_000 : 60_000

test('SIGINT during process: the batch in hand is finished, one line says how far it got, exit 130; the next run does the rest', async (t) => {
  const db = await migratedDb(t)
  const store = await openStoreAt(db)
  t.after(() => store.close())
  await seedDueSubscriptions(store, COUNT, DUE)

  const child = spawnCli(t, ['process', '--as-of', DUE], { env: { REPLENISH_DB: db } })
  // The first progress line comes after the first batch committed; many more are to come.
  let exited = false
  void child.exited.then(() => (exited = true))
  await until(() => exited || new RegExp(`^examined \\d+/${COUNT} due`, 'm').test(child.stderr()))
  assert.equal(exited, false, child.stderr())
  child.kill('SIGINT')
  const { code, signal } = await child.exited
  assert.deepEqual({ code, signal }, { code: 130, signal: null }, child.stderr())

  const lines = child.stderr().trimEnd().split('\n')
  const last = new RegExp(`^replenish: interrupted after (\\d+) of ${COUNT}; run it again to go on$`).exec(lines.at(-1) ?? '')
  assert.ok(last, lines.join('\n'))
  const done = Number(last[1])
  assert.ok(done > 0 && done < COUNT, `interrupted after ${done}`)
  // What was done is what the summary says, and every batch it started is whole: one
  // installment per subscription examined, none half made.
  assert.match(child.stdout(), new RegExp(`^processed ${done} subscriptions as of ${DUE} in [\\d.]+ s \\(examined ${done} due\\): ${done} installments made, `))
  await assertExactlyOnePerSubscription(store, done)

  const rest = await runCli(['process', '--as-of', DUE], { REPLENISH_DB: db })
  assert.equal(rest.status, 0, rest.stderr.join('\n'))
  assert.match(rest.stdout.join('\n'), new RegExp(`^processed ${COUNT - done} subscriptions as of ${DUE} `))
  await assertExactlyOnePerSubscription(store, COUNT)
  const row = await testSql(store).get("SELECT count(*) AS n FROM subscriptions WHERE actionable_date <= '2026-01-01'")
  assert.equal(Number(row?.['n']), 0)
})

test('process --help names exit status 130 for an interrupted run', async () => {
  const help = (await runCli(['process', '--help'])).stdout.join('\n')
  assert.match(help, /^ {2}130 {2}stopped by SIGINT \(Ctrl-C\) or SIGTERM once the batch in hand was done/m)
})

async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 5))
}
