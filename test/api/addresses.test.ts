import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { createSubscription, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { renderSubscription } from '../../src/domain/representation.ts'

/** shipping_address_attributes / billing_address_attributes: validated per C4, rendered per C3, with their events (C10). */
const FULL = {
  firstname: 'Ada', lastname: 'Lovelace', company: 'Engines Ltd', address1: '12 St James Sq', address2: 'Flat 3',
  city: 'London', zipcode: 'SW1Y 4JH', state_name: 'Greater London', country_iso: 'GB', phone: '+44 20 7946 0000',
}
const MINIMAL = { firstname: 'Grace', address1: '1 Navy Way', city: 'Arlington', zipcode: '22202', country_iso: 'us' }
const MINIMAL_RENDERED = {
  firstname: 'Grace', lastname: null, company: null, address1: '1 Navy Way', address2: null,
  city: 'Arlington', zipcode: '22202', state_name: null, country_iso: 'US', phone: null,
}

async function setup(t: TestContext) {
  const server = await startTestServer(t, { REPLENISH_TODAY: '2026-01-15' })
  const alice = await seedUser(server.store)
  return { server, alice }
}

async function stored(server: TestServer, id: number): Promise<Record<string, unknown>> {
  const sub = await server.store.subscriptions.find(id)
  assert.ok(sub)
  return renderSubscription(sub, await server.store.subscriptions.lineItems(id))
}

test('create with both addresses: stored and rendered with all ten keys, country upper-cased', async (t) => {
  const { server, alice } = await setup(t)
  const res = await server.request('POST', '/api/v1/subscriptions', {
    key: alice.key,
    json: { subscription: { interval_length: 1, shipping_address_attributes: FULL, billing_address_attributes: MINIMAL } },
  })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.shipping_address, FULL)
  assert.deepEqual(Object.keys(res.body.shipping_address), ['firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone'])
  assert.deepEqual(res.body.billing_address, MINIMAL_RENDERED)
  assert.deepEqual(await stored(server, res.body.id), res.body)
  assert.deepEqual((await server.store.events.ofSubscription(res.body.id, 0, 10)).map((e) => [e.type, e.data.object]), [['subscription.created', res.body]])
})

test('form-encoded nested address attributes work like JSON (C1)', async (t) => {
  const { server, alice } = await setup(t)
  const fields = Object.entries(MINIMAL).map(([k, v]) => `subscription[shipping_address_attributes][${k}]=${encodeURIComponent(v)}`)
  const form = ['subscription[interval_length]=1', ...fields].join('&')
  const res = await server.request('POST', '/api/v1/subscriptions', { key: alice.key, form })
  assert.equal(res.status, 200, res.text)
  assert.deepEqual(res.body.shipping_address, MINIMAL_RENDERED)
})

test('required address fields → "can\'t be blank" keyed shipping_address.<field>; nothing is created', async (t) => {
  const { server, alice } = await setup(t)
  const snap = await snapshot(server.store)
  const create = (attrs: Record<string, unknown>, language = 'en') => server.request('POST', '/api/v1/subscriptions', {
    key: alice.key, headers: { 'accept-language': language }, json: { subscription: { interval_length: 1, ...attrs } },
  })
  const noZip = await create({ shipping_address_attributes: { ...MINIMAL, zipcode: '' } })
  assert.deepEqual([noZip.status, noZip.body], [422, { 'shipping_address.zipcode': ["can't be blank"] }])
  const empty = await create({ shipping_address_attributes: {}, billing_address_attributes: { ...MINIMAL, city: '   ', firstname: null } })
  assert.deepEqual([empty.status, empty.body], [422, {
    'shipping_address.firstname': ["can't be blank"],
    'shipping_address.address1': ["can't be blank"],
    'shipping_address.city': ["can't be blank"],
    'shipping_address.zipcode': ["can't be blank"],
    'shipping_address.country_iso': ["can't be blank"],
    'billing_address.firstname': ["can't be blank"],
    'billing_address.city': ["can't be blank"],
  }])
  const es = await create({ billing_address_attributes: { ...MINIMAL, zipcode: undefined } }, 'es-MX')
  assert.deepEqual([es.status, es.body], [422, { 'billing_address.zipcode': ['no puede estar en blanco'] }])
  assert.equal(await snapshot(server.store), snap)
})

test('country_iso must be two letters → "is invalid"', async (t) => {
  const { server, alice } = await setup(t)
  const snap = await snapshot(server.store)
  for (const country of ['USA', 'U', '12', 'U5', 'u s']) {
    const res = await server.request('POST', '/api/v1/subscriptions', {
      key: alice.key, json: { subscription: { interval_length: 1, billing_address_attributes: { ...MINIMAL, country_iso: country } } },
    })
    assert.deepEqual([res.status, res.body], [422, { 'billing_address.country_iso': ['is invalid'] }], country)
  }
  const fr = await server.request('POST', '/api/v1/subscriptions', {
    key: alice.key, headers: { 'accept-language': 'fr' }, json: { subscription: { interval_length: 1, shipping_address_attributes: { ...MINIMAL, country_iso: 'FRA' } } },
  })
  assert.deepEqual([fr.status, fr.body], [422, { 'shipping_address.country_iso': ["n'est pas valide"] }])
  assert.equal(await snapshot(server.store), snap)
})

test('update: an address is set, merged field by field, removed with null; each change writes its event', async (t) => {
  const { server, alice } = await setup(t)
  const sub = await createSubscription(server, alice.key)
  assert.deepEqual([sub.shipping_address, sub.billing_address], [null, null])
  const patch = (attrs: Record<string, unknown>) => server.request('PATCH', `/api/v1/subscriptions/${sub.id}`, { key: alice.key, json: { subscription: attrs } })
  const typesAfter = async (n: number) => (await server.store.events.ofSubscription(sub.id, 0, 100)).slice(0, n).map((e) => [e.type, e.data.object])

  const set = await patch({ shipping_address_attributes: MINIMAL })
  assert.equal(set.status, 200, set.text)
  assert.deepEqual(set.body, { ...sub, shipping_address: MINIMAL_RENDERED, updated_at: set.body.updated_at })
  assert.deepEqual(await stored(server, sub.id), set.body)
  assert.deepEqual(await typesAfter(1), [['subscription.shipping_address_changed', set.body]])

  const merged = await patch({ shipping_address_attributes: { city: 'Boston', zipcode: '02101' }, billing_address_attributes: FULL })
  assert.equal(merged.status, 200, merged.text)
  assert.deepEqual(merged.body.shipping_address, { ...MINIMAL_RENDERED, city: 'Boston', zipcode: '02101' })
  assert.deepEqual(merged.body.billing_address, FULL)
  assert.deepEqual(await stored(server, sub.id), merged.body)
  assert.deepEqual(await typesAfter(2), [['subscription.billing_address_changed', merged.body], ['subscription.shipping_address_changed', merged.body]])

  // Merging a blank over a required field is refused and changes nothing.
  const snap = await snapshot(server.store)
  const blank = await patch({ shipping_address_attributes: { zipcode: '' } })
  assert.deepEqual([blank.status, blank.body], [422, { 'shipping_address.zipcode': ["can't be blank"] }])
  assert.equal(await snapshot(server.store), snap)

  // The same address again is no change and no event.
  const same = await patch({ billing_address_attributes: FULL })
  assert.deepEqual([same.status, same.body], [200, merged.body])
  assert.equal(await snapshot(server.store), snap)

  const removed = await patch({ billing_address_attributes: null })
  assert.equal(removed.status, 200)
  assert.deepEqual(removed.body, { ...merged.body, billing_address: null, updated_at: removed.body.updated_at })
  assert.deepEqual(await stored(server, sub.id), removed.body)
  assert.deepEqual(await typesAfter(1), [['subscription.billing_address_changed', removed.body]])
})

test('an address that is not an object, or fields that are not text, are invalid', async (t) => {
  const { server, alice } = await setup(t)
  const snap = await snapshot(server.store)
  const create = (attrs: Record<string, unknown>) => server.request('POST', '/api/v1/subscriptions', { key: alice.key, json: { subscription: { interval_length: 1, ...attrs } } })
  const notObject = await create({ shipping_address_attributes: 'Main St 1' })
  assert.deepEqual([notObject.status, notObject.body], [422, { shipping_address: ['is invalid'] }])
  const nested = await create({ shipping_address_attributes: { ...MINIMAL, city: { name: 'x' } } })
  assert.deepEqual([nested.status, nested.body], [422, { 'shipping_address.city': ['is invalid'] }])
  const long = await create({ shipping_address_attributes: { ...MINIMAL, address2: 'x'.repeat(256) } })
  assert.deepEqual([long.status, long.body], [422, { 'shipping_address.address2': ['is too long (maximum is 255 characters)'] }])
  assert.equal(await snapshot(server.store), snap)
  // Numbers are accepted as text (a zipcode sent as a JSON number).
  const numeric = await create({ shipping_address_attributes: { ...MINIMAL, zipcode: 22202 } })
  assert.deepEqual([numeric.status, numeric.body.shipping_address], [200, MINIMAL_RENDERED])
})
