import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { Tx } from '../../src/store/api.ts'
import { scratchStore } from '../helpers/scratch-store.ts'
import { UnitEscaped } from '../../src/store/sqlite/writer.ts'

/**
 * The rules of an asynchronous unit of writes on SQLite (issue 16; writer.ts, facade.ts): units
 * run one at a time even across their awaits; a unit that awaits anything but its tx is refused
 * and rolled back; a write inside a unit is refused; reads through the store wait for a running
 * unit; a unit's tx works only inside it; a repository's throw becomes a rejected promise.
 */

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

test("units never interleave: the next unit's first statement runs after the one before has ended, across its awaits", async (t) => {
  const h = scratchStore(t)
  const ran: string[] = []
  const first = h.store.write(async (tx) => {
    ran.push('A1')
    h.insert(1)
    await tx.accounts.emailTaken('a@example.com')
    ran.push('A2')
    await tx.accounts.createUser('a@example.com', null)
    ran.push('A3')
    h.insert(2)
    await tx.accounts.findUser(1)
    ran.push('A4')
  })
  const second = h.store.write(async (tx) => {
    ran.push('B1')
    const seen = await tx.accounts.emailTaken('a@example.com') // the unit before, whole
    ran.push('B2')
    h.insert(3)
    return seen
  })
  const [, sawFirst] = await Promise.all([first, second])
  assert.deepEqual(ran, ['A1', 'A2', 'A3', 'A4', 'B1', 'B2'])
  assert.equal(sawFirst, true)
  assert.deepEqual(h.committed(), [1, 2, 3])
})

test('a unit that awaits a timer is refused with UnitEscaped and rolled back; the others of its batch commit, and a later write works', async (t) => {
  const h = scratchStore(t)
  const before = h.store.write(async () => h.insert(1))
  let afterTimer: Promise<unknown> | undefined
  const escaping = h.store.write(async (tx) => {
    h.insert(10)
    await tx.accounts.createUser('escaped@example.com', null)
    await sleep(5)
    // Long refused: its tx works no more, and nothing of this lands anywhere.
    afterTimer = tx.accounts.createUser('after-timer@example.com', null)
    await afterTimer
  })
  const behind = h.store.write(async () => h.insert(2)) // asked for while the escaping unit runs
  await assert.rejects(escaping, { name: 'UnitEscaped', message: /may only await the store/ })
  await before
  await behind
  assert.deepEqual(h.committed(), [1, 2])
  await sleep(20)
  assert.ok(afterTimer, 'the escaped unit went on after its timer')
  await assert.rejects(afterTimer, /outside its unit/)
  await h.store.write(async () => h.insert(3))
  assert.deepEqual(h.committed(), [1, 2, 3])
  assert.equal(await h.store.accounts.emailTaken('escaped@example.com'), false)
  assert.equal(await h.store.accounts.emailTaken('after-timer@example.com'), false)
})

test('a unit that reads through the store instead of its tx waits for itself, and is refused (UnitEscaped)', async (t) => {
  const h = scratchStore(t)
  await assert.rejects(h.store.write(async () => {
    h.insert(1)
    await h.store.accounts.findUser(1) // the read barrier: it waits for this very unit to end
  }), UnitEscaped)
  await h.store.write(async () => h.insert(2))
  assert.deepEqual(h.committed(), [2])
})

test('store.write inside a unit is refused, and the outer unit rolls back', async (t) => {
  const h = scratchStore(t)
  await assert.rejects(
    h.store.write(async () => {
      h.insert(1)
      await h.store.write(async () => h.insert(2))
    }),
    /store\.write called inside a unit of writes/,
  )
  await h.store.write(async () => h.insert(3))
  assert.deepEqual(h.committed(), [3])
})

test("a read through the store while a unit is between awaits answers only after the unit ends, and never the unit's rolled-back writes", async (t) => {
  const h = scratchStore(t)
  const order: string[] = []
  const refused = h.store.write(async (tx) => {
    await tx.accounts.createUser('rolled-back@example.com', null)
    await tx.accounts.findUser(1)
    await tx.accounts.emailTaken('rolled-back@example.com')
    order.push('unit ends')
    throw new Error('refused after writing')
  })
  // The unit has written its user and is between two awaits now.
  const read = h.store.accounts.findUser(1).then((user) => (order.push('read answers'), user))
  await assert.rejects(refused, /refused after writing/)
  assert.equal(await read, undefined)
  assert.deepEqual(order, ['unit ends', 'read answers'])

  // A unit that ends well is seen by the reads that waited for it.
  const kept = h.store.write(async (tx) => {
    const user = await tx.accounts.createUser('kept@example.com', null)
    await tx.accounts.findUser(user.id)
    return user
  })
  const waited = h.store.accounts.emailTaken('kept@example.com')
  assert.equal(await waited, true)
  assert.equal((await kept).email, 'kept@example.com')
})

test("a unit's tx used outside its unit rejects: after the unit, and while another unit runs", async (t) => {
  const h = scratchStore(t)
  let kept: Tx | undefined
  await h.store.write(async (tx) => {
    kept = tx
  })
  assert.ok(kept)
  await assert.rejects(kept.accounts.createUser('late@example.com', null), /tx was used outside its unit/)

  // Another unit is between its awaits: a stray call must not land in that unit's savepoint.
  const other = h.store.write(async (tx) => {
    await tx.accounts.emailTaken('other@example.com')
    await tx.accounts.emailTaken('other@example.com')
    h.insert(1)
  })
  const stray = assert.rejects(kept.accounts.createUser('stray@example.com', null), /tx was used outside its unit/)
  await other
  await stray
  assert.deepEqual(h.committed(), [1])
  assert.equal(await h.store.accounts.emailTaken('late@example.com'), false)
  assert.equal(await h.store.accounts.emailTaken('stray@example.com'), false)
})

test("a repository's synchronous throw becomes a rejected promise, in a unit and in a read", async (t) => {
  const h = scratchStore(t)
  await h.store.write(async (tx) => tx.catalog.createSubscribable({ sku: 'SKU-1', name: 'One', subscribable: true, discount_bp: 0, prices: new Map() }))
  let threw = false
  await assert.rejects(h.store.write(async (tx) => {
    h.insert(1)
    let duplicate: Promise<unknown> | undefined
    try {
      duplicate = tx.catalog.createSubscribable({ sku: 'SKU-1', name: 'Again', subscribable: true, discount_bp: 0, prices: new Map() }) // UNIQUE sku: SQLite throws
    } catch {
      threw = true
    }
    await duplicate
  }), /UNIQUE constraint failed/)
  assert.equal(threw, false, 'the call answered a promise instead of throwing')
  assert.deepEqual(h.committed(), [])

  let read: Promise<unknown> | undefined
  threw = false
  try {
    read = h.store.accounts.findUser(undefined as unknown as number) // a value SQLite cannot bind
  } catch {
    threw = true
  }
  assert.equal(threw, false, 'the read answered a promise instead of throwing')
  await assert.rejects(read as Promise<unknown>, /cannot be bound/)
})
