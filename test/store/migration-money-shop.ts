/**
 * A shop as schema version 9 held it, for migration 10's tests on both backends: written in the
 * SQL both dialects read (booleans as true/false), and the monthly counts the migration must
 * rebuild from it.
 */
const T = (month: string, day = 10): string => `'${month}-${String(day).padStart(2, '0')}T10:00:00.000Z'`

export const SHOP_BEFORE_MONEY = `
  INSERT INTO users (id, email, created_at, updated_at) VALUES (1, 'a@example.com', ${T('2025-01')}, ${T('2025-01')});
  INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES (1, 'COF', 'Coffee', true, ${T('2025-01')}, ${T('2025-01')});
  INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, currency, created_on, created_at, updated_at) VALUES
    (1, 1, 'active', false, 1, 'month', '2026-01-10', 'USD', '2025-01-10', ${T('2025-01')}, ${T('2025-06')}),
    (2, 1, 'active', true, 1, 'month', NULL, 'USD', '2025-01-10', ${T('2025-01', 12)}, ${T('2025-01', 12)}),
    (3, 1, 'canceled', false, 1, 'month', NULL, 'USD', '2025-02-10', ${T('2025-02')}, ${T('2025-04')}),
    (4, 1, 'inactive', false, 1, 'month', NULL, 'USD', '2025-02-10', ${T('2025-02', 11)}, ${T('2025-05')}),
    (5, 1, 'pending_cancellation', false, 1, 'month', '2026-01-10', 'EUR', '2025-03-10', ${T('2025-03')}, ${T('2025-03')});
  INSERT INTO line_items (id, subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (1, 1, 1, 2, ${T('2025-01')}, ${T('2025-01')});
  INSERT INTO installments (id, subscription_id, due_date, state, line_items, currency, created_at, updated_at) VALUES
    (1, 1, '2025-02-10', 'fulfilled', '[{"subscribable_id":1,"sku":"COF","name":"Coffee","quantity":2}]', 'USD', ${T('2025-02')}, ${T('2025-03')}),
    (2, 1, '2025-03-10', 'pending', '[{"subscribable_id":1,"sku":"COF","name":"Coffee","quantity":2}]', 'USD', ${T('2025-03')}, ${T('2025-03')});
`

/** Per currency and month, every shard summed: new, canceled, active change, made, fulfilled, fulfilled total. */
const row = (currency: string, month: string, n_new: number, n_canceled: number, n_active: number, n_made: number, n_fulfilled: number) =>
  ({ currency, month, n_new, n_canceled, n_active, n_made, n_fulfilled, total: 0 })
export const REPORT_AFTER_MIGRATION = [
  row('EUR', '2025-03', 1, 0, 1, 0, 0),
  row('USD', '2025-01', 2, 0, 2, 0, 0),
  row('USD', '2025-02', 2, 0, 2, 1, 0),
  row('USD', '2025-03', 0, 0, 0, 1, 1),
  row('USD', '2025-04', 0, 1, -1, 0, 0),
  row('USD', '2025-05', 0, 0, -1, 0, 0),
]
