/**
 * The monthly report's counts of new subscriptions (C16) when many are inserted at once: one
 * statement of many rows (a bulk script), and an import. Each row is counted once, in its currency
 * and month, and one that arrives already stopped moves the count of active ones in the month of
 * its last change. On PostgreSQL an import adds its subscriptions' counts once, at its end
 * (migration 17), instead of once a row: the row trigger leaves them to it.
 */
import { test } from 'node:test'
import { createHash } from 'node:crypto'
import assert from 'node:assert/strict'
import { openTestStore } from '../helpers/store.ts'
import { testSql } from '../helpers/rows.ts'
import { runImport } from '../../src/admin/imports.ts'
import { generateImport } from '../import/generate.ts'
import type { ImportContext } from '../../src/domain/import/records.ts'

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

test('an import: each subscription counted once, in its currency and month, stopped ones in the month of their last change; later creates add to it', async (t) => {
  const { store } = await openTestStore(t)
  const g = generateImport(60)
  const context: ImportContext = {
    now: '2026-11-29T08:00:00.000Z', today: '2026-11-29', timeZone: 'UTC', currency: 'USD',
    hashKey: (key) => createHash('sha256').update(key).digest('hex'),
  }
  await store.write((tx) => runImport(tx, Buffer.from(g.lines.join('\n') + '\n'), context))

  // What C16's definitions make of the generated subscriptions, by currency and month.
  type Count = { month: string; new: number; canceled: number; active: number }
  const expected = new Map<string, Map<string, Count>>()
  const at = (currency: string, month: string): Count => {
    const months = expected.get(currency) ?? new Map<string, Count>()
    expected.set(currency, months)
    const c = months.get(month) ?? { month, new: 0, canceled: 0, active: 0 }
    months.set(month, c)
    return c
  }
  for (const s of g.subscriptions) {
    const made = at(s.currency, s.created_at.slice(0, 7))
    made.new++
    made.active++
    if (s.state !== 'active' && s.state !== 'pending_cancellation') {
      const stopped = at(s.currency, s.updated_at.slice(0, 7))
      stopped.active--
      if (s.state === 'canceled') stopped.canceled++
    }
  }
  assert.ok(expected.size >= 2 && [...expected.values()].some((m) => [...m.values()].some((c) => c.canceled > 0)), 'several currencies, some canceled')
  for (const [currency, months] of expected) {
    const report = await store.reports.months(currency, '2000-01', '2099-12')
    const got = report.months.map((m) => ({ month: m.month, new: m.new_subscriptions, canceled: m.canceled_subscriptions, active: m.active_change }))
    const want = [...months.values()].filter((c) => c.new !== 0 || c.canceled !== 0 || c.active !== 0).sort((a, b) => a.month.localeCompare(b.month))
    assert.deepEqual(got.filter((c) => c.new !== 0 || c.canceled !== 0 || c.active !== 0), want, currency)
  }

  // The import's transaction is over: a subscription inserted after it is counted by its trigger.
  const currency = g.subscriptions[0]!.currency
  const before = await store.reports.months(currency, '2026-11', '2026-11')
  await testSql(store).exec(`INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
    VALUES (${g.subscriptions[0]!.user_id}, 'active', false, 1, 'month', '2026-12-01', 1, '${currency}', '2026-11-01', '2026-11-02T00:00:00.000Z', '2026-11-02T00:00:00.000Z')`)
  const after = await store.reports.months(currency, '2026-11', '2026-11')
  assert.equal((after.months[0]?.new_subscriptions ?? 0) - (before.months[0]?.new_subscriptions ?? 0), 1)
})

