import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createRichAndBare, startTestServer } from '../helpers/server.ts'
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
