import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { serviceClock } from '../../src/clock.ts'
import { runProcessor } from '../../src/processing/processor.ts'
import { renderSubscription } from '../../src/domain/representation.ts'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'

/**
 * The GET body cache (issue 6, src/store/sqlite/body-cache.ts) must never answer with a body that is no
 * longer true. Each test reads a subscription (so it is cached), changes it one way, and reads it
 * again: the answer must be what SQLite renders now, byte for byte.
 */
async function setup(t: TestContext, env: Record<string, string> = {}) {
  const server = await startTestServer(t, env)
  const user = await seedUser(server.store)
  const items = [await seedSubscribable(server.store), await seedSubscribable(server.store)]
  const sub = await createSubscription(server, user.key, {
    line_items_attributes: [{ subscribable_id: items[0], quantity: 1 }, { subscribable_id: items[1], quantity: 2 }],
  })
  const get = async () => {
    const res = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
    assert.equal(res.status, 200)
    return res.body
  }
  // Fill the cache, and prove it is being used: a second read is served without SQL.
  await get()
  assert.ok(cacheSize(server) >= 1, 'the first GET cached the body')
  return { server, user, sub, items, get }
}

const cacheSize = (server: TestServer): number => sqliteOf(server.store).readCacheSize()

/** What the database says now, rendered without the cache. */
function fresh(server: TestServer, id: number): unknown {
  const row = sqliteOf(server.store).db.prepare('SELECT quantity FROM line_items WHERE subscription_id = ? ORDER BY id').all(id) as { quantity: number }[]
  return row.map((r) => r.quantity)
}

test('a second GET of an unchanged subscription is answered from the cache with the same bytes', async (t) => {
  const { server, user, sub } = await setup(t)
  const first = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
  // Change the row behind SQLite's back in a way no trigger sees (a TEMP trigger is dropped):
  // the cached answer is still served, which shows the second read came from the cache.
  sqliteOf(server.store).db.exec('DROP TRIGGER temp.body_cache_subscription_updated')
  sqliteOf(server.store).db.prepare('UPDATE subscriptions SET skip_count = 99 WHERE id = ?').run(sub.id)
  const second = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
  assert.equal(second.text, first.text)
})

test('PATCH of a line item: the next GET shows the new quantity and updated_at', async (t) => {
  const { server, user, sub, get } = await setup(t)
  const res = await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: user.key, json: { subscription_line_item: { quantity: 7 } } })
  assert.equal(res.status, 200)
  const after = await get()
  assert.deepEqual(after.line_items.map((li: { quantity: number }) => li.quantity), fresh(server, sub.id))
  assert.equal(after.line_items[0].quantity, 7)
})

test('adding and deleting line items: the next GET lists exactly the items that exist', async (t) => {
  const { server, user, sub, items, get } = await setup(t)
  const added = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: user.key, json: { subscription_line_item: { subscribable_id: items[0], quantity: 5 } } })
  assert.equal(added.status, 200)
  assert.equal((await get()).line_items.length, 3)
  const removed = await server.request('DELETE', `/api/v1/line_items/${sub.line_items[0].id}`, { key: user.key })
  assert.equal(removed.status, 200)
  const after = await get()
  assert.deepEqual(after.line_items.map((li: { id: number }) => li.id), [sub.line_items[1].id, added.body.id])
})

test('skip, pause and cancel: the next GET shows each new state and date', async (t) => {
  const { server, user, sub, get } = await setup(t)
  const skipped = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })
  assert.equal((await get()).actionable_date, skipped.body.actionable_date)
  assert.notEqual(skipped.body.actionable_date, sub.actionable_date)
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: user.key })
  assert.equal((await get()).paused, true)
  await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: user.key })
  assert.equal((await get()).state, 'canceled')
})

test('the admin API and the processor change subscriptions too: the next GET sees it', async (t) => {
  const { server, user, sub, get } = await setup(t, { REPLENISH_TODAY: '2026-03-01' })
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` }
  const skipped = await server.request('POST', `/admin/api/v1/subscriptions/${sub.id}/skip`, { headers: admin })
  assert.equal(skipped.status, 200)
  assert.equal((await get()).actionable_date, skipped.body.actionable_date)
  // The admin's show is the customer's GET body, from the same cache, byte for byte.
  const shown = await server.request('GET', `/admin/api/v1/subscriptions/${sub.id}`, { headers: admin })
  assert.equal(shown.text, (await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })).text)

  // A processor run in this process moves the date on with one set-based UPDATE.
  const before = (await get()).actionable_date as string
  const summary = await runProcessor(server.store, { clock: serviceClock('UTC', before) })
  assert.equal(summary.installments, 1)
  const after = await get()
  assert.ok(after.actionable_date > before, `${after.actionable_date} after ${before}`)
})

test('a commit by another process (replenish process, a script) empties the cache', async (t) => {
  const { server, sub, get } = await setup(t)
  const other = new DatabaseSync(server.config.db)
  t.after(() => other.close())
  other.prepare('UPDATE line_items SET quantity = 42 WHERE id = ?').run(sub.line_items[1].id)
  assert.equal((await get()).line_items[1].quantity, 42)
})

test('reads of one turn share one look at other processes\' commits, taken after the last of them was asked for', async (t) => {
  const { server, sub } = await setup(t)
  const other = new DatabaseSync(server.config.db)
  t.after(() => other.close())
  const quantity = async (read: Promise<{ body: string } | undefined>) => JSON.parse((await read)!.body).line_items[1].quantity as number
  // Both reads are asked for in this turn, the commit falls between them: the second must see it,
  // and so does the first (it runs after the commit, which is no older than its request).
  const before = server.store.subscriptions.findJson(sub.id)
  other.prepare('UPDATE line_items SET quantity = 42 WHERE id = ?').run(sub.line_items[1].id)
  const after = server.store.subscriptions.findJson(sub.id)
  assert.equal(await quantity(after), 42)
  assert.equal(await quantity(before), 42)
  // And a turn later, through the API too.
  other.prepare('UPDATE line_items SET quantity = 43 WHERE id = ?').run(sub.line_items[1].id)
  assert.equal(await quantity(server.store.subscriptions.findJson(sub.id)), 43)
})

test('a read whose turn ends while a unit is still running waits for it, and never answers its unfinished writes', async (t) => {
  const { server, sub, get } = await setup(t)
  const original = await get()
  // Asked for first, the read's turn ends before the batch's COMMIT, while the unit (which
  // awaited a timer) is still running with quantity 9 in its savepoint; the COMMIT refuses it.
  const read = server.store.subscriptions.findJson(sub.id)
  const unit = server.store.write(async (tx) => {
    await tx.subscriptions.updateLineItem((await tx.subscriptions.lineItemById(sub.line_items[0].id))!, sub.line_items[0].subscribable_id, 9)
    await new Promise((resolve) => setTimeout(resolve, 20))
  })
  await assert.rejects(unit, /may only await the store/)
  assert.deepEqual(JSON.parse((await read)!.body), original)
  assert.deepEqual(await get(), original)
})

test('a write after another process\'s commit renders what it committed, once per batch and again in the next (line items kept by an earlier write)', async (t) => {
  const { server, user, sub, get } = await setup(t)
  const skip = async () => {
    const r = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })
    assert.equal(r.status, 200, r.text)
    return r.body
  }
  await skip() // keeps the line items rendered for the next write
  await get()
  const other = new DatabaseSync(server.config.db)
  t.after(() => other.close())
  for (const quantity of [42, 43]) {
    other.prepare('UPDATE line_items SET quantity = ? WHERE id = ?').run(quantity, sub.line_items[1].id)
    // One batch: the skip's unit and a read inside it each see the other process's commit.
    const [skipped, read] = await Promise.all([skip(), server.store.write((tx) => tx.subscriptions.renderJson(sub.id, true))])
    assert.equal(skipped.line_items[1].quantity, quantity)
    assert.equal(JSON.parse(read!.body).line_items[1].quantity, quantity)
  }
  assert.equal((await get()).line_items[1].quantity, 43)
})

test('a unit that wrote and then failed leaves no trace in the cache, even of what it read', async (t) => {
  const { server, sub, get } = await setup(t)
  const original = await get()
  await assert.rejects(
    server.store.write(async (tx) => {
      await tx.subscriptions.updateLineItem((await tx.subscriptions.lineItemById(sub.line_items[0].id))!, sub.line_items[0].subscribable_id, 99)
      // Read inside the unit: this sees (and would cache) the write about to be rolled back.
      assert.equal(JSON.parse((await tx.subscriptions.findJson(sub.id))!.body).line_items[0].quantity, 99)
      throw new Error('the unit fails')
    }),
    /the unit fails/,
  )
  assert.deepEqual(await get(), original)
})

test('a batch whose COMMIT fails leaves no trace in the cache of what was read in between', async (t) => {
  let failNext = false
  const server = await startTestServer(t, {}, {
    beforeCommit: () => {
      if (failNext) {
        failNext = false
        throw new Error('injected COMMIT failure')
      }
    },
  })
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, user.key, { line_items_attributes: [{ subscribable_id: item, quantity: 1 }] })
  const original = (await server.store.subscriptions.findJson(sub.id))!.body
  failNext = true
  // Asked for first, the read runs at the end of this turn (cache-turn.ts), before the batch's
  // COMMIT, which was scheduled after it: between the unit and its COMMIT (group commit: the unit
  // has finished, its batch has not committed yet) it sees the uncommitted quantity, and caches it.
  const between = server.store.subscriptions.findJson(sub.id)
  const unit = server.store.write(async (tx) => {
    await tx.subscriptions.updateLineItem((await tx.subscriptions.lineItemById(sub.line_items[0].id))!, sub.line_items[0].subscribable_id, 5)
  })
  assert.equal(JSON.parse((await between)!.body).line_items[0].quantity, 5)
  await assert.rejects(unit, /injected COMMIT failure/)
  assert.equal((await server.store.subscriptions.findJson(sub.id))!.body, original)
})

test('the cache keeps within its byte budget, and 0 turns it off', async (t) => {
  // 1 MB budget, many subscriptions of ~600 bytes: it must stop growing near 1 MB.
  const small = await startTestServer(t, { REPLENISH_READ_CACHE_MB: '1' })
  const user = await seedUser(small.store)
  const ids: number[] = []
  await small.store.write(async (tx) => {
    for (let i = 0; i < 3000; i++) ids.push(await tx.subscriptions.create(user.id, {
      interval_length: 1, interval_units: 'month', actionable_date: '2026-12-01', anchor_day: 1, end_date: null,
      payment_method_id: null, payment_source_id: null, currency: 'USD', shipping_address: null, billing_address: null, line_items: [],
    }, '2026-11-01'))
  })
  let bytes = 0
  for (const id of ids) bytes += (await small.store.subscriptions.findJson(id))!.body.length
  assert.ok(bytes > 1024 * 1024, 'the bodies read add up to more than the budget')
  const kept = sqliteOf(small.store).readCacheSize()
  assert.ok(kept > 0 && kept * (bytes / ids.length) <= 1024 * 1024, `${kept} bodies kept`)
  // The newest reads are the ones kept.
  const last = ids.at(-1)!
  sqliteOf(small.store).db.exec('DROP TRIGGER temp.body_cache_subscription_updated')
  sqliteOf(small.store).db.prepare('UPDATE subscriptions SET skip_count = 99 WHERE id = ?').run(last)
  assert.match((await small.store.subscriptions.findJson(last))!.body, /"skip_count":0,/)

  const off = await startTestServer(t, { REPLENISH_READ_CACHE_MB: '0' })
  const u2 = await seedUser(off.store)
  const sub = await createSubscription(off, u2.key)
  await off.store.subscriptions.findJson(sub.id)
  assert.equal(sqliteOf(off.store).readCacheSize(), 0)
})

test('the list is made of the cached bodies: byte for byte the domain rendering, and never stale', async (t) => {
  const { server, user, sub, get } = await setup(t)
  const second = await createSubscription(server, user.key, {})
  const list = async () => {
    const res = await server.request('GET', '/api/v1/subscriptions?per_page=5', { key: user.key })
    assert.equal(res.status, 200)
    return res
  }
  sqliteOf(server.store).db.prepare('UPDATE subscriptions SET currency = currency').run() // empties nothing but the touched bodies
  const cachedBefore = sqliteOf(server.store).readCacheSize()
  const first = await list()
  assert.equal(sqliteOf(server.store).readCacheSize(), cachedBefore, 'a list reads the cache but does not fill it')
  // Exactly what pageBody over renderSubscription gives (the rendering before the cache).
  const expected = JSON.stringify({
    subscriptions: await Promise.all([sub.id, second.id].map(async (id) => renderSubscription((await server.store.subscriptions.find(id))!, await server.store.subscriptions.lineItems(id)))),
    count: 2, current_page: 1, pages: 1, per_page: 5, total_count: 2,
  })
  assert.equal(first.text, expected)

  await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: user.key, json: { subscription_line_item: { quantity: 9 } } })
  assert.equal((await list()).body.subscriptions[0].line_items[0].quantity, 9)
  assert.deepEqual((await list()).body.subscriptions[0], await get())

  const other = new DatabaseSync(server.config.db)
  t.after(() => other.close())
  other.prepare('UPDATE subscriptions SET interval_length = 3 WHERE id = ?').run(second.id)
  assert.equal((await list()).body.subscriptions[1].interval_length, 3)
})

test('writing any column of a subscription empties its cached body; recording an event of it does not', async (t) => {
  const { server, sub, get } = await setup(t)
  // Every column of the table as it is now, so a column added later is covered without a change here.
  const all = (sqliteOf(server.store).db.prepare('SELECT name FROM pragma_table_info(?)').all('subscriptions') as { name: string }[]).map((r) => r.name)
  // The event chain's (migration 2), the processor's floor (4) and the date last told of as upcoming (11): not in the body.
  const bookkeeping = ['last_event_id', 'event_count', 'due_floor', 'upcoming_for']
  assert.ok(bookkeeping.every((c) => all.includes(c)))
  for (const column of all.filter((c) => c !== 'id' && !bookkeeping.includes(c))) {
    await get()
    assert.equal(cacheSize(server), 1)
    // The same value: SQLite fires an UPDATE OF trigger for every column assigned.
    sqliteOf(server.store).db.prepare(`UPDATE subscriptions SET ${column} = ${column} WHERE id = ?`).run(sub.id)
    assert.equal(cacheSize(server), 0, `an UPDATE of ${column} must empty the cached body`)
  }
  await get()
  await server.store.write((tx) => tx.events.record('subscription.updated', sub.id, {}))
  assert.equal(cacheSize(server), 1, 'the chain moved on, the body did not change')
  assert.equal((await server.store.events.ofSubscription(sub.id, 0, 1))[0]?.type, 'subscription.updated')
})

// C16: a body shows the catalog's prices now. A cached body and kept line items hold prices, so a
// write to a price or a discount (admin API, import, any statement) must not leave them stale.
test('a price or discount change shows at once in a cached body and in kept line items (C16)', async (t) => {
  const server = await startTestServer(t)
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store, { prices: { USD: '10.00' } })
  const other = await seedSubscribable(server.store, { prices: { USD: '1.00' } })
  const sub = await createSubscription(server, user.key, { line_items_attributes: [{ subscribable_id: item, quantity: 2 }, { subscribable_id: other, quantity: 1 }] })
  const admin = (path: string, json: unknown) => server.request('PATCH', `/admin/api/v1${path}`, { key: ADMIN_TOKEN, json })
  const get = async () => (await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })).body
  const domain = async () => JSON.parse(JSON.stringify(renderSubscription((await server.store.subscriptions.find(sub.id))!, await server.store.subscriptions.lineItems(sub.id))))
  // A write keeps the line items (body-cache.ts), then a GET caches the body.
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })).status, 200)
  assert.equal((await get()).total, '21.00')
  assert.ok(sqliteOf(server.store).readCacheSize() >= 1, "the body is cached")

  assert.equal((await admin(`/subscribables/${item}`, { subscribable: { prices: { USD: '12.50' } } })).status, 200)
  const priced = await get()
  assert.deepEqual([priced.line_items[0].price, priced.line_items[0].total, priced.subtotal, priced.total], ['12.50', '25.00', '26.00', '26.00'])
  assert.deepEqual(priced, await domain())
  // The path through kept line items (a write renders around them) shows it too.
  const skipped = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: user.key })
  assert.equal(skipped.body.total, '26.00')

  assert.equal((await admin(`/subscribables/${other}`, { subscribable: { discount_percent: '50' } })).status, 200)
  assert.deepEqual([(await get()).line_items[1].total, (await get()).discount_total], ['0.50', '0.50'])
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/pause`, { key: user.key })).body.total, '25.50')
  assert.equal((await admin(`/subscribables/${other}`, { subscribable: { prices: { USD: null } } })).status, 200)
  assert.deepEqual([(await get()).line_items[1].price, (await get()).total], [null, null])
  assert.equal((await server.request('POST', `/api/v1/subscriptions/${sub.id}/resume`, { key: user.key })).body.total, null)
  // A statement no API runs (an import, a script on this connection) is seen too: the triggers catch every write.
  sqliteOf(server.store).db.prepare('INSERT INTO subscribable_prices (subscribable_id, currency, amount, amount_text, minor_unit) VALUES (?, ?, ?, ?, ?)').run(other, 'USD', 200, '2.00', 100)
  assert.equal((await get()).total, '26.00')
  sqliteOf(server.store).db.prepare("UPDATE subscribables SET discount_bp = 10000, discount_percent = '100' WHERE id = ?").run(item)
  assert.deepEqual((await get()).line_items[0].total, '0.00')
  assert.deepEqual(await get(), await domain())
})
