import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRichAndBare, createSubscription, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { renderSubscription } from '../../src/domain/representation.ts'

// GET a subscription is rendered by SQLite (findJson); it must be exactly C3's representation as
// the domain renders it, for every kind of value: booleans, nulls, addresses, dates, line items.
test('the SQL-rendered subscription equals the domain rendering, field for field and in order', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-31' })
  const { user: alice, rich, bare } = await createRichAndBare(server)
  await server.request('POST', `/api/v1/subscriptions/${bare.id}/pause`, { key: alice.key })
  for (const id of [rich.id, bare.id]) {
    const sub = await server.store.subscriptions.find(id)
    assert.ok(sub)
    const fromDomain = JSON.stringify(renderSubscription(sub, await server.store.subscriptions.lineItems(id)))
    assert.equal((await server.store.subscriptions.findJson(id))?.body, fromDomain)
    const shown = await server.request('GET', `/api/v1/subscriptions/${id}`, { key: alice.key })
    assert.equal(shown.status, 200)
    assert.equal(shown.text, fromDomain)
  }
})

// C16: the totals are rendered by SQLite's SQL (money-sql.ts) and by the domain (money.ts); the two
// must write the same bytes for every exponent, rounding boundary, missing price and largest line.
test('the SQL-rendered money equals the domain rendering: every exponent, .5 boundaries, no price, the largest line', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-31' })
  const user = await seedUser(server.store)
  const item = (prices: Record<string, string>, discount = 0) => seedSubscribable(server.store, { prices, discount })
  const half = await item({ USD: '0.05', JPY: '105', BHD: '1.005', CLF: '0.0005' }, 1000) // 10 % of odd amounts: .5 boundaries
  const third = await item({ USD: '9.99', JPY: '999', BHD: '9.999', CLF: '9.9999' }, 3333)
  const top = await item({ USD: '1000000.00', JPY: '1000000', BHD: '1000000.000', CLF: '1000000.0000' }, 9999)
  const free = await item({ USD: '0', JPY: '0', BHD: '0', CLF: '0' }, 10000)
  const unpriced = await item({ EUR: '1.00' }, 1250)
  const line = (subscribable_id: number, quantity: number) => ({ subscribable_id, quantity })
  const ids: number[] = []
  for (const currency of ['USD', 'JPY', 'BHD', 'CLF']) {
    const priced = [line(half, 1), line(half, 3), line(third, 7), line(top, 9999), line(free, 2)]
    ids.push((await createSubscription(server, user.key, { currency, line_items_attributes: priced })).id)
    ids.push((await createSubscription(server, user.key, { currency, line_items_attributes: [...priced, line(unpriced, 1)] })).id)
    ids.push((await createSubscription(server, user.key, { currency })).id)
  }
  for (const id of ids) {
    const sub = await server.store.subscriptions.find(id)
    assert.ok(sub)
    const fromDomain = JSON.stringify(renderSubscription(sub, await server.store.subscriptions.lineItems(id)))
    assert.equal((await server.store.subscriptions.findJson(id))?.body, fromDomain)
    // Rendered around kept line items (a write's path) too.
    const kept = await server.store.write((tx) => tx.subscriptions.renderJson(id, true))
    assert.equal(kept?.body, fromDomain)
    assert.equal((await server.store.write((tx) => tx.subscriptions.renderJson(id, true)))?.body, fromDomain)
  }
  const usd = JSON.parse((await server.store.subscriptions.findJson(ids[0] as number))!.body)
  // 0.05 less 10 %: 0.005 off rounds to 0.01; 3 × 0.05 = 0.15 less 0.015 → 0.02 off; 7 × 9.99 = 69.93 less 33.33 % = 23.307669 → 23.31;
  // 9999 × 1000000.00 = 9999000000.00 less 99.99 % = 9998000100.00 off, 999900.00 left.
  assert.deepEqual(usd.line_items.map((li: { price: string; discount_percent: string; total: string }) => [li.price, li.discount_percent, li.total]), [
    ['0.05', '10', '0.04'], ['0.05', '10', '0.13'], ['9.99', '33.33', '46.62'], ['1000000.00', '99.99', '999900.00'], ['0.00', '100', '0.00'],
  ])
  assert.deepEqual([usd.subtotal, usd.discount_total, usd.total], ['9999000070.13', '9998000123.34', '999946.79'])
  const jpy = JSON.parse((await server.store.subscriptions.findJson(ids[3] as number))!.body)
  // ¥105 less 10 %: 10.5 off rounds to 11; 3 × ¥105 = 315 less 31.5 → 32 off; 7 × 999 = 6993 less 2330.7669 → 2331 off.
  assert.deepEqual([jpy.line_items[0].total, jpy.line_items[1].total, jpy.line_items[2].total, jpy.total], ['94', '283', '4662', '1004939'])
  const unpricedBody = JSON.parse((await server.store.subscriptions.findJson(ids[1] as number))!.body)
  assert.deepEqual([unpricedBody.subtotal, unpricedBody.discount_total, unpricedBody.total, unpricedBody.line_items[5].price, unpricedBody.line_items[5].discount_percent], [null, null, null, null, '12.5'])
  const empty = JSON.parse((await server.store.subscriptions.findJson(ids[5] as number))!.body)
  assert.deepEqual([empty.currency, empty.subtotal, empty.discount_total, empty.total], ['JPY', '0', '0', '0'])
})
