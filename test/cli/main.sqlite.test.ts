import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { SCHEMA_VERSION } from '../../src/store/sqlite/migrations.ts'
import { runCli, tempDir } from './harness.ts'

/**
 * The CLI on a SQLite file (test/cli/main.test.ts has the rest): `migrate` sets the file's
 * version and WAL mode, and a file of a newer schema is refused and left as it was.
 */

test('migrate creates the schema, says its version, and is a no-op the second time', async (t) => {
  const db = join(tempDir(t), 'r.db')
  for (let i = 0; i < 2; i++) {
    assert.deepEqual(await runCli(['migrate'], { REPLENISH_DB: db }), { status: 0, stdout: [`database ${db} is at schema version ${SCHEMA_VERSION}`], stderr: [] })
  }
  const raw = new DatabaseSync(db)
  assert.equal((raw.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, SCHEMA_VERSION)
  assert.equal((raw.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal')
  raw.close()
})

test('a database newer than the binary is refused by every command with both versions named, and left as it was', async (t) => {
  const db = join(tempDir(t), 'r.db')
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
  const raw = new DatabaseSync(db)
  raw.exec('PRAGMA user_version = 999')
  raw.close()
  const message = `replenish: cannot use the database ${db}: its schema is version 999, newer than this replenish understands (version ${SCHEMA_VERSION}); run a newer replenish or restore a backup made for this version`
  for (const argv of [['serve'], ['migrate'], ['users', 'create', '--email', 'a@example.com'], ['admin-tokens', 'create'], ['backup', `${db}.copy`]]) {
    assert.deepEqual(await runCli(argv, { REPLENISH_DB: db, REPLENISH_PORT: '0' }), { status: 3, stdout: [], stderr: [message] }, argv.join(' '))
  }
  const after = new DatabaseSync(db)
  assert.equal((after.prepare('PRAGMA user_version').get() as { user_version: number }).user_version, 999)
  assert.equal((after.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n, 0)
  after.close()
})
