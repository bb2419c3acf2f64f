/**
 * PostgreSQL's runner, as SQLite's (migration-order.sqlite.test.ts): every version missing from
 * schema_migrations is applied, also one below the highest applied, and only once.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, migratePostgres, type PostgresMigration } from '../../src/store/postgres/migrations.ts'
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
    assert.deepEqual(await migratePostgres(client), { from: 0, to: POSTGRES_SCHEMA_VERSION })
    const late: PostgresMigration = { version: POSTGRES_SCHEMA_VERSION - 2, name: 'written beside the highest', sql: 'CREATE TABLE late_arrival (id bigint PRIMARY KEY);' }
    const later = [...POSTGRES_MIGRATIONS, late]
    assert.deepEqual(await migratePostgres(client, later), { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION })
    assert.equal((await client.query("SELECT to_regclass('late_arrival') IS NOT NULL AS there")).rows[0].there, true)
    const applied = (await client.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version)
    assert.deepEqual(applied, [...POSTGRES_MIGRATIONS.map((m) => m.version), late.version].sort((a, b) => a - b))
    assert.deepEqual(await migratePostgres(client, later), { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION })
  } finally {
    client.release()
  }
})
