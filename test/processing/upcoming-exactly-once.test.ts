/**
 * C17: `subscription.upcoming` exactly once per (subscription, date) across instances and
 * concurrent runs. Two connections to one database (two instances), each walking the window at
 * the same moment without the processor's lease (as two runs would after a lease ran out), round
 * after round: every subscription is told once, never twice, never not at all. PostgreSQL's race
 * against customers' skips is test/store/upcoming-race.pg.test.ts.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { announceUpcoming } from '../../src/processing/upcoming.ts'
import { addDays } from '../../src/domain/dates.ts'
import { openStoreAt, openTestStore } from '../helpers/store.ts'
import { testSql } from '../helpers/rows.ts'
import { seedDueSubscriptions } from './helpers.ts'

const TODAY = '2026-02-01'

test('two instances walking the window at once tell each subscription once (20 rounds)', async (t) => {
  const subscriptions = 120
  for (let round = 0; round < 20; round++) {
    const first = await openTestStore(undefined)
    const second = await openStoreAt(first.location)
    try {
      // Due two days from now: inside the default window.
      await seedDueSubscriptions(first.store, subscriptions, addDays(TODAY, 2))
      // Small units, so the two walks interleave many times.
      const told = await Promise.all([first.store, second].map((store) => announceUpcoming(store, { today: TODAY, days: 3, batch: 7 })))
      assert.equal(told.reduce((x, y) => x + y, 0), subscriptions, `round ${round}: ${told.join(' + ')}`)
      const rows = await testSql(first.store).all(`SELECT subscription_id, count(*) AS n FROM events WHERE type = 'subscription.upcoming'
        GROUP BY subscription_id HAVING count(*) <> 1`)
      assert.deepEqual(rows, [], `round ${round}`)
      const marked = await testSql(first.store).get(`SELECT count(*) AS n FROM subscriptions WHERE upcoming_for = '${addDays(TODAY, 2)}'`)
      assert.equal(Number(marked?.['n']), subscriptions)
    } finally {
      await second.close()
      await first.close()
    }
  }
  t.diagnostic('each round: both walks at once over 120 subscriptions, units of 7')
})
