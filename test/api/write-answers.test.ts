/**
 * A write that answers a subscription's body (C3) answers it as it now stands: byte for byte what
 * the next GET shows, and what its event holds. On PostgreSQL a lifecycle step renders that body
 * from the row and line items it locked, without reading it back (issue 30: one round trip fewer);
 * this is the rule that keeps such a shortcut honest.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createRichAndBare, seedSubscribable, startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts'

async function answersAsItStands(server: TestServer, key: string, id: number, res: TestResponse, what: string): Promise<void> {
  assert.equal(res.status, 200, `${what}: ${res.text}`)
  const shown = await server.request('GET', `/api/v1/subscriptions/${id}`, { key })
  assert.equal(res.text, shown.text, `${what}: the answer is the GET's body`)
  const events = await server.request('GET', `/api/v1/subscriptions/${id}/events?per_page=1`, { key })
  assert.deepEqual(events.body.events[0].data.object, JSON.parse(res.text), `${what}: the event holds the answer`)
}

test('a create, every lifecycle step and update answers the body the next GET shows, and its event holds it (customer and admin)', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-03-31' })
  const { user, rich, bare } = await createRichAndBare(server)
  for (const sub of [rich, bare]) {
    const again = await server.request('POST', '/api/v1/subscriptions', { key: user.key, json: { subscription: {
      ...Object.fromEntries(['interval_length', 'interval_units', 'end_date', 'payment_method_id', 'payment_source_id'].map((k) => [k, sub[k]])),
      ...(sub.shipping_address ? { shipping_address_attributes: sub.shipping_address, billing_address_attributes: sub.billing_address } : {}),
      line_items_attributes: sub.line_items.map((li: { subscribable_id: number; quantity: number }) => ({ subscribable_id: li.subscribable_id, quantity: li.quantity })),
    } } })
    await answersAsItStands(server, user.key, JSON.parse(again.text).id, again, `a create like ${sub.id}`)
  }
  const steps: [string, string, string, unknown?][] = [
    ['skip', 'POST', 'skip'],
    ['pause until a date', 'POST', 'pause', { subscription: { actionable_date: '2026-06-01' } }],
    ['resume', 'POST', 'resume'],
    ['pause', 'POST', 'pause'],
    ['resume on a date', 'POST', 'resume', { subscription: { actionable_date: '2026-05-02' } }],
    ['cancel', 'POST', 'cancel'],
    ['activate', 'POST', 'activate'],
    ['skip again', 'POST', 'skip'],
  ]
  for (const sub of [rich, bare]) {
    for (const [what, method, path, json] of steps) {
      const res = await server.request(method, `/api/v1/subscriptions/${sub.id}/${path}`, { key: user.key, ...(json === undefined ? {} : { json }) })
      await answersAsItStands(server, user.key, sub.id, res, `${what} of ${sub.id}`)
    }
    for (const [what, path] of [['the shop pauses', 'pause'], ['the shop resumes', 'resume'], ['the shop skips', 'skip'], ['the shop cancels', 'cancel']]) {
      const res = await server.request('POST', `/admin/api/v1/subscriptions/${sub.id}/${path}`, { key: ADMIN_TOKEN })
      await answersAsItStands(server, user.key, sub.id, res, `${what} ${sub.id}`)
    }
    const active = await server.request('POST', `/admin/api/v1/subscriptions/${sub.id}/activate`, { key: ADMIN_TOKEN })
    await answersAsItStands(server, user.key, sub.id, active, `the shop activates ${sub.id}`)
  }
  const tea = await seedSubscribable(server.store, { prices: { USD: '8.50' } })
  const updates: [string, unknown][] = [
    ['interval', { interval_length: 3, interval_units: 'week' }],
    ['addresses', { shipping_address_attributes: { firstname: 'Zoë "Z" \\ ✓', lastname: null, address1: 'Rue 1', city: 'Lyon', zipcode: '69001', country_iso: 'fr' } }],
    ['line items and end date', { end_date: '2028-01-01', line_items_attributes: [{ id: rich.line_items[0].id, quantity: 5 }, { subscribable_id: tea, quantity: 1 }] }],
  ]
  for (const [what, subscription] of updates) {
    const res = await server.request('PATCH', `/api/v1/subscriptions/${rich.id}`, { key: user.key, json: { subscription } })
    await answersAsItStands(server, user.key, rich.id, res, `update of the ${what}`)
  }
})

test('a body kept from the lock is never answered after another write of the unit: a line item added after the lock shows', async (t) => {
  const server = await startTestServer(t)
  const { rich } = await createRichAndBare(server)
  const tea = await seedSubscribable(server.store, { prices: { USD: '8.50' } })
  const { body, fresh } = await server.store.write(async (tx) => {
    const sub = await tx.subscriptions.lock(rich.id, true)
    assert.ok(sub)
    await tx.subscriptions.addLineItem(sub.id, tea, 4, false)
    await tx.subscriptions.update(sub, { paused: true })
    const answered = (await tx.subscriptions.renderJson(sub.id, true))?.body
    return { body: answered, fresh: (await tx.subscriptions.renderJson(sub.id, false))?.body }
  })
  assert.equal(body, fresh)
  const items = JSON.parse(body as string).line_items as { subscribable_id: number; quantity: number }[]
  assert.deepEqual(items.map((li) => [li.subscribable_id, li.quantity]).at(-1), [tea, 4])
  assert.equal(JSON.parse(body as string).paused, true)
})
