/**
 * Issue 25, item 11: `serve` with no admin token anywhere (no REPLENISH_ADMIN_TOKEN, none stored)
 * says in one line on stderr how to make one, since every admin call is a 401 until then; with a
 * token of either kind, or after `--demo` seeded one, it says nothing of the kind.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { migratedDb, runCli, startServe, tempDir } from './harness.ts'
import { request } from '../helpers/server.ts'

const HINT = /^replenish: no admin token yet, so the admin API and \/admin\/ answer 401: make one with /

test('serve without any admin token prints one line saying how to make one; the command it names works', async (t) => {
  const db = await migratedDb(t)
  const server = await startServe(t, { REPLENISH_DB: db })
  const hints = server.stderr.filter((l) => HINT.test(l))
  assert.equal(hints.length, 1, server.stderr.join('\n'))
  assert.deepEqual(server.stdout.slice(0, 1), [`replenish listening on ${server.url}`])
  if (db.startsWith('postgres')) {
    // Never the URL: it may hold a password.
    assert.equal(hints[0], 'replenish: no admin token yet, so the admin API and /admin/ answer 401: make one with `replenish admin-tokens create` with the same REPLENISH_DB, or set REPLENISH_ADMIN_TOKEN')
  } else {
    assert.equal(hints[0], `replenish: no admin token yet, so the admin API and /admin/ answer 401: make one with \`replenish admin-tokens create --db ${db}\`, or set REPLENISH_ADMIN_TOKEN`)
  }
  assert.equal(await server.stop(), 0)
  // (In this process a second connection would wait on serve's event loop, so serve stops first.)
  const made = await runCli(['admin-tokens', 'create'], { REPLENISH_DB: db })
  assert.equal(made.status, 0, made.stderr.join('\n'))
  // With the stored token there now, the next start says nothing, and the token opens the admin API.
  const again = await startServe(t, { REPLENISH_DB: db })
  assert.deepEqual(again.stderr.filter((l) => HINT.test(l)), [])
  assert.equal((await request(again.url, 'GET', '/admin/api/v1/users', { key: made.stdout.at(-1) })).status, 200)
})

test('no hint with REPLENISH_ADMIN_TOKEN set, or after --demo seeded a token; the default database is not named', async (t) => {
  const db = await migratedDb(t)
  const withVariable = await startServe(t, { REPLENISH_DB: db, REPLENISH_ADMIN_TOKEN: 'a-token-of-twenty-chars-or-more' })
  assert.deepEqual(withVariable.stderr.filter((l) => HINT.test(l)), [])
  assert.equal(await withVariable.stop(), 0)
  const demo = await startServe(t, { REPLENISH_DB: db }, ['--demo'])
  // The hint, were there one, comes right after the seeding's lines.
  while (!demo.stderr.some((l) => l.startsWith('try: curl'))) await new Promise((resolve) => setTimeout(resolve, 10))
  assert.deepEqual(demo.stderr.filter((l) => HINT.test(l)), [], demo.stderr.join('\n'))
  assert.equal(await demo.stop(), 0)
  // A path with a space is quoted so the line can be pasted.
  const spaced = join(tempDir(t), 'my shop.db')
  const named = await startServe(t, { REPLENISH_DB: spaced })
  assert.ok(named.stderr.includes(`replenish: no admin token yet, so the admin API and /admin/ answer 401: make one with \`replenish admin-tokens create --db ${JSON.stringify(spaced)}\`, or set REPLENISH_ADMIN_TOKEN`), named.stderr.join('\n'))
})
