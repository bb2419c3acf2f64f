import assert from 'node:assert/strict'
import { processCommand } from '../../src/cli/process.ts'
import type { Store } from '../../src/store/api.ts'
import { ADMIN_TOKEN, type TestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'

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
export function seedDueSubscriptions(store: Store, n: number, due: string): void {
  const now = new Date().toISOString()
  sqliteOf(store).db.exec(`
    BEGIN;
    INSERT OR IGNORE INTO users (id, email, created_at, updated_at) VALUES (1, 'bulk@example.com', '${now}', '${now}');
    INSERT OR IGNORE INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES (1, 'BULK-1', 'Bulk item', 1, '${now}', '${now}');
    WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
    INSERT INTO subscriptions (user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day, currency, created_on, created_at, updated_at)
      SELECT 1, 'active', 0, 1, 'month', '${due}', ${Number(due.slice(8, 10))}, 'USD', '${due}', '${now}', '${now}' FROM k;
    INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
      SELECT id, 1, 1, '${now}', '${now}' FROM subscriptions WHERE id NOT IN (SELECT subscription_id FROM line_items);
    COMMIT;
  `)
}

/** Every due subscription has exactly one installment, and nothing else has one. */
export function assertExactlyOnePerSubscription(store: Store, expected: number): void {
  const { db } = sqliteOf(store)
  const r = db.prepare('SELECT count(*) AS n, count(DISTINCT subscription_id) AS subs FROM installments').get() as { n: number; subs: number }
  assert.deepEqual({ installments: r.n, subscriptions: r.subs }, { installments: expected, subscriptions: expected })
  const events = db.prepare("SELECT count(*) AS n FROM events WHERE type = 'installment.created'").get() as { n: number }
  assert.equal(events.n, expected)
}
