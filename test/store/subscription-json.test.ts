import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedPayment, seedSubscribable, seedUser, startTestServer } from '../helpers/server.ts'
import { renderSubscription } from '../../src/domain/representation.ts'

// GET a subscription is rendered by SQLite (findJson); it must be exactly C3's representation as
// the domain renders it, for every kind of value: booleans, nulls, addresses, dates, line items.
test('the SQL-rendered subscription equals the domain rendering, field for field and in order', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-31' })
  const alice = await seedUser(server.store)
  const a = await seedSubscribable(server.store)
  const b = await seedSubscribable(server.store)
  const pay = await seedPayment(server.store, alice.id)
  const address = { firstname: 'Ada', lastname: null, company: null, address1: '1 Main St', address2: null, city: 'Paris', zipcode: '75001', state_name: null, country_iso: 'fr', phone: '+33 1' }
  const rich = await createSubscription(server, alice.key, {
    interval_units: 'week', end_date: '2027-01-01', payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
    shipping_address_attributes: address, billing_address_attributes: { ...address, firstname: 'Élodie "É" \\ ✓' },
    line_items_attributes: [{ subscribable_id: b, quantity: 3 }, { subscribable_id: a, quantity: 1 }],
  })
  const bare = await createSubscription(server, alice.key, {})
  await server.request('POST', `/api/v1/subscriptions/${bare.id}/pause`, { key: alice.key })
  for (const id of [rich.id, bare.id]) {
    const sub = server.store.subscriptions.find(id)
    assert.ok(sub)
    const fromDomain = JSON.stringify(renderSubscription(sub, server.store.subscriptions.lineItems(id)))
    assert.equal(server.store.subscriptions.findJson(id)?.body, fromDomain)
    const shown = await server.request('GET', `/api/v1/subscriptions/${id}`, { key: alice.key })
    assert.equal(shown.status, 200)
    assert.equal(shown.text, fromDomain)
  }
})
