import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { dirname, join } from 'node:path'
import { OPTIONS } from '../../src/config.ts'
import { request } from '../helpers/server.ts'
import { migratedDb, runCli, startServe, tempDir, testDb } from './harness.ts'
import { snapshotAt } from '../helpers/rows.ts'

// --help and --version: test/cli/help.test.ts.

test('a bad command, flag or value exits 2 with one line naming it, before touching anything', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'r.db')
  const cases: [string[], Record<string, string>, string][] = [
    [['serve', '--port', 'abc'], {}, 'replenish: --port: expected a port number from 0 to 65535, got "abc"'],
    [['serve'], { REPLENISH_PORT: 'abc' }, 'replenish: REPLENISH_PORT: expected a port number from 0 to 65535, got "abc"'],
    [['migrate', '--db', join(dir, 'missing', 'r.db')], {}, `replenish: --db: the directory ${join(dir, 'missing')} does not exist, got ${JSON.stringify(join(dir, 'missing', 'r.db'))}`],
    [['migrate'], { REPLENISH_DB: join(dir, 'missing', 'r.db') }, `replenish: REPLENISH_DB: the directory ${join(dir, 'missing')} does not exist, got ${JSON.stringify(join(dir, 'missing', 'r.db'))}`],
    [['serve', '--frobnicate'], {}, 'replenish: unknown flag --frobnicate; try replenish --help'],
    [['serve', '--admin-token', 'x'], {}, 'replenish: --admin-token is not a flag: set REPLENISH_ADMIN_TOKEN in the environment (a flag would show in ps)'],
    [['serve', '--port'], {}, "replenish: Option '--port <value>' argument missing; try replenish --help"],
    [[], {}, 'replenish: no command given; try replenish --help'],
    [['launch'], {}, 'replenish: unknown command "launch"; try replenish --help'],
    [['migrate', 'now'], { REPLENISH_DB: db }, 'replenish: unexpected argument "now" for `replenish migrate`'],
    [['serve', '--email', 'a@example.com'], { REPLENISH_DB: db }, 'replenish: --email is only for `replenish users create`'],
    [['users', 'create', '--user', '1'], { REPLENISH_DB: db }, 'replenish: --user is only for `replenish keys create`'],
    [['users', 'delete'], { REPLENISH_DB: db }, 'replenish: usage: replenish users create --email ADDRESS'],
    [['users', 'create'], { REPLENISH_DB: db }, 'replenish: users create needs --email ADDRESS'],
    [['users', 'create', '--email', 'not-an-email'], { REPLENISH_DB: db }, 'replenish: --email: "not-an-email" is not a valid email address (expected NAME@DOMAIN)'],
    [['keys', 'create'], { REPLENISH_DB: db }, 'replenish: keys create needs --user ID'],
    [['keys', 'create', '--user', 'abc'], { REPLENISH_DB: db }, 'replenish: --user: "abc" is not a user id (expected a whole number from 1)'],
    [['serve', '--force'], { REPLENISH_DB: db }, 'replenish: --force is only for `replenish backup`'],
    [['admin-tokens'], { REPLENISH_DB: db }, 'replenish: usage: replenish admin-tokens create [--scope admin|read|metrics] [--label NAME] | list | revoke ID'],
    [['backup'], { REPLENISH_DB: db }, 'replenish: backup needs a target file: replenish backup FILE [--force]'],
    [['backup', join(dir, 'copy.db')], { REPLENISH_DB: db }, `replenish: there is no database at ${db} to back up`],
  ]
  for (const [argv, env, line] of cases) {
    assert.deepEqual(await runCli(argv, env), { status: 2, stdout: [], stderr: [line] }, argv.join(' '))
  }
  // Nothing above made a database.
  assert.deepEqual((await import('node:fs')).readdirSync(dir), [])
})

test('an unknown REPLENISH_ variable is named in a warning (a typo is otherwise silent)', async (t) => {
  const db = await testDb(t)
  const run = await runCli(['migrate'], { REPLENISH_DB: db, REPLENISH_PROT: '9000' })
  assert.equal(run.status, 0)
  assert.deepEqual(run.stderr, ['replenish: warning: unknown variable REPLENISH_PROT is ignored'])
})

test('a file that is not a database is refused with status 3 and one line naming the file', async (t) => {
  const db = join(tempDir(t), 'notes.txt')
  writeFileSync(db, 'these are not the pages you are looking for\n'.repeat(200))
  const run = await runCli(['migrate'], { REPLENISH_DB: db })
  assert.equal(run.status, 3)
  assert.deepEqual(run.stdout, [])
  assert.deepEqual(run.stderr, [`replenish: cannot use the database ${db}: it is not a SQLite database (SQLite: file is not a database)`])
})

test('admin-tokens create, users create and keys create print the new secret alone on the last line, and it works', async (t) => {
  const db = await migratedDb(t)
  const env = { REPLENISH_DB: db }
  const tokenRun = await runCli(['admin-tokens', 'create'], env)
  assert.equal(tokenRun.status, 0)
  const token = tokenRun.stdout.at(-1) as string
  assert.match(token, /^rpladm_[A-Za-z0-9_-]{43}$/)
  assert.deepEqual(tokenRun.stderr, [])

  const userRun = await runCli(['users', 'create', '--email', 'ann@example.com'], env)
  assert.equal(userRun.status, 0)
  assert.deepEqual(userRun.stdout, ['user 1 created', '1'])
  assert.deepEqual(await runCli(['users', 'create', '--email', 'ann@example.com'], env), { status: 2, stdout: [], stderr: ['replenish: a user with email ann@example.com already exists'] })

  const keyRun = await runCli(['keys', 'create', '--user', '1'], env)
  assert.equal(keyRun.status, 0)
  const key = keyRun.stdout.at(-1) as string
  assert.match(key, /^rpl_[A-Za-z0-9_-]{32}$/)
  assert.deepEqual(await runCli(['keys', 'create', '--user', '2'], env), { status: 2, stdout: [], stderr: ['replenish: no user with id 2'] })

  // Neither secret is stored as itself (nowhere: every table is read).
  const dump = await snapshotAt(db, { lastUsed: true })
  assert.ok(!dump.includes(key) && !dump.includes(token))

  const server = await startServe(t, env)
  const admin = await request(server.url, 'GET', '/admin/api/v1/users/1', { key: token })
  assert.equal(admin.status, 200)
  assert.equal(admin.body.email, 'ann@example.com')
  const customer = await request(server.url, 'GET', '/api/v1/subscriptions', { key })
  assert.equal(customer.status, 200)
  assert.deepEqual(customer.body, { subscriptions: [], count: 0, current_page: 1, pages: 0, per_page: 25, total_count: 0 })
  // Each secret opens its own API only (C2).
  assert.equal((await request(server.url, 'GET', '/admin/api/v1/users/1', { key })).status, 401)
  assert.equal((await request(server.url, 'GET', '/api/v1/subscriptions', { key: token })).status, 401)
})

test('serve on a taken port exits 1 with one line naming the address', async (t) => {
  const blocker = createServer()
  await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve))
  t.after(() => blocker.close())
  const port = (blocker.address() as { port: number }).port
  const db = await testDb(t)
  assert.deepEqual(await runCli(['serve'], { REPLENISH_DB: db, REPLENISH_PORT: String(port) }), {
    status: 1,
    stdout: [],
    stderr: [`replenish: cannot listen on 127.0.0.1:${port}: EADDRINUSE`],
  })
  // Issue 25: a SQLite file that start made is not left behind (a typo in --db stays harmless).
  if (!db.startsWith('postgres')) assert.deepEqual(readdirSync(dirname(db)), [])
})
