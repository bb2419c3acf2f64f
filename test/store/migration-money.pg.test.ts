/**
 * Migration 10 (issue 26, C16) on PostgreSQL, on the same shop as migration-money.test.ts on
 * SQLite: the same monthly counts rebuilt, whatever shard each backfill statement wrote to; then
 * a store opened on it answers the catalog and the old installment as SQLite does.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../src/store/postgres/migrations.ts'
import { renderInstallment } from '../../src/domain/installment.ts'
import { ON_POSTGRES, newTestLocation, openStoreAt } from '../helpers/store.ts'
import { REPORT_AFTER_MIGRATION, SHOP_BEFORE_MONEY } from './migration-money-shop.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

test('migration 10 on a PostgreSQL shop: no prices, old installments without money, the monthly counts rebuilt from the rows', async (t) => {
  const at = await newTestLocation()
  t.after(() => at.remove())
  const pool = new pg.Pool({ connectionString: at.location, max: 1 })
  t.after(() => pool.end())
  const client = await pool.connect()
  try {
    await migratePostgres(client, POSTGRES_MIGRATIONS.filter((m) => m.version <= 9))
    await client.query(SHOP_BEFORE_MONEY)
    assert.deepEqual(await migratePostgres(client, POSTGRES_MIGRATIONS.filter((m) => m.version <= 10)), { from: 9, to: 10 })
    const { rows } = await client.query(`SELECT currency, month, sum(new_subscriptions)::int AS n_new, sum(canceled_subscriptions)::int AS n_canceled,
        sum(active_change)::int AS n_active, sum(installments_made)::int AS n_made, sum(installments_fulfilled)::int AS n_fulfilled, sum(fulfilled_total)::int AS total
      FROM report_months GROUP BY currency, month ORDER BY currency, month`)
    assert.deepEqual(rows, REPORT_AFTER_MIGRATION)
  } finally {
    client.release()
  }
  const store = await openStoreAt(at.location)
  t.after(() => store.close())
  const item = await store.catalog.findSubscribable(1)
  assert.deepEqual([item?.prices, item?.discount_percent], [{}, '0'])
  const old = await store.installments.find(1)
  assert.ok(old)
  const shown = renderInstallment(old, [])
  assert.deepEqual([shown['subtotal'], shown['total'], shown['line_items']], [null, null, [{ subscribable_id: 1, sku: 'COF', name: 'Coffee', quantity: 2, price: null, discount_percent: '0', total: null }]])
})
