/**
 * PostgreSQL's runner records each version it applies (schema_migrations), so a version that
 * lands after a higher one (issues side by side: 10–12 merged after 13) is still applied, once.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import pg from 'pg'
import { POSTGRES_MIGRATIONS, POSTGRES_SCHEMA_VERSION, migratePostgres } from '../../src/store/postgres/migrations.ts'
import { ON_POSTGRES, newTestLocation } from '../helpers/store.ts'

if (!ON_POSTGRES) throw new Error('this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://… (npm test sets it)')

test('a version below the newest applied one is applied when it arrives; applied ones are not run again', async (t) => {
  const at = await newTestLocation()
  const client = new pg.Client({ connectionString: at.location })
  await client.connect()
  t.after(async () => {
    await client.end()
    await at.remove()
  })
  const asPool = client as unknown as pg.PoolClient
  const late = { version: POSTGRES_SCHEMA_VERSION - 1, name: 'landed late', sql: 'CREATE TABLE landed_late (x integer)' }
  assert.ok(!POSTGRES_MIGRATIONS.some((m) => m.version === late.version), 'a free version below the newest')
  assert.deepEqual(await migratePostgres(asPool), { from: 0, to: POSTGRES_SCHEMA_VERSION })
  // The late one listed after the newest: applied, though the database is at the newest already.
  assert.deepEqual(await migratePostgres(asPool, [...POSTGRES_MIGRATIONS, late]), { from: POSTGRES_SCHEMA_VERSION, to: POSTGRES_SCHEMA_VERSION })
  assert.equal((await client.query('SELECT count(*)::int AS n FROM landed_late')).rows[0].n, 0)
  const versions = (await client.query('SELECT version FROM schema_migrations ORDER BY version')).rows.map((r) => r.version)
  assert.deepEqual(versions, [...POSTGRES_MIGRATIONS.map((m) => m.version), late.version].sort((a, b) => a - b))
  // Nothing runs twice (a second CREATE TABLE would fail).
  await migratePostgres(asPool, [late, ...POSTGRES_MIGRATIONS])
})
