import { createHash, randomBytes } from 'node:crypto'
import { withClient } from './postgres.mjs'
import { addMonth, LINE_ITEMS_PER_SUBSCRIPTION, SUBSCRIBABLES, SUBSCRIPTIONS_PER_USER, USERS } from './seed.mjs'

/**
 * seed.mjs for PostgreSQL: the same 1,000 users × 10 subscriptions × 3 line items and 50
 * subscribables, with the same explicit ids and the same column values, into a database that
 * `replenish migrate` brought to the current schema. One transaction of one INSERT per table,
 * each row list passed as arrays and spread by unnest. Returns what the wrk script needs, as
 * seed() does.
 */
export async function seedPostgres(url, today) {
  const now = new Date().toISOString()
  const nextMonth = addMonth(today)
  const day = Number(today.slice(8, 10))
  const users = []
  const keys = { userIds: [], hashes: [], prefixes: [] }
  const subs = { ids: [], userIds: [] }
  const items = { ids: [], subscriptionIds: [], subscribableIds: [] }
  let subId = 0
  let itemId = 0
  for (let u = 1; u <= USERS; u++) {
    const plain = `rpl_${randomBytes(16).toString('hex')}`
    keys.userIds.push(u)
    keys.hashes.push(createHash('sha256').update(plain).digest('hex'))
    keys.prefixes.push(plain.slice(0, 8))
    const owned = { key: plain, subscriptions: [], lineItems: [] }
    for (let s = 0; s < SUBSCRIPTIONS_PER_USER; s++) {
      subs.ids.push(++subId)
      subs.userIds.push(u)
      owned.subscriptions.push(subId)
      for (let l = 0; l < LINE_ITEMS_PER_SUBSCRIPTION; l++) {
        items.ids.push(++itemId)
        items.subscriptionIds.push(subId)
        items.subscribableIds.push(((itemId - 1) % SUBSCRIBABLES) + 1)
        owned.lineItems.push(itemId)
      }
    }
    users.push(owned)
  }
  const counter = (n) => Array.from({ length: n }, (_, i) => i + 1)

  await withClient(url, async (db) => {
    await db.query('BEGIN')
    try {
      await db.query(`INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at)
        SELECT id, 'BENCH-' || id, 'Bench item ' || id, true, $2, $2 FROM unnest($1::bigint[]) AS id`, [counter(SUBSCRIBABLES), now])
      await db.query(`INSERT INTO users (id, email, external_id, created_at, updated_at)
        SELECT id, 'bench' || id || '@example.com', NULL, $2, $2 FROM unnest($1::bigint[]) AS id`, [counter(USERS), now])
      await db.query(`INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at)
        SELECT user_id, key_hash, prefix, $4, $4 FROM unnest($1::bigint[], $2::text[], $3::text[]) AS k(user_id, key_hash, prefix)`,
      [keys.userIds, keys.hashes, keys.prefixes, now])
      await db.query(`INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date,
          anchor_day, currency, created_on, created_at, updated_at)
        SELECT id, user_id, 'active', false, 1, 'month', $3, $4, 'USD', $5, $6, $6
        FROM unnest($1::bigint[], $2::bigint[]) AS s(id, user_id)`, [subs.ids, subs.userIds, nextMonth, day, today, now])
      await db.query(`INSERT INTO line_items (id, subscription_id, subscribable_id, quantity, created_at, updated_at)
        SELECT id, subscription_id, subscribable_id, 1, $4, $4
        FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS l(id, subscription_id, subscribable_id)`,
      [items.ids, items.subscriptionIds, items.subscribableIds, now])
      // Explicit ids leave the identity sequences at 1: move each past its table's largest id,
      // or the first subscription the bench creates would collide with a seeded one.
      for (const table of ['subscribables', 'users', 'subscriptions', 'line_items']) {
        await db.query(`SELECT setval(pg_get_serial_sequence('${table}', 'id'), (SELECT max(id) FROM ${table}))`)
      }
      await db.query('COMMIT')
    } catch (err) {
      await db.query('ROLLBACK')
      throw err
    }
    // Statistics now rather than whenever autovacuum gets to them: the plans measured are those
    // of a database that has been running, from the first request on.
    await db.query('ANALYZE')
  })
  return users
}

/** countEvents of seed.mjs for PostgreSQL: events stored, by type. */
export async function countEventsPostgres(url) {
  return withClient(url, async (db) => {
    const out = {}
    for (const r of (await db.query('SELECT type, count(*)::int AS n FROM events GROUP BY type')).rows) out[r.type] = r.n
    return out
  })
}
