/**
 * Processing exactly once with several instances on one PostgreSQL database (design study §3.5):
 * the due walks lock what they take and skip what a request holds (FOR UPDATE SKIP LOCKED), and
 * a batch moves a subscription on only from the date its plan was made from (a compare-and-set).
 * The unique (subscription, due date) key alone prevents duplicates, not lost or overridden skips:
 * these tests hold the rest, and the lease that instances on several hosts share. PostgreSQL's
 * own (`*.pg.test.ts`).
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import type { Store } from '../../src/store/api.ts'
import { runProcessor, type RunSummary } from '../../src/processing/processor.ts'
import { LEASE_TTL_MS, PROCESSING_LEASE, newHolder } from '../../src/processing/lease.ts'
import { serviceClock } from '../../src/clock.ts'
import { addInterval } from '../../src/domain/dates.ts'
import { skip } from '../../src/domain/lifecycle.ts'
import { applyTransition } from '../../src/api/kit/subscription-actions.ts'
import { openStoreAt, openTestStore, postgresOf } from '../helpers/store.ts'

const START = '2026-02-01'
const NEXT = '2026-03-01'
const clock = serviceClock('UTC', START)
const NO_LIMITS = { maxSuccessiveSkips: undefined, maxTotalSkips: undefined }

/** Two instances of the service on one database: two stores, each with its own pool. */
async function twoInstances(t: TestContext): Promise<[Store, Store]> {
  const first = await openTestStore(undefined)
  const second = await openStoreAt(first.location)
  t.after(async () => {
    await second.close()
    await first.close()
  })
  return [first.store, second]
}

/** `n` monthly subscriptions due on START, one line item each, no events yet. */
async function seed(store: Store, n: number): Promise<void> {
  const now = new Date().toISOString()
  await postgresOf(store).pool.query(`
    INSERT INTO users (email, created_at, updated_at) VALUES ('race@example.com', '${now}', '${now}');
    INSERT INTO subscribables (sku, name, subscribable, created_at, updated_at) VALUES ('RACE-1', 'Race item', true, '${now}', '${now}');
    INSERT INTO subscriptions (user_id, state, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
      SELECT (SELECT id FROM users), 'active', 1, 'month', '${START}', 1, 'USD', '${START}', '${now}', '${now}' FROM generate_series(1, ${n});
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT id, (SELECT id FROM subscribables), 1, '${now}', '${now}' FROM subscriptions;
  `)
}

/** A customer's skip, as the API makes it: the row locked, the transition, its event, in one unit. */
async function skipOnce(store: Store, id: number): Promise<void> {
  await store.write(async (tx) => {
    const sub = await tx.subscriptions.lock(id)
    if (!sub) throw new Error(`subscription ${id} is gone`)
    await applyTransition(tx, sub, skip(sub, START, NO_LIMITS))
  })
}

/** Skips random subscriptions until `stop()`; counts the skips that committed. */
async function customer(store: Store, n: number, skips: Map<number, number>, stop: () => boolean): Promise<void> {
  while (!stop()) {
    const id = 1 + Math.floor(Math.random() * n)
    await skipOnce(store, id)
    skips.set(id, (skips.get(id) ?? 0) + 1)
  }
}

interface SubscriptionState {
  id: number
  actionable_date: string
  skip_count: number
  event_count: number
  last_event_id: number | null
  installments: number
  created_events: number
  skipped_events: number
}

async function subscriptionStates(store: Store): Promise<SubscriptionState[]> {
  return (await postgresOf(store).pool.query<SubscriptionState>(`SELECT s.id, s.actionable_date, s.skip_count, s.event_count, s.last_event_id,
      (SELECT count(*) FROM installments i WHERE i.subscription_id = s.id) AS installments,
      (SELECT count(*) FROM events e WHERE e.subscription_id = s.id AND e.type = 'installment.created') AS created_events,
      (SELECT count(*) FROM events e WHERE e.subscription_id = s.id AND e.type = 'subscription.skipped') AS skipped_events
    FROM subscriptions s ORDER BY s.id`)).rows
}

/** Subscriptions whose events are not one chain from `last_event_id` through `prev_id` to null, `event_count` links long. */
async function brokenChains(store: Store, subs: readonly SubscriptionState[]): Promise<number[]> {
  const events = (await postgresOf(store).pool.query<{ id: number; subscription_id: number; prev_id: number | null }>(
    'SELECT id, subscription_id, prev_id FROM events WHERE subscription_id IS NOT NULL',
  )).rows
  const byId = new Map(events.map((e) => [e.id, e]))
  const count = new Map<number, number>()
  for (const e of events) count.set(e.subscription_id, (count.get(e.subscription_id) ?? 0) + 1)
  return subs.filter((s) => {
    const seen = new Set<number>()
    for (let at = s.last_event_id; at !== null; ) {
      const e = byId.get(at)
      if (e === undefined || e.subscription_id !== s.id || seen.has(at)) return true
      seen.add(at)
      at = e.prev_id
    }
    return seen.size !== s.event_count || seen.size !== (count.get(s.id) ?? 0)
  }).map((s) => s.id)
}

test('two processors and customers skipping at once: each due date once, no skip lost or overridden, every chain whole', async (t) => {
  const N = 2000
  const [a, b] = await twoInstances(t)
  await seed(a, N)
  const skips = new Map<number, number>()
  let processing = true
  const customers = [a, b, a, b].map((store) => customer(store, N, skips, () => !processing))
  // As `replenish process` runs them, from two instances at once: one waits for the other's
  // lease. Small batches (walking by id) make many units for the customers to land between.
  const runs: RunSummary[] = []
  try {
    runs.push(...(await Promise.all([a, b].map((store) => runProcessor(store, { clock, waitForLease: true, batchSize: 50 })))))
  } finally {
    processing = false
    await Promise.all(customers)
  }
  // Rows a request held while the walks passed were left for the next run.
  runs.push(await runProcessor(a, { clock }))

  const subs = await subscriptionStates(a)
  assert.equal(subs.length, N)
  assert.ok([...skips.values()].reduce((x, y) => x + y, 0) > 100, 'the customers skipped while the processors ran')
  const duplicates = (await postgresOf(a).pool.query<{ n: number }>(
    'SELECT count(*) - count(DISTINCT (subscription_id, due_date)) AS n FROM installments',
  )).rows[0]?.n
  assert.equal(duplicates, 0)
  assert.equal(subs.reduce((n, s) => n + s.installments, 0), runs.reduce((n, r) => n + r.installments, 0), 'installments as the runs counted them')
  assert.deepEqual(subs.filter((s) => s.installments > 1).map((s) => s.id), [], 'one installment each at most: due once, on START')
  assert.deepEqual(subs.filter((s) => s.created_events !== s.installments).map((s) => s.id), [], 'one installment.created per installment')
  assert.deepEqual(subs.filter((s) => s.skip_count !== (skips.get(s.id) ?? 0) || s.skipped_events !== s.skip_count).map((s) => s.id), [],
    'every committed skip counted and recorded')
  assert.deepEqual(subs.filter((s) => s.actionable_date !== addInterval(START, s.installments + s.skip_count, 'month', 1)).map((s) => s.id), [],
    'date = start + (installments + skips) months: no skip lost or overridden by a batch')
  assert.deepEqual(subs.filter((s) => s.actionable_date <= START).map((s) => s.id), [], 'nothing left due')
  assert.deepEqual(await brokenChains(a, subs), [], 'every chain of events whole')
})

for (const [walk, batchSize] of [['through the date index', 5], ['by id', 1]] as const) {
  test(`a subscription a request holds is stepped over, not waited for, and processed by the next run (walking ${walk})`, async (t) => {
    const [a] = await twoInstances(t)
    await seed(a, 20)
    const request = await postgresOf(a).pool.connect()
    try {
      await request.query('BEGIN')
      await request.query('SELECT 1 FROM subscriptions WHERE id = 7 FOR UPDATE')
      // Waiting for the row would fail the run (lock_timeout, 5 s) instead.
      const first = await runProcessor(a, { clock, batchSize })
      assert.deepEqual([first.completed, first.installments], [true, 19])
      const held = (await subscriptionStates(a)).find((s) => s.id === 7)
      assert.deepEqual([held?.actionable_date, held?.installments], [START, 0])
    } finally {
      await request.query('COMMIT')
      request.release()
    }
    assert.equal((await runProcessor(a, { clock, batchSize })).installments, 1)
    assert.deepEqual((await subscriptionStates(a)).filter((s) => s.actionable_date !== NEXT || s.installments !== 1).map((s) => s.id), [])
  })
}

test('a plan whose subscription changed since it was read makes no installment and moves nothing (compare-and-set)', async (t) => {
  const [a, b] = await twoInstances(t)
  await seed(a, 2)
  // The rows as a batch read them; the unit ended, so the locks are gone (as if read without).
  const rows = await a.write((tx) => tx.installments.dueByDate(START, '', 0, 10))
  assert.deepEqual(rows.map((r) => [r.id, r.actionable_date]), [[1, START], [2, START]])
  await skipOnce(b, 1)
  const plans = rows.map((r) => ({ subscription_id: r.id, due_date: START, actionable_date: NEXT, state: 'active' as const }))
  const made = await a.write((tx) => tx.installments.processMany(plans, new Date().toISOString()))
  assert.deepEqual([...made], [2])
  const subs = await subscriptionStates(a)
  assert.deepEqual(subs.map((s) => [s.id, s.actionable_date, s.skip_count, s.installments, s.created_events]), [
    [1, NEXT, 1, 0, 0], // the skip stands, and no installment for the date it skipped
    [2, NEXT, 0, 1, 1],
  ])
})

test("the lease: kept while its holder's process has a session, taken at once when none has, timed on the database clock", async (t) => {
  const [a, b] = await twoInstances(t)
  const lease = (store: Store, holder: string, skewMs = 0) =>
    store.write((tx) => {
      const now = Date.now() + skewMs
      return tx.leases.acquire(PROCESSING_LEASE, holder, now + LEASE_TTL_MS, now, () => false)
    })
  const stored = async () => (await postgresOf(a).pool.query<{ holder: string; left: number }>(
    'SELECT holder, expires_at - (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS left FROM leases',
  )).rows
  // Both instances are this process (one session name): the holder is alive.
  const first = newHolder()
  assert.equal(await lease(a, first), undefined)
  assert.equal((await lease(b, newHolder()))?.holder, first)
  // A holder whose process has no session on this database is gone, from any host, at once.
  await postgresOf(a).pool.query("UPDATE leases SET holder = 'elsewhere:1:abc'")
  // A caller whose clock runs ten minutes ahead still holds it for the TTL on the database's clock.
  const second = newHolder()
  assert.equal(await lease(b, second, 600_000), undefined)
  const [row] = await stored()
  assert.equal(row?.holder, second)
  assert.ok(Math.abs((row?.left ?? 0) - LEASE_TTL_MS) < 5_000, `expires in ${row?.left} ms`)
  // A row another unit holds (its holder renewing it in a batch) is kept, without waiting for that unit.
  const renewing = await postgresOf(a).pool.connect()
  try {
    await renewing.query('BEGIN')
    await renewing.query("UPDATE leases SET expires_at = expires_at + 1, holder = 'elsewhere:1:abc'")
    assert.equal((await lease(b, newHolder()))?.holder, second)
  } finally {
    await renewing.query('ROLLBACK')
    renewing.release()
  }
})
