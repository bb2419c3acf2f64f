/**
 * C17 on PostgreSQL with several instances: `subscription.upcoming` once per (subscription, date)
 * while two instances walk the window at once and customers skip on both. The walk reads without
 * locks and marks with a compare-and-set that steps over rows a request holds (SKIP LOCKED), so a
 * customer is never waited for, no date is told twice, and a date skipped away is not told.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { announceUpcoming } from '../../src/processing/upcoming.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { serviceClock } from '../../src/clock.ts'
import { addDays } from '../../src/domain/dates.ts'
import { skip } from '../../src/domain/lifecycle.ts'
import { applyTransition } from '../../src/api/kit/subscription-actions.ts'
import { openStoreAt, openTestStore, postgresOf } from '../helpers/store.ts'

const TODAY = '2026-02-01'
const DUE = addDays(TODAY, 2)

async function seed(store: Store, n: number): Promise<void> {
  const now = new Date().toISOString()
  await postgresOf(store).pool.query(`
    INSERT INTO users (email, created_at, updated_at) VALUES ('race@example.com', '${now}', '${now}');
    INSERT INTO subscribables (sku, name, subscribable, created_at, updated_at) VALUES ('RACE-1', 'Race item', true, '${now}', '${now}');
    INSERT INTO subscriptions (user_id, state, interval_length, interval_units, actionable_date, due_floor, currency, created_on, created_at, updated_at)
      SELECT (SELECT id FROM users), 'active', 1, 'week', '${DUE}', '${DUE}', 'USD', '${TODAY}', '${now}', '${now}' FROM generate_series(1, ${n});
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT id, (SELECT id FROM subscribables), 1, '${now}', '${now}' FROM subscriptions;
  `)
}

async function skipOnce(store: Store, id: number): Promise<void> {
  await store.write(async (tx) => {
    const sub = await tx.subscriptions.lock(id)
    if (!sub) throw new Error(`subscription ${id} is gone`)
    await applyTransition(tx, sub, skip(sub, TODAY, { maxSuccessiveSkips: undefined, maxTotalSkips: undefined }))
  })
}

test('two instances telling and customers skipping at once: no date told twice, none skipped away told, every other told once', async (t) => {
  const N = 1500
  const first = await openTestStore(t)
  const second = await openStoreAt(first.location)
  t.after(() => second.close())
  const [a, b] = [first.store, second]
  await seed(a, N)
  const skipped = new Set<number>()
  let running = true
  const customer = async (store: Store): Promise<void> => {
    while (running) {
      const id = 1 + Math.floor(Math.random() * N)
      await skipOnce(store, id)
      skipped.add(id)
    }
  }
  const customers = [a, b, a, b].map(customer)
  try {
    // Two runs as the processor makes them (the lease lets one in at a time) and two bare walks
    // (as runs whose lease ran out would), all at once, in small units.
    await Promise.all([
      ...[a, b].map((store) => runProcessor(store, { clock: serviceClock('UTC', TODAY), waitForLease: true, batchSize: 40, upcomingDays: 3 })),
      ...[a, b].map((store) => announceUpcoming(store, { today: TODAY, days: 3, batch: 25 })),
    ])
  } finally {
    running = false
    await Promise.all(customers)
  }
  // Rows a request held while the walks passed are the next run's.
  await runProcessor(a, { clock: serviceClock('UTC', TODAY), upcomingDays: 3 })

  const pool = postgresOf(a).pool
  const events = (await pool.query<{ subscription_id: number; date: string }>(
    `SELECT subscription_id, (data::jsonb) #>> '{object,actionable_date}' AS date FROM events WHERE type = 'subscription.upcoming'`)).rows
  const perSubscription = new Map<number, string[]>()
  for (const e of events) perSubscription.set(e.subscription_id, [...(perSubscription.get(e.subscription_id) ?? []), e.date])
  assert.ok(skipped.size > 50, `the customers skipped while the walks ran (${skipped.size})`)
  assert.deepEqual([...perSubscription].filter(([, dates]) => dates.length > 1), [], 'no subscription told twice')
  assert.deepEqual(events.filter((e) => e.date !== DUE).map((e) => e.subscription_id), [], 'only the date inside the window is told (a skip moves it a week on)')
  const untouched = Array.from({ length: N }, (_, i) => i + 1).filter((id) => !skipped.has(id))
  assert.deepEqual(untouched.filter((id) => perSubscription.get(id)?.length !== 1), [], 'every subscription not skipped told exactly once')
  const marks = (await pool.query<{ id: number; upcoming_for: string | null }>('SELECT id, upcoming_for FROM subscriptions ORDER BY id')).rows
  assert.deepEqual(marks.filter((m) => (m.upcoming_for === DUE) !== perSubscription.has(m.id)).map((m) => m.id), [], 'marked exactly where told')
})
