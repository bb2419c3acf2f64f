/**
 * `replenish admin-tokens create|list|revoke` (issue 18, item 2; C13): scope and label on create,
 * a table without tokens on list, revoke refuses the token from the next request on, and bad
 * input is exit 2 naming the flag.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { runCli, runCliBeside, startServe, tempDir } from './harness.ts'
import { request } from '../helpers/server.ts'

/** A new, migrated SQLite database in a temporary directory. */
async function migrated(t: import('node:test').TestContext): Promise<{ REPLENISH_DB: string }> {
  const env = { REPLENISH_DB: join(tempDir(t), 'r.db') }
  assert.equal((await runCli(['migrate'], env)).status, 0)
  return env
}

test('create with --scope and --label, list shows them without the token, revoke refuses it', async (t) => {
  const env = await migrated(t)
  const made = await runCli(['admin-tokens', 'create', '--scope', 'metrics', '--label', 'prometheus'], env)
  assert.equal(made.status, 0, made.stderr.join('\n'))
  const token = made.stdout.at(-1) as string
  assert.match(token, /^rpladm_[A-Za-z0-9_-]{43}$/)
  const plain = await runCli(['admin-tokens', 'create'], env)
  assert.equal(plain.status, 0)

  const listed = await runCli(['admin-tokens', 'list'], env)
  assert.equal(listed.status, 0)
  assert.ok(!listed.stdout.join('\n').includes(token), 'the token is never listed')
  assert.match(listed.stdout[0] as string, /^ID\s+SCOPE\s+PREFIX\s+LABEL\s+CREATED_AT\s+LAST_USED_AT$/)
  assert.match(listed.stdout[1] as string, new RegExp(`^1\\s+metrics\\s+${token.slice(0, 10)}\\s+prometheus\\s+\\S+Z\\s+never$`))
  assert.match(listed.stdout[2] as string, /^2\s+admin\s+rpladm_\S{3}\s+-\s+\S+Z\s+never$/)
  assert.equal(listed.stdout.length, 3)

  const server = await startServe(t, env)
  assert.equal((await request(server.url, 'GET', '/metrics', { key: token })).status, 200)
  const outside = await request(server.url, 'GET', '/admin/api/v1/users', { key: token })
  assert.deepEqual([outside.status, outside.body], [403, { error: "This token's scope does not allow this request." }])

  const revoked = await runCliBeside(t, ['admin-tokens', 'revoke', '1'], env)
  assert.deepEqual(revoked, { status: 0, stdout: ['admin token 1 revoked'], stderr: [] })
  const refused = await request(server.url, 'GET', '/metrics', { key: token })
  assert.deepEqual([refused.status, refused.body], [401, { error: 'Invalid admin token.' }])
  assert.equal(await server.stop(), 0)
  assert.equal((await runCli(['admin-tokens', 'list'], env)).stdout.length, 2, 'a revoked token is not listed')
})

test('bad scope, long label, unknown or malformed id → exit 2 naming the flag or the id', async (t) => {
  const env = await migrated(t)
  const cases: [string[], string][] = [
    [['admin-tokens', 'create', '--scope', 'root'], 'replenish: --scope: "root" is not a scope (expected admin, read or metrics)'],
    [['admin-tokens', 'create', '--label', 'x'.repeat(101)], 'replenish: --label: is too long (maximum is 100 characters)'],
    [['admin-tokens', 'list', '--scope', 'read'], 'replenish: --scope is only for `replenish admin-tokens create`'],
    [['admin-tokens', 'revoke'], 'replenish: admin-tokens revoke needs the token id: replenish admin-tokens revoke ID'],
    [['admin-tokens', 'revoke', 'abc'], 'replenish: admin-tokens revoke: "abc" is not a token id (expected a whole number from 1)'],
    [['admin-tokens', 'revoke', '7'], 'replenish: no admin token with id 7 (see replenish admin-tokens list)'],
  ]
  for (const [argv, line] of cases) assert.deepEqual(await runCli(argv, env), { status: 2, stdout: [], stderr: [line] }, argv.join(' '))
  assert.equal((await runCli(['admin-tokens', 'create', '--label', 'x'.repeat(100)], env)).status, 0)
})
