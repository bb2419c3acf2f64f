import { DatabaseSync } from 'node:sqlite'

/**
 * Adds `n` due subscriptions to a database that bench/lib/seed.mjs filled (its users and
 * subscribables are reused), the way bench/process.mjs seeds its million: one transaction of
 * INSERT … SELECT over a recursive counter. Each is monthly, due on one of the 28 days before
 * `today` (so `replenish process` as of `today` moves every one of them and none of seed.mjs's,
 * which are due a month later), with two line items. Ids start after the existing ones.
 */
export function seedDue(file, n, today) {
  const db = new DatabaseSync(file)
  const now = new Date().toISOString()
  try {
    const first = db.prepare('SELECT coalesce(max(id), 0) + 1 AS id FROM subscriptions').get().id
    const users = db.prepare('SELECT count(*) AS n FROM users').get().n
    if (users === 0) throw new Error('seedDue needs the users of seed.mjs first')
    // Nothing to protect while seeding, and a cache big enough that the one transaction never spills.
    db.exec('PRAGMA synchronous = OFF')
    db.exec('PRAGMA cache_size = -500000')
    db.exec('BEGIN')
    db.prepare(`
      WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < ?1 - 1),
        due(i, day) AS (SELECT i, date(?2, '-' || ((i % 28) + 1) || ' days') FROM k)
      INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date, anchor_day,
          currency, created_on, created_at, updated_at)
        SELECT ?3 + i, (i % ?4) + 1, 'active', 0, 1, 'month', day, CAST(strftime('%d', day) AS INTEGER),
          'USD', date(?2, '-2 months'), ?5, ?5 FROM due`).run(n, today, first, users, now)
    // A subscription's line items sit side by side, as when a client creates them together.
    db.prepare(`
      INSERT INTO line_items (subscription_id, subscribable_id, quantity, created_at, updated_at)
        SELECT s.id, k.item, k.quantity, ?2, ?2 FROM subscriptions s, (SELECT 1 AS item, 2 AS quantity UNION ALL SELECT 2, 1) k
        WHERE s.id >= ?1 ORDER BY s.id, k.item`).run(first, now)
    db.exec('COMMIT')
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
  } catch (err) {
    if (db.isTransaction) db.exec('ROLLBACK')
    throw err
  } finally {
    db.close()
  }
}
