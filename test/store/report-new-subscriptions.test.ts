/**
 * The monthly report's counts of new subscriptions (C16) when one statement inserts many rows (a
 * bulk seed, an import batch): on PostgreSQL a statement trigger sums the statement's rows by
 * currency and month (migration 17), on SQLite a row trigger adds each. Either way every row is
 * counted once, in its currency and month, and one that arrives already stopped moves the count
 * of active ones in the month of its last change.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openTestStore } from '../helpers/store.ts'
import { testSql } from '../helpers/rows.ts'

test('one statement inserting subscriptions of several currencies, months and states: each counted once, in its currency and month', async (t) => {
  const { store } = await openTestStore(t)
  const sql = testSql(store)
  const at = '2026-01-01T00:00:00.000Z'
  await sql.exec(`INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'report@example.com', '${at}', '${at}')`)
  // 1..300: USD made in March, every third of them canceled in May, every fifth paused-state
  // 'inactive' in April; 301..400: EUR made in April. Values from a recursive query: one statement.
  await sql.exec(`
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 400)
    INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
      SELECT 1,
        CASE WHEN i <= 300 AND i % 3 = 0 THEN 'canceled' WHEN i <= 300 AND i % 5 = 0 THEN 'inactive' ELSE 'active' END,
        false, 1, 'month', '2026-07-01', 1, CASE WHEN i <= 300 THEN 'USD' ELSE 'EUR' END, '2026-03-01',
        CASE WHEN i <= 300 THEN '2026-03-10T00:00:00.000Z' ELSE '2026-04-10T00:00:00.000Z' END,
        CASE WHEN i <= 300 AND i % 3 = 0 THEN '2026-05-02T00:00:00.000Z' WHEN i <= 300 AND i % 5 = 0 THEN '2026-04-02T00:00:00.000Z'
          WHEN i <= 300 THEN '2026-03-10T00:00:00.000Z' ELSE '2026-04-10T00:00:00.000Z' END
      FROM k`)
  const counts = (months: Awaited<ReturnType<typeof store.reports.months>>) =>
    months.months.map((m) => ({ month: m.month, new: m.new_subscriptions, canceled: m.canceled_subscriptions, active: m.active_change }))

  // Among 1..300: 100 multiples of 3 canceled; multiples of 5 but not of 3: 60 - 20 = 40 inactive.
  const usd = await store.reports.months('USD', '2026-01', '2026-12')
  assert.equal(usd.active_before, 0)
  assert.deepEqual(counts(usd), [
    { month: '2026-03', new: 300, canceled: 0, active: 300 },
    { month: '2026-04', new: 0, canceled: 0, active: -40 },
    { month: '2026-05', new: 0, canceled: 100, active: -100 },
  ])
  assert.deepEqual(counts(await store.reports.months('EUR', '2026-01', '2026-12')), [{ month: '2026-04', new: 100, canceled: 0, active: 100 }])

  // A second statement adds to the same months, it does not replace them.
  await sql.exec(`INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
    VALUES (1, 'active', false, 1, 'month', '2026-07-01', 1, 'EUR', '2026-04-01', '2026-04-20T00:00:00.000Z', '2026-04-20T00:00:00.000Z'),
           (1, 'canceled', false, 1, 'month', '2026-07-01', 1, 'EUR', '2026-04-01', '2026-04-21T00:00:00.000Z', '2026-06-01T00:00:00.000Z')`)
  assert.deepEqual(counts(await store.reports.months('EUR', '2026-01', '2026-12')), [
    { month: '2026-04', new: 102, canceled: 0, active: 102 },
    { month: '2026-06', new: 0, canceled: 1, active: -1 },
  ])
})
