/**
 * The store's side of C18: a unit's context names who it runs for (stamped on its events), and a
 * dry unit runs, answers, and keeps nothing, while the units around it (in the same SQLite batch)
 * keep theirs.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { PROCESSOR_UNIT, type UnitContext } from '../../src/store/api.ts'
import { snapshot } from '../helpers/rows.ts'
import { openTestStore } from '../helpers/store.ts'

const customer = (dryRun: boolean): UnitContext => ({ actor: { type: 'customer', id: 7 }, requestId: 'req-1', dryRun })

test('a dry unit answers what it did and keeps none of it; the units asked for with it keep theirs', async (t) => {
  const { store } = await openTestStore(t)
  const [a, b, c] = await Promise.all([
    store.write((tx) => tx.accounts.createUser('a@example.com', null), customer(false)),
    store.write(async (tx) => {
      const user = await tx.accounts.createUser('b@example.com', 'ext-b')
      // Its own writes are visible to it, as in any unit.
      assert.equal((await tx.accounts.findUser(user.id))?.email, 'b@example.com')
      await tx.events.record('subscription.updated', null, { user: user.id })
      return user
    }, customer(true)),
    store.write((tx) => tx.accounts.createUser('c@example.com', null), customer(false)),
  ])
  assert.deepEqual([a.email, b.email, b.external_id, c.email], ['a@example.com', 'b@example.com', 'ext-b', 'c@example.com'])
  // Sorted: on PostgreSQL the three units run side by side, and c's INSERT may take the lower id.
  assert.deepEqual((await store.accounts.listUsers(0, 10)).map((u) => u.email).sort(), ['a@example.com', 'c@example.com'])
  assert.equal(await store.accounts.emailTaken('b@example.com'), false)
  assert.deepEqual(await store.events.feed(0, 10, undefined), [])
})

test('a dry unit that fails rejects with its error and leaves nothing', async (t) => {
  const { store } = await openTestStore(t)
  const before = await snapshot(store)
  await assert.rejects(store.write(async (tx) => {
    await tx.accounts.createUser('x@example.com', null)
    throw new RangeError('refused')
  }, customer(true)), RangeError)
  assert.equal(await snapshot(store), before)
})

test('events are stamped with the context the unit was given; a unit given none is the system', async (t) => {
  const { store } = await openTestStore(t)
  await store.write((tx) => tx.events.record('subscription.updated', null, { n: 1 }), customer(false))
  await store.write((tx) => tx.events.recordJson('subscription.updated', null, '{"n":2}'), PROCESSOR_UNIT)
  await store.write((tx) => tx.events.record('subscription.updated', null, { n: 3 }))
  const feed = await store.events.feed(0, 10, undefined)
  assert.deepEqual(feed.map((e) => [e.data.object, e.actor, e.request_id]), [
    [{ n: 1 }, { type: 'customer', id: 7 }, 'req-1'],
    [{ n: 2 }, { type: 'processor', id: null }, null],
    [{ n: 3 }, { type: 'system', id: null }, null],
  ])
})
