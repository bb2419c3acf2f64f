/**
 * Issue 25 item 5: a PostgreSQL that cannot be used is one line on stderr with the status that
 * says what to do: 3 when someone must change something (no password for a server that asks for
 * one: a stack from node-postgres before; a wrong one), 1 when it may pass by itself (a database
 * host DNS does not know now, blamed on --host / REPLENISH_HOST, the listen address, before).
 * Commits that are not durable: test/ops/postgres-ops.pg.test.ts, and by class in
 * test/store/postgres-connect-settings.test.ts (the binary's minifier renamed the class).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runCli } from '../cli/harness.ts'
import { startPostgresCluster } from '../helpers/postgres.ts'

const PASSWORD = 'scram-only-0815'

test('a server that asks for a password (SCRAM) and none is given: exit 3, one line naming PGPASSWORD; a wrong one exit 3; the right one works', async (t) => {
  assert.equal(process.env['PGPASSWORD'], undefined, 'the test gives no password through the environment')
  const pg = await startPostgresCluster({ password: PASSWORD })
  t.after(() => pg.stop())
  const url = (password?: string): string => `postgres://postgres${password === undefined ? '' : `:${password}`}@127.0.0.1:${pg.port}/postgres`

  const none = await runCli(['migrate'], { REPLENISH_DB: url() })
  assert.equal(none.status, 3)
  assert.deepEqual(none.stderr.filter((l) => l !== ''), [
    `replenish: cannot use the database ${url()}: the server asks for a password and none was given: set PGPASSWORD (or put it in the URL, postgres://user:password@host/db)`,
  ])
  const wrong = await runCli(['migrate'], { REPLENISH_DB: url('not-it') })
  assert.equal(wrong.status, 3)
  assert.deepEqual(wrong.stderr.filter((l) => l !== ''), [`replenish: cannot use the database ${url('*****')}: PostgreSQL: password authentication failed for user "postgres"`])
  const right = await runCli(['migrate'], { REPLENISH_DB: url(PASSWORD) })
  assert.equal(right.status, 0, right.stderr.join('\n'))
  for (const run of [none, wrong, right]) assert.ok(![...run.stdout, ...run.stderr].join('\n').includes(PASSWORD), 'the password is never printed')
})

test('a database host that DNS does not know: exit 1, one line that names the database URL, not the listen address', async () => {
  const db = 'postgres://shop@no-such-host.invalid:5432/shop'
  for (const command of ['migrate', 'serve']) {
    const run = await runCli([command], { REPLENISH_DB: db, REPLENISH_PORT: '0' })
    assert.equal(run.status, 1, command)
    const lines = run.stderr.filter((l) => l !== '')
    assert.equal(lines.length, 1, lines.join('\n'))
    assert.match(lines[0] ?? '', /^replenish: cannot use the database postgres:\/\/shop@no-such-host\.invalid:5432\/shop: no address found for its host "no-such-host\.invalid" \((ENOTFOUND|EAI_AGAIN)\): check the host in --db \/ REPLENISH_DB$/)
    assert.ok(!(lines[0] ?? '').includes('REPLENISH_HOST'))
  }
})
