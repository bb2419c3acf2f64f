import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { processAsOf, seedDueSubscriptions } from './helpers.ts'
import { formatSummary, progressPrinter } from '../../src/cli/process.ts'
import { runProcessor, type RunSummary } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'

/** Issue 15, item 7: `process` prints its last progress line once, and progress and summary say what they count. */

test('a due subscription with nothing to deliver is examined, not processed: progress and summary say so, in the same words', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  await createSubscription(server, alice.key, { actionable_date: '2026-01-20', line_items_attributes: [{ subscribable_id: item, quantity: 2 }] })
  await createSubscription(server, alice.key, { actionable_date: '2026-01-20' })
  const run = await processAsOf(server, '2026-01-31')
  assert.equal(run.err.length, 1)
  assert.match(run.err[0] ?? '', /^examined 2\/2 due \(100\.0%\), \d+\/s, ETA 0 s$/)
  assert.equal(run.out.length, 1)
  assert.match(run.out[0] ?? '', /^processed 1 subscription as of 2026-01-31 in \d+\.\d s \(examined 2 due\): 1 installment made, 0 ended, 0 canceled, 0 resumed; 0 retries due, 0 abandoned$/)
})

test('the last progress line is printed once, also when the walk by id ends after its last due rows', async (t) => {
  const server = await startTestServer(t)
  // More due than ten units hold: the run walks by id, and the ids after the last due row hold
  // none, so the walk learns it is done one unit after it has seen every due row.
  await seedDueSubscriptions(server.store, 30, '2026-01-10')
  await seedDueSubscriptions(server.store, 5, '2026-02-10')
  const lines: string[] = []
  const s = await runProcessor(server.store, { clock: serviceClock('UTC', '2026-01-15'), batchSize: 2, onProgress: progressPrinter((l) => lines.push(l)) })
  assert.equal(s.examined, 30)
  assert.equal(lines.filter((l) => l.startsWith('examined 30/30 due (100.0%)')).length, 1, lines.join('\n'))
  assert.match(lines.at(-1) ?? '', /^examined 30\/30 due \(100\.0%\)/)
})

test('the summary counts in the singular for one and in the plural otherwise', () => {
  const base: RunSummary = {
    ran: true, asOf: '2026-01-31', examined: 1, total: 1, processed: 1, installments: 1, ended: 0, canceled: 0, resumed: 0, retriesDue: 1, abandoned: 0, upcoming: 0, completed: true, elapsedMs: 1234,
  }
  assert.equal(formatSummary(base),
    'processed 1 subscription as of 2026-01-31 in 1.2 s (examined 1 due): 1 installment made, 0 ended, 0 canceled, 0 resumed; 1 retry due, 0 abandoned')
  assert.equal(formatSummary({ ...base, examined: 3, processed: 2, installments: 2, retriesDue: 0 }),
    'processed 2 subscriptions as of 2026-01-31 in 1.2 s (examined 3 due): 2 installments made, 0 ended, 0 canceled, 0 resumed; 0 retries due, 0 abandoned')
  // C17: the upcoming deliveries told of, only when there were some.
  assert.match(formatSummary({ ...base, upcoming: 1 }), /0 abandoned; 1 upcoming delivery announced$/)
  assert.match(formatSummary({ ...base, upcoming: 3 }), /0 abandoned; 3 upcoming deliveries announced$/)
})
