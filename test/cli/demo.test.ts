import { test } from 'node:test'
import assert from 'node:assert/strict'
import { seedDemo } from '../../src/cli/demo.ts'
import { openTestStore } from '../helpers/store.ts'

/** `serve --demo`: an empty database is seeded once; a database with users is left alone. */
test('seedDemo seeds an empty store in one unit and nothing the second time or beside existing users', async (t) => {
  const { store } = await openTestStore(t, { synchronous: 'NORMAL' })
  const lines = await seedDemo(store, 'http://127.0.0.1:1')
  assert.equal(lines.length, 4)
  assert.match(lines[0] ?? '', /^demo data seeded: user 1 \(demo@example\.com\), payment_method_id 1, payment_source_id 1, subscribable_id 1 \(coffee\) and 2 \(tea\)$/)
  const key = /^demo API key \(customer API, \$KEY\): (\S+)$/.exec(lines[1] ?? '')?.[1]
  assert.ok(key)
  assert.match(lines[3] ?? '', new RegExp(`^try: curl -s -X POST http://127\\.0\\.0\\.1:1/api/v1/subscriptions -H 'Authorization: Bearer ${key}'`))
  assert.deepEqual(await seedDemo(store, 'http://127.0.0.1:1'), [], 'seeded already')
  assert.deepEqual((await store.accounts.listUsers(0, 10)).map((u) => u.email), ['demo@example.com'])
  assert.equal((await store.catalog.listSubscribables(0, 10)).length, 2)

  const other = (await openTestStore(t, { synchronous: "NORMAL" })).store
  await other.write((tx) => tx.accounts.createUser('someone@example.com', null))
  assert.deepEqual(await seedDemo(other, 'http://127.0.0.1:1'), [])
  assert.deepEqual((await other.accounts.listUsers(0, 10)).map((u) => u.email), ['someone@example.com'])
  assert.equal((await other.catalog.listSubscribables(0, 10)).length, 0)
})
