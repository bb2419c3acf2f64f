import assert from 'node:assert/strict'
import { processCommand } from '../../src/cli/process.ts'
import type { Store } from '../../src/store/api.ts'
import { ADMIN_TOKEN, type TestServer } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import { openTestStore } from '../helpers/store.ts'
import { PROCESSING_LEASE } from '../../src/processing/lease.ts'

/**
 * `replenish process [--as-of DATE]` in this process, on the test server's database (a second
 * connection, exactly as a cron job beside `serve` would have). Answers its stdout and stderr.
 */
export async function processAsOf(server: TestServer, asOf?: string): Promise<{ out: string[]; err: string[] }> {
  const out: string[] = []
  const err: string[] = []
  const code = await processCommand(server.config, asOf, { out: (l) => out.push(l), err: (l) => err.push(l) })
  assert.equal(code, 0, err.join('\n'))
  return { out, err }
}

export const admin = (server: TestServer, method: string, path: string, json?: unknown) =>
  server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })

/** Installments of one subscription as stored, oldest due date first. */
export async function installmentsOf(store: Store, subscriptionId: number): Promise<{ id: number; due_date: string; state: string }[]> {
  const newestFirst = await store.installments.listOfSubscription(subscriptionId, 0, 10_000)
  return newestFirst.reverse().map((i) => ({ id: i.id, due_date: i.due_date, state: i.state }))
}

export async function eventTypes(store: Store, subscriptionId: number): Promise<string[]> {
  return (await store.events.ofSubscription(subscriptionId, 0, 10_000)).map((e) => e.type).reverse()
}

/**
 * `n` due monthly subscriptions with one line item each, straight into the database (one
 * statement: fast enough to repeat fifty times). Needs a user 1 and a subscribable 1.
 */
export async function seedDueSubscriptions(store: Store, n: number, due: string): Promise<void> {
  const now = new Date().toISOString()
  // On PostgreSQL the report's counts are added once for the lot, as an import does (migration
  // 17): once a row, they would take a minute for 40,000.
  const bulk = store.kind === 'postgres'
  await testSql(store).exec(`
    ${bulk ? "SELECT set_config('replenish.report_later', 'on', true);" : ''}
    INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'bulk@example.com', '${now}', '${now}') ON CONFLICT DO NOTHING;
    INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES (1, 'BULK-1', 'Bulk item', true, '${now}', '${now}') ON CONFLICT DO NOTHING;
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
      SELECT 1, 'active', false, 1, 'month', '${due}', ${Number(due.slice(8, 10))}, 'USD', '${due}', '${now}', '${now}' FROM k;
    ${bulk ? 'SELECT report_subscriptions_added(array(SELECT id FROM subscriptions WHERE id NOT IN (SELECT subscription_id FROM line_items)));' : ''}
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT id, 1, 1, '${now}', '${now}' FROM subscriptions WHERE id NOT IN (SELECT subscription_id FROM line_items)
  `)
  // Ids given explicitly leave PostgreSQL's identity sequences behind: moved on, the store's next user or item gets a free id.
  if (store.kind === 'postgres') {
    await testSql(store).exec(`
      SELECT setval(pg_get_serial_sequence('users', 'id'), (SELECT max(id) FROM users));
      SELECT setval(pg_get_serial_sequence('subscribables', 'id'), (SELECT max(id) FROM subscribables))
    `)
  }
}

/** Every due subscription has exactly one installment, and nothing else has one. */
export async function assertExactlyOnePerSubscription(store: Store, expected: number): Promise<void> {
  const r = await testSql(store).get('SELECT count(*) AS n, count(DISTINCT subscription_id) AS subs FROM installments')
  assert.deepEqual({ installments: Number(r?.['n']), subscriptions: Number(r?.['subs']) }, { installments: expected, subscriptions: expected })
  const events = await testSql(store).get("SELECT count(*) AS n FROM events WHERE type = 'installment.created'")
  assert.equal(Number(events?.['n']), expected)
}

/** The lease tests' date: every seeded subscription is due on it. */
export const LEASE_DUE = '2026-02-01'

/** A fresh store with `due` subscriptions due on LEASE_DUE (the lease tests). */
export async function leaseTestStore(t: import('node:test').TestContext, due = 5): Promise<Store> {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  await seedDueSubscriptions(store, due, LEASE_DUE)
  return store
}

/** Another processor takes the lease (free, expired, or already its own) until `expiresAt`. */
export const holdLease = (store: Store, holder: string, expiresAt: number): Promise<void> =>
  store.write(async (tx) => assert.equal(await tx.leases.acquire(PROCESSING_LEASE, holder, expiresAt, Date.now(), () => false), undefined))
