import { createHash, randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'

export const USERS = 1000
export const SUBSCRIPTIONS_PER_USER = 10
export const LINE_ITEMS_PER_SUBSCRIPTION = 3
export const SUBSCRIBABLES = 50

/**
 * Fills a freshly migrated database straight through node:sqlite: going through the API would
 * take longer than the bench itself. Ids are given explicitly so the bench knows, without
 * reading anything back, which subscriptions and line items each key owns.
 * Returns what the wrk script needs: every plain key with the ids it owns.
 */
export function seed(file, today) {
  const db = new DatabaseSync(file)
  const now = new Date().toISOString()
  const nextMonth = addMonth(today)
  const day = Number(today.slice(8, 10))
  const users = []
  db.exec('BEGIN')
  try {
    const subscribable = db.prepare('INSERT INTO subscribables (id, sku, name, subscribable, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)')
    for (let i = 1; i <= SUBSCRIBABLES; i++) subscribable.run(i, `BENCH-${i}`, `Bench item ${i}`, now, now)
    const user = db.prepare('INSERT INTO users (id, email, external_id, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)')
    const key = db.prepare('INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
    const sub = db.prepare(`INSERT INTO subscriptions (id, user_id, state, paused, interval_length, interval_units, actionable_date,
        anchor_day, currency, created_on, created_at, updated_at)
      VALUES (?, ?, 'active', 0, 1, 'month', ?, ?, 'USD', ?, ?, ?)`)
    const item = db.prepare('INSERT INTO line_items (id, subscription_id, subscribable_id, quantity, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)')
    let subId = 0
    let itemId = 0
    for (let u = 1; u <= USERS; u++) {
      const plain = `rpl_${randomBytes(16).toString('hex')}`
      user.run(u, `bench${u}@example.com`, now, now)
      key.run(u, createHash('sha256').update(plain).digest('hex'), plain.slice(0, 8), now, now)
      const owned = { key: plain, subscriptions: [], lineItems: [] }
      for (let s = 0; s < SUBSCRIPTIONS_PER_USER; s++) {
        sub.run(++subId, u, nextMonth, day, today, now, now)
        owned.subscriptions.push(subId)
        for (let l = 0; l < LINE_ITEMS_PER_SUBSCRIPTION; l++) {
          item.run(++itemId, subId, ((itemId - 1) % SUBSCRIBABLES) + 1, now, now)
          owned.lineItems.push(itemId)
        }
      }
      users.push(owned)
    }
    db.exec('COMMIT')
  } catch (err) {
    db.exec('ROLLBACK')
    throw err
  } finally {
    db.close()
  }
  return users
}

/**
 * The file the wrk script reads in init(): a `subscribables` line, then one line per user:
 * `<key> <subscription ids, comma separated> <line item ids, comma separated>`.
 */
export function writeLuaData(file, users) {
  const lines = [`subscribables ${Array.from({ length: SUBSCRIBABLES }, (_, i) => i + 1).join(',')}`]
  for (const u of users) lines.push(`${u.key} ${u.subscriptions.join(',')} ${u.lineItems.join(',')}`)
  writeFileSync(file, lines.join('\n') + '\n')
}

/** Counts the bench checks against what wrk saw answered: acknowledged writes must all be stored. */
export function countEvents(file) {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    const out = {}
    for (const r of db.prepare('SELECT type, count(*) AS n FROM events GROUP BY type').all()) out[r.type] = r.n
    return out
  } finally {
    db.close()
  }
}

export function sqliteVersion() {
  const db = new DatabaseSync(':memory:')
  try {
    return db.prepare('SELECT sqlite_version() AS v').get().v
  } finally {
    db.close()
  }
}

/** The same day of the next month, or its last day when it has none (seed-postgres.mjs uses it too). */
export function addMonth(date) {
  const [y, m, d] = date.split('-').map(Number)
  const year = m === 12 ? y + 1 : y
  const month = m === 12 ? 1 : m + 1
  const last = new Date(Date.UTC(year, month, 0)).getUTCDate()
  return `${year}-${String(month).padStart(2, '0')}-${String(Math.min(d, last)).padStart(2, '0')}`
}
