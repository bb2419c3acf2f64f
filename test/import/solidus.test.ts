/**
 * Issue 18 item 5, end to end: the export SQL printed in docs/import.md, run with psql exactly as
 * the page says, against solidus-schema.sql (a solidus_subscriptions shop's database with its seed)
 * loaded into a throwaway PostgreSQL; its output imported through `POST /imports`; then each of
 * the shop's subscription ids answers through the customer API with its customer's Solidus API
 * key and the values the seed holds (Solidus' fallbacks to the user's default addresses and wallet
 * card included). PostgreSQL must be installed (test/helpers/postgres.ts): missing, this fails.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { ADMIN_TOKEN, startTestServer } from '../helpers/server.ts'
import { startPostgres } from '../helpers/postgres.ts'
import { tempDir } from '../cli/harness.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
// A copy of ../shared/spec/solidus-schema.sql (the contract's reference shop database), kept in the
// repository so that a clean clone (CI) has it.
const SCHEMA = join(ROOT, 'test/import/fixtures/solidus-schema.sql')
// spree_prices, which the schema leaves out, as Solidus defines it (the file says how), for C16's prices.
const PRICES = join(ROOT, 'test/import/fixtures/solidus-prices.sql')
const KEYS: Record<number, string> = {
  1: 'c94c63f911a50753fea895590fee5f2404736b931433a56b',
  2: '5ca286537b9d1776d59bed96f80b4437215ca69eac038b7b',
  3: 'a1e3ad89310a3ee1e321665cb30dbaf43326e191f3131c46',
}

/** The one SQL block the page marks as the export. */
function exportSql(): string {
  const page = readFileSync(join(ROOT, 'docs/import.md'), 'utf8')
  const m = /<!-- export\.sql[^>]*-->\s*```sql\n([\s\S]*?)```/.exec(page)
  assert.ok(m, 'docs/import.md has no block marked <!-- export.sql -->')
  return m[1] as string
}

const address = (firstname: string, lastname: string, rest: Record<string, string | null>) => ({
  firstname, lastname, company: null, address1: '', address2: null, city: '', zipcode: '', state_name: null, country_iso: '', phone: null, ...rest,
})
const MARIA_SHIP = address('Maria', 'Lopez', { address1: '245 W 17th St', address2: 'Apt 4B', city: 'New York', zipcode: '10011', state_name: 'New York', country_iso: 'US', phone: '212-555-0143' })
const MARIA_BILL = address('Maria', 'Lopez', { company: 'Lopez & Co. LLC', address1: '1 Liberty Plaza', address2: 'Floor 12', city: 'New York', zipcode: '10006', state_name: 'New York', country_iso: 'US', phone: '212-555-0198' })
const DANIEL = address('Daniel', 'Tremblay', { address1: '88 Queen St W', city: 'Toronto', zipcode: 'M5H 2N2', state_name: 'Ontario', country_iso: 'CA', phone: '416-555-0172' })
const PRIYA = address('Priya', 'Raman', { address1: '19 Elmwood Ave', city: 'Buffalo', zipcode: '14201', state_name: 'New York', country_iso: 'US', phone: '716-555-0110' })
/**
 * C16: the variants' live prices for every country (solidus-prices.sql): variant 1 USD 18.50,
 * EUR 17.00, CAD 24.00; variant 2 USD 7.25, CAD 9.75 (the newer of two), JPY 1100. No discount.
 */
const PRICE: Record<string, Record<number, string>> = { USD: { 1: '18.50', 2: '7.25' }, CAD: { 1: '24.00', 2: '9.75' } }
const money = (currency: string, subscribable_id: number, quantity: number) => {
  const price = PRICE[currency]?.[subscribable_id] as string
  return { price, discount_percent: '0', total: (Number(price.replace('.', '')) * quantity / 100).toFixed(2) }
}
const item = (id: number, subscription_id: number, subscribable_id: number, quantity: number, created_at: string, updated_at = created_at, currency = 'USD') =>
  ({ id, subscription_id, subscribable_id, quantity, ...money(currency, subscribable_id, quantity), created_at, updated_at })
/** The totals of the next delivery (no discounts: subtotal = total). */
const totals = (subtotal: string) => ({ subtotal, discount_total: '0.00', total: subtotal })

/** The seed's five subscriptions as C3 renders them (solidus-schema.sql, SEED). */
const EXPECTED = [
  {
    id: 1, user_id: 1, state: 'active', paused: false, interval_length: 1, interval_units: 'month', actionable_date: '2026-12-04', end_date: null,
    skip_count: 1, successive_skip_count: 1, payment_method_id: 1, payment_source_id: 1, currency: 'USD', ...totals('44.25'), processing_state: 'success',
    shipping_address: MARIA_SHIP, billing_address: MARIA_BILL,
    line_items: [item(1, 1, 1, 2, '2026-08-04T15:08:15.450Z', '2026-08-04T15:13:11.910Z'), item(2, 1, 2, 1, '2026-09-20T11:02:48.771Z')],
    created_at: '2026-08-04T15:13:11.904Z', updated_at: '2026-10-28T19:41:06.337Z',
  },
  {
    id: 2, user_id: 2, state: 'canceled', paused: false, interval_length: 2, interval_units: 'week', actionable_date: null, end_date: null,
    skip_count: 0, successive_skip_count: 0, payment_method_id: 1, payment_source_id: 2, currency: 'CAD', ...totals('9.75'), processing_state: 'success',
    shipping_address: DANIEL, billing_address: DANIEL,
    line_items: [item(3, 2, 2, 1, '2025-09-12T12:53:44.618Z', '2025-09-12T13:05:04.124Z', 'CAD')],
    created_at: '2025-09-12T13:05:04.118Z', updated_at: '2025-10-01T21:48:12.904Z',
  },
  {
    id: 3, user_id: 3, state: 'pending_cancellation', paused: false, interval_length: 1, interval_units: 'month', actionable_date: '2026-11-21', end_date: '2027-10-21',
    skip_count: 0, successive_skip_count: 0, payment_method_id: 1, payment_source_id: 3, currency: 'USD', ...totals('18.50'), processing_state: 'pending',
    shipping_address: PRIYA, billing_address: PRIYA,
    line_items: [item(4, 3, 1, 1, '2026-10-21T07:31:09.310Z', '2026-10-21T07:36:04.226Z')],
    created_at: '2026-10-21T07:36:04.220Z', updated_at: '2026-11-18T10:25:02.660Z',
  },
  {
    // No billing address and no payment method of its own: the user's default bill address and wallet card, as Solidus uses them.
    id: 4, user_id: 1, state: 'inactive', paused: false, interval_length: 1, interval_units: 'month', actionable_date: null, end_date: '2025-01-31',
    skip_count: 1, successive_skip_count: 0, payment_method_id: 1, payment_source_id: 1, currency: 'USD', ...totals('21.75'), processing_state: 'success',
    shipping_address: MARIA_SHIP, billing_address: MARIA_BILL,
    line_items: [item(5, 4, 2, 3, '2024-11-10T14:22:37.015Z')],
    created_at: '2024-11-10T14:22:37.009Z', updated_at: '2025-01-10T06:00:14.552Z',
  },
  {
    id: 5, user_id: 3, state: 'active', paused: true, interval_length: 2, interval_units: 'month', actionable_date: null, end_date: null,
    skip_count: 0, successive_skip_count: 0, payment_method_id: 1, payment_source_id: 3, currency: 'USD', ...totals('14.50'), processing_state: 'failed',
    shipping_address: PRIYA, billing_address: PRIYA,
    line_items: [item(6, 5, 2, 2, '2026-08-01T18:20:33.890Z', '2026-08-01T18:30:07.310Z')],
    created_at: '2026-08-01T18:30:07.304Z', updated_at: '2026-10-02T07:31:40.118Z',
  },
]

test("docs/import.md's export SQL on solidus-schema.sql in PostgreSQL, imported: every subscription answers with its Solidus key and values", async (t) => {
  const pg = await startPostgres(t)
  await pg.psql('postgres', ['-c', 'CREATE DATABASE solidus'])
  await pg.psql('solidus', ['-f', SCHEMA])
  await pg.psql('solidus', ['-f', PRICES])
  const sqlFile = join(tempDir(t), 'export.sql')
  writeFileSync(sqlFile, exportSql())
  // The command the page gives: -X -q -A -t -v ON_ERROR_STOP=1 (psql() adds -X -q and ON_ERROR_STOP).
  const jsonl = await pg.psql('solidus', ['-A', '-t', '-f', sqlFile])
  const lines = jsonl.split('\n').filter((l) => l !== '')
  assert.deepEqual(lines.map((l) => JSON.parse(l).type), ['user', 'user', 'user', 'api_key', 'api_key', 'api_key', 'payment_method',
    'payment_source', 'payment_source', 'payment_source', 'subscribable', 'subscribable', 'subscription', 'subscription', 'subscription', 'subscription', 'subscription'])

  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-11-20' })
  const post = () => server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: jsonl, headers: { 'content-type': 'application/x-ndjson' } })
  const res = await post()
  assert.equal(res.status, 200, res.text)
  const counts = { users: 3, api_keys: 3, payment_methods: 1, payment_sources: 3, subscribables: 2, subscriptions: 5, line_items: 6 }
  assert.deepEqual(res.body, { lines: 17, ...Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, { inserted: n, present: 0 }])) })

  for (const expected of EXPECTED) {
    const got = await server.request('GET', `/api/v1/subscriptions/${expected.id}`, { key: KEYS[expected.user_id] })
    assert.equal(got.status, 200, got.text)
    assert.deepEqual(got.body, expected, `subscription ${expected.id}`)
  }
  // C16: the catalog carries the variants' prices as Solidus has them for every country.
  const catalog = await server.request('GET', '/admin/api/v1/subscribables', { key: ADMIN_TOKEN })
  assert.deepEqual(catalog.body.subscribables.map((c: { id: number; prices: object; discount_percent: string }) => [c.id, c.prices, c.discount_percent]), [
    [1, { CAD: '24.00', EUR: '17.00', USD: '18.50' }, '0'],
    [2, { CAD: '9.75', JPY: '1100', USD: '7.25' }, '0'],
  ])
  const maria = await server.request('GET', '/api/v1/subscriptions', { key: KEYS[1] })
  assert.deepEqual(maria.body.subscriptions.map((s: { id: number }) => s.id), [1, 4])
  assert.equal((await server.request('GET', '/api/v1/subscriptions/2', { key: KEYS[1] })).status, 401)
  const user = await server.request('GET', '/admin/api/v1/users/3', { key: ADMIN_TOKEN })
  assert.deepEqual([user.body.email, user.body.external_id, user.body.created_at], ['priya.raman@example.net', '3', '2026-08-01T18:20:05.118Z'])

  // Exported and imported again: nothing new.
  const again = await post()
  assert.deepEqual(again.body, { lines: 17, ...Object.fromEntries(Object.entries(counts).map(([k, n]) => [k, { inserted: 0, present: n }])) })
})
