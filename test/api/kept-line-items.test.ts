import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { DatabaseSync } from 'node:sqlite'
import { renderSubscription } from '../../src/domain/representation.ts'
import { ADMIN_TOKEN, createRichAndBare, createSubscription, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'

/**
 * A write that renders a subscription it changed (a skip, a pause, an update) keeps the line
 * items' part of the body and reuses it the next time (issue 6, src/store/sqlite/body-cache.ts). Every
 * answer must still be the subscription as it is now: each test keeps the items with one write,
 * changes the items some way, and checks the next write's answer against the domain's rendering
 * of the rows, byte for byte.
 */
async function setup(t: TestContext, env: Record<string, string> = {}, storeOptions: Parameters<typeof startTestServer>[2] = {}) {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-01', ...env }, storeOptions)
  const user = await seedUser(server.store)
  const items = [await seedSubscribable(server.store), await seedSubscribable(server.store)]
  const sub = await createSubscription(server, user.key, {
    line_items_attributes: [{ subscribable_id: items[0], quantity: 1 }, { subscribable_id: items[1], quantity: 2 }],
  })
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 0, 'a creation keeps no line items')
  const step = async (action: 'skip' | 'pause' | 'resume') => {
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/${action}`, { key: user.key })
    assert.equal(res.status, 200, res.text)
    return res.text
  }
  await step('skip')
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 1, 'the skip kept its line items')
  return { server, user, sub, items, step }
}

/** The subscription as the domain renders its rows now: what every answer must be. */
async function now(server: TestServer, id: number): Promise<string> {
  const sub = await server.store.subscriptions.find(id)
  assert.ok(sub)
  return JSON.stringify(renderSubscription(sub, await server.store.subscriptions.lineItems(id)))
}

test('the next write reuses the kept line items, and its answer is the rows byte for byte', async (t) => {
  const { server, sub, step } = await setup(t)
  assert.equal(await step('pause'), await now(server, sub.id))
  // Change an item behind SQLite's back, where no trigger sees it: the resume's answer still has
  // the kept quantity, which shows the items were not read again.
  sqliteOf(server.store).db.exec('DROP TRIGGER temp.body_cache_line_item_updated')
  sqliteOf(server.store).db.prepare('UPDATE line_items SET quantity = 42 WHERE id = ?').run(sub.line_items[0].id)
  assert.equal(JSON.parse(await step('resume')).line_items[0].quantity, 1)
})

test('kept line items render every kind of value as the full query does: none, several, addresses, unicode', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-31' })
  const { user: alice, rich, bare } = await createRichAndBare(server)
  for (const id of [rich.id, bare.id]) {
    for (const action of ['skip', 'pause', 'resume']) {
      const res = await server.request('POST', `/api/v1/subscriptions/${id}/${action}`, { key: alice.key })
      assert.equal(res.status, 200)
      assert.equal(res.text, await now(server, id), `${action} of subscription ${id}`)
    }
  }
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 2)
})

test('PATCH, add and delete of line items: the next write answers exactly the items that exist', async (t) => {
  const { server, user, sub, items, step } = await setup(t)
  const patched = await server.request('PATCH', `/api/v1/line_items/${sub.line_items[0].id}`, { key: user.key, json: { subscription_line_item: { quantity: 7 } } })
  assert.equal(patched.status, 200)
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 0, 'the PATCH dropped the kept items')
  const paused = await step('pause')
  assert.equal(paused, await now(server, sub.id))
  assert.equal(JSON.parse(paused).line_items[0].quantity, 7)

  const added = await server.request('POST', `/api/v1/subscriptions/${sub.id}/line_items`, { key: user.key, json: { subscription_line_item: { subscribable_id: items[0], quantity: 5 } } })
  assert.equal(added.status, 200)
  assert.equal(await step('resume'), await now(server, sub.id))
  const removed = await server.request('DELETE', `/api/v1/line_items/${sub.line_items[0].id}`, { key: user.key })
  assert.equal(removed.status, 200)
  const skipped = await step('skip')
  assert.equal(skipped, await now(server, sub.id))
  assert.deepEqual(JSON.parse(skipped).line_items.map((li: { id: number }) => li.id), [sub.line_items[1].id, added.body.id])
})

test('an update that changes line items and columns in one request answers the new items', async (t) => {
  const { server, user, sub, items, step } = await setup(t)
  const res = await server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, {
    key: user.key,
    json: { subscription: { interval_length: 2, line_items_attributes: [{ id: sub.line_items[1].id, _destroy: true }, { subscribable_id: items[0], quantity: 4 }] } },
  })
  assert.equal(res.status, 200, res.text)
  assert.equal(res.text, await now(server, sub.id))
  assert.equal(res.body.line_items.length, 2)
  assert.equal(await step('skip'), await now(server, sub.id))
})

test('the admin deleting a catalog item removes it from the next answer', async (t) => {
  const { server, items, sub, step } = await setup(t)
  const res = await server.request('DELETE', `/admin/api/v1/subscribables/${items[1]}`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } })
  assert.ok(res.status < 300, res.text)
  const paused = await step('pause')
  assert.equal(paused, await now(server, sub.id))
  assert.deepEqual(JSON.parse(paused).line_items.map((li: { subscribable_id: number }) => li.subscribable_id), [items[0]])
})

test('a commit by another process that changes line items is seen by the next write', async (t) => {
  const { server, sub, step } = await setup(t)
  const other = new DatabaseSync(server.config.db)
  t.after(() => other.close())
  other.prepare('UPDATE line_items SET quantity = 42 WHERE id = ?').run(sub.line_items[1].id)
  const paused = await step('pause')
  assert.equal(paused, await now(server, sub.id))
  assert.equal(JSON.parse(paused).line_items[1].quantity, 42)
})

test('line items kept by a unit that then failed are not used again', async (t) => {
  const { server, sub, step } = await setup(t)
  await assert.rejects(
    server.store.write(async (tx) => {
      await tx.subscriptions.updateLineItem((await tx.subscriptions.lineItemById(sub.line_items[0].id))!, sub.line_items[0].subscribable_id, 99)
      // Rendered and kept inside the unit: the kept items hold the write about to be rolled back.
      const body = (await tx.subscriptions.renderJson(sub.id, true))?.body as string
      assert.equal(JSON.parse(body).line_items[0].quantity, 99)
      assert.equal(sqliteOf(server.store).keptLineItemsSize(), 1)
      throw new Error('the unit fails')
    }),
    /the unit fails/,
  )
  const paused = await step('pause')
  assert.equal(paused, await now(server, sub.id))
  assert.equal(JSON.parse(paused).line_items[0].quantity, 1)
})

test('line items kept in a batch whose COMMIT fails are not used again', async (t) => {
  let failNext = false
  const { server, sub, step } = await setup(t, {}, {
    beforeCommit: () => {
      if (failNext) {
        failNext = false
        throw new Error('injected COMMIT failure')
      }
    },
  })
  failNext = true
  const unit = server.store.write(async (tx) => {
    await tx.subscriptions.updateLineItem((await tx.subscriptions.lineItemById(sub.line_items[0].id))!, sub.line_items[0].subscribable_id, 5)
    return tx.subscriptions.renderJson(sub.id, true)
  })
  await assert.rejects(unit, /injected COMMIT failure/)
  const paused = await step('pause')
  assert.equal(paused, await now(server, sub.id))
  assert.equal(JSON.parse(paused).line_items[0].quantity, 1)
})

test('a deleted subscription leaves no kept line items behind', async (t) => {
  const { server, sub } = await setup(t)
  // No repository deletes a subscription: raw SQL, in a unit (the body cache's triggers are SQLite's).
  await server.store.write(async () => void sqliteOf(server.store).db.prepare('DELETE FROM subscriptions WHERE id = ?').run(sub.id))
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 0)
})

test('a GET renders around kept line items too, without keeping any itself', async (t) => {
  const { server, user, sub } = await setup(t)
  sqliteOf(server.store).db.exec('DROP TRIGGER temp.body_cache_line_item_updated')
  sqliteOf(server.store).db.prepare('UPDATE line_items SET quantity = 42 WHERE id = ?').run(sub.line_items[0].id)
  const shown = await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { key: user.key })
  assert.equal(shown.body.line_items[0].quantity, 1, 'the GET used the kept items')

  const other = await createSubscription(server, user.key, {})
  const res = await server.request('GET', `/api/v1/subscriptions/${other.id}`, { key: user.key })
  assert.equal(res.status, 200)
  assert.equal(sqliteOf(server.store).keptLineItemsSize(), 1)
})

test('kept line items stay within half the read cache budget, and a budget of 0 keeps none', async (t) => {
  const small = await startTestServer(t, { REPLENISH_READ_CACHE_MB: '1' })
  const user = await seedUser(small.store)
  const item = await seedSubscribable(small.store)
  const ids: number[] = []
  await small.store.write(async (tx) => {
    for (let i = 0; i < 3000; i++) {
      const id = await tx.subscriptions.create(user.id, {
        interval_length: 1, interval_units: 'month', actionable_date: '2026-12-01', anchor_day: 1, end_date: null,
        payment_method_id: null, payment_source_id: null, currency: 'USD', shipping_address: null, billing_address: null, line_items: [],
      }, '2026-11-01')
      for (let k = 0; k < 3; k++) await tx.subscriptions.addLineItem(id, item, k + 1, false)
      ids.push(id)
    }
  })
  await small.store.write(async (tx) => {
    for (const id of ids) await tx.subscriptions.renderJson(id, true)
  })
  const kept = sqliteOf(small.store).keptLineItemsSize()
  assert.ok(kept > 0 && kept < ids.length, `${kept} kept of ${ids.length}`)
  const perSubscription = (sqliteOf(small.store).db.prepare('SELECT length(jsonb(json_group_array(json_object(\'id\', id, \'subscription_id\', subscription_id, \'subscribable_id\', subscribable_id, \'quantity\', quantity, \'created_at\', created_at, \'updated_at\', updated_at)))) AS n FROM line_items WHERE subscription_id = ?').get(ids[0] as number) as { n: number }).n
  assert.ok(kept * perSubscription <= 512 * 1024, `${kept} × ${perSubscription} bytes within 512 KiB`)

  const off = await startTestServer(t, { REPLENISH_READ_CACHE_MB: '0' })
  const u2 = await seedUser(off.store)
  const sub = await createSubscription(off, u2.key)
  const res = await off.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { key: u2.key })
  assert.equal(res.status, 200)
  assert.equal(sqliteOf(off.store).keptLineItemsSize(), 0)
})
