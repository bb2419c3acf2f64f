/**
 * PostgreSQL's runner, as SQLite's (migration-order.sqlite.test.ts): every version missing from
 * schema_migrations is applied, also one below the highest applied, and only once.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, migratePostgres } from '../../src/store/postgres/migrations.ts'
import { ON_POSTGRES, newTestLocation } from '../helpers/store.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

test('a version that arrives after a higher one is applied all the same, once', async (t) => {
  const at = await newTestLocation()
  const pool = new pg.Pool({ connectionString: at.location, max: 1 })
  t.after(async () => {
    await pool.end()
    await at.remove()
  })
  const client = await pool.connect()
  try {
    // A database migrated by a release that did not have migration 13 yet (it landed after 14).
    const without13 = POSTGRES_MIGRATIONS.filter((m) => m.version !== 13)
    assert.ok(without13.length === POSTGRES_MIGRATIONS.length - 1 && POSTGRES_SCHEMA_VERSION > 13)
    assert.deepEqual(await migratePostgres(client, without13), { from: 0, to: POSTGRES_SCHEMA_VERSION })
    const applied = async (): Promise<number[]> => (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version)
    assert.ok(!(await applied()).includes(13))
    assert.deepEqual(await migratePostgres(client), { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION })
    assert.equal((await client.query("SELECT to_regclass('users_email_domain') IS NOT NULL AS there")).rows[0].there, true)
    assert.deepEqual(await applied(), POSTGRES_MIGRATIONS.map((m) => m.version).sort((a, b) => a - b))
    // Applied once: a second run changes nothing (its CREATE INDEX would fail).
    assert.deepEqual(await migratePostgres(client), { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION })
  } finally {
    client.release()
  }
})
