/**
 * Migration 10 (issue 26, C16) on a database that already holds a shop: the catalog gets no
 * price and no discount, installments made before it show no price, and the monthly report's
 * counts are rebuilt from the rows as they stand (docs/decisions.md, "Money"). On SQLite here; on
 * PostgreSQL in migration-money.pg.test.ts, with the same rows and the same answers.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { MIGRATIONS, migrate } from '../../src/store/sqlite/migrations.ts'
import { catalogStore } from '../../src/store/sqlite/catalog-store.ts'
import { installmentsStore } from '../../src/store/sqlite/installments-store.ts'
import { SYSTEM_UNIT } from '../../src/store/api.ts'
import { renderInstallment } from '../../src/domain/installment.ts'
import { REPORT_AFTER_MIGRATION, SHOP_BEFORE_MONEY } from './migration-money-shop.ts'

test('migration 10 on a shop: no prices, old installments without money, the monthly counts rebuilt from the rows', () => {
  const db = new DatabaseSync(':memory:')
  migrate(db, MIGRATIONS.filter((m) => m.version <= 9))
  db.exec(SHOP_BEFORE_MONEY)
  assert.deepEqual(migrate(db, MIGRATIONS.filter((m) => m.version <= 10)), { from: 9, to: 10 })
  // The repositories are written for the schema as it is now: the later migrations (which touch
  // neither prices nor installments' money) come before they read what migration 10 left.
  migrate(db)

  const item = catalogStore(db).findSubscribable(1)
  assert.deepEqual([item?.prices, item?.discount_percent], [{}, '0'])
  const old = installmentsStore(db, () => SYSTEM_UNIT).find(1)
  assert.ok(old)
  const shown = renderInstallment(old, [])
  assert.deepEqual([shown['subtotal'], shown['discount_total'], shown['total']], [null, null, null])
  assert.deepEqual(shown['line_items'], [{ subscribable_id: 1, sku: 'COF', name: 'Coffee', quantity: 2, price: null, discount_percent: '0', total: null }])
  const rows = db.prepare(`SELECT currency, month, sum(new_subscriptions) AS n_new, sum(canceled_subscriptions) AS n_canceled, sum(active_change) AS n_active,
      sum(installments_made) AS n_made, sum(installments_fulfilled) AS n_fulfilled, sum(fulfilled_total) AS total
    FROM report_months GROUP BY currency, month ORDER BY currency, month`).all().map((r) => ({ ...r }))
  assert.deepEqual(rows, REPORT_AFTER_MIGRATION)
  db.close()
})
