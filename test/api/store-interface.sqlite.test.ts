import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedUser, startTestServer } from '../helpers/server.ts'
import type { Subscription } from '../../src/domain/types.ts'

/**
 * SQLite's read barrier (test/api/store-interface.test.ts has the rules every backend keeps): a
 * read issued while a unit is in progress waits until the unit has finished, and then sees all of
 * it. PostgreSQL answers such a read at once from what was committed before the unit.
 */
const TODAY = '2026-01-15'

test('a read issued while a unit is suspended sees the unit once it has finished, never half of it', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const owner = await seedUser(server.store)
  const sub = await createSubscription(server, owner.key, { interval_length: 1 })
  let read: Promise<Subscription | undefined> | undefined
  await server.store.write(async (tx) => {
    await tx.subscriptions.update((await tx.subscriptions.lock(sub.id))!, { interval_length: 9 })
    read = server.store.subscriptions.find(sub.id)
    await tx.subscriptions.update((await tx.subscriptions.lock(sub.id))!, { interval_length: 12 })
  })
  assert.equal((await read)?.interval_length, 12)
})
