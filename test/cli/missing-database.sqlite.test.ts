/**
 * Issue 25, item 9: every command but `serve` and `migrate` refuses a SQLite file that does not
 * exist (status 2, one line naming the path) instead of making an empty database and exiting 0
 * (a `process` timer with a wrong path stayed green for ever); `serve` that cannot listen leaves
 * no new file behind. SQLite's own: a PostgreSQL database is never made by a command.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readdirSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { runCli, spawnCli, tempDir } from './harness.ts'

const refusal = (db: string): string => `replenish: there is no database at ${db} (--db / REPLENISH_DB); \`replenish migrate\` makes a new one`

test('process, admin-tokens, users, keys and import on a database file that does not exist: status 2, one line naming it, no file made', async (t) => {
  const dir = tempDir(t)
  const file = join(tempDir(t), 'shop.jsonl')
  writeFileSync(file, '{"type":"user","id":1,"email":"a@example.com"}\n')
  const db = join(dir, 'typo.db')
  const commands = [
    ['process'], ['process', '--as-of', '2026-01-01'], ['admin-tokens', 'create'], ['admin-tokens', 'list'], ['admin-tokens', 'revoke', '1'],
    ['users', 'create', '--email', 'ann@example.com'], ['keys', 'create', '--user', '1'], ['import', file],
  ]
  for (const argv of commands) {
    assert.deepEqual(await runCli(argv, { REPLENISH_DB: db }), { status: 2, stdout: [], stderr: [refusal(db)] }, argv.join(' '))
    assert.deepEqual(await runCli([...argv, '--db', db], {}), { status: 2, stdout: [], stderr: [refusal(db)] }, `${argv.join(' ')} --db`)
  }
  assert.deepEqual(readdirSync(dir), [])
  // migrate makes it; then the same commands work on it.
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
  assert.equal((await runCli(['admin-tokens', 'list'], { REPLENISH_DB: db })).status, 0)
  const run = await runCli(['process', '--as-of', '2026-01-01'], { REPLENISH_DB: db })
  assert.equal(run.status, 0, run.stderr.join('\n'))
})

test('the default database (data/replenish.db) is refused alike, and data/ is not made', async (t) => {
  const cwd = tempDir(t)
  const child = spawnCli(t, ['process'], { cwd })
  const { code } = await child.exited
  assert.equal(code, 2)
  assert.equal(child.stderr(), `${refusal('data/replenish.db')}\n`)
  assert.equal(child.stdout(), '')
  assert.equal(existsSync(join(cwd, 'data')), false)
})

test('serve on a taken port leaves no new database behind, and an existing one as it was', async (t) => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  t.after(() => blocker.close())
  const port = String((blocker.address() as { port: number }).port)
  const dir = tempDir(t)
  const db = join(dir, 'new.db')
  const taken = await runCli(['serve', '--db', db, '--port', port], {})
  assert.deepEqual([taken.status, taken.stderr], [1, [`replenish: cannot listen on 127.0.0.1:${port}: EADDRINUSE`]])
  assert.deepEqual(readdirSync(dir), [])
  // An existing database stays, with what it held.
  assert.equal((await runCli(['users', 'create', '--email', 'ann@example.com', '--db', db], {})).status, 2)
  assert.equal((await runCli(['migrate', '--db', db], {})).status, 0)
  assert.equal((await runCli(['users', 'create', '--email', 'ann@example.com', '--db', db], {})).status, 0)
  assert.equal((await runCli(['serve', '--db', db, '--port', port], {})).status, 1)
  assert.ok(existsSync(db))
  const again = await runCli(['users', 'create', '--email', 'ann@example.com', '--db', db], {})
  assert.deepEqual(again.stderr, ['replenish: a user with email ann@example.com already exists'])
})
