/**
 * C16, catalog prices: a subscribable carries `prices` (currency → amount string, default {}) and
 * `discount_percent` ("0"…"100", at most 2 decimals, default "0"); admin create and PATCH set
 * them; a PATCH merges prices by currency and `null` removes one; C16's 422 shapes, which change
 * nothing. Every answer is checked against the OpenAPI document (the test server does it).
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, snapshot, startTestServer, type RequestOptions, type TestServer } from '../helpers/server.ts'

const A = '/admin/api/v1'
let server: TestServer
let counter = 0
const sku = () => `MONEY-${++counter}`

before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

const admin = (method: string, path: string, options: RequestOptions = {}) => server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...options })
const create = async (fields: Record<string, unknown>) => {
  const res = await admin('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'Coffee', ...fields } } })
  assert.equal(res.status, 201, res.text)
  return res.body
}

/** A refused request answers `status` with `body` and changes no row. */
async function refused(method: string, path: string, options: RequestOptions, body: unknown): Promise<void> {
  const before = await snapshot(server.store)
  const res = await admin(method, path, options)
  assert.deepEqual([res.status, res.body], [422, body], `${method} ${path} ${JSON.stringify(options.json ?? options.form)}`)
  assert.equal(await snapshot(server.store), before)
}

describe('catalog prices and discounts (C16)', () => {
  test('a new item has no prices and no discount by default', async () => {
    const item = await create({})
    assert.deepEqual(item.prices, {})
    assert.equal(item.discount_percent, '0')
    assert.deepEqual(Object.keys(item), ['id', 'sku', 'name', 'subscribable', 'prices', 'discount_percent', 'created_at', 'updated_at'])
  })

  test('create sets prices per currency, each with exactly its currency digits, codes in order', async () => {
    const item = await create({ prices: { usd: '12.5', EUR: '11.90', JPY: '1250', BHD: '1.25', CLF: '0.0001' }, discount_percent: '12.50' })
    assert.deepEqual(item.prices, { BHD: '1.250', CLF: '0.0001', EUR: '11.90', JPY: '1250', USD: '12.50' })
    assert.deepEqual(Object.keys(item.prices), ['BHD', 'CLF', 'EUR', 'JPY', 'USD'])
    assert.equal(item.discount_percent, '12.5')
    assert.deepEqual((await admin('GET', `/subscribables/${item.id}`)).body, item)
    assert.deepEqual((await admin('GET', `/subscribables?after=${item.id - 1}&limit=1`)).body.subscribables, [item])
  })

  test('the bounds: 0 and 1000000 are amounts, 0 and 100 are discounts', async () => {
    const item = await create({ prices: { USD: '0', EUR: '1000000.00', JPY: '1000000' }, discount_percent: '100' })
    assert.deepEqual(item.prices, { EUR: '1000000.00', JPY: '1000000', USD: '0.00' })
    assert.equal(item.discount_percent, '100')
    assert.equal((await create({ discount_percent: '0' })).discount_percent, '0')
    assert.equal((await create({ discount_percent: 5 })).discount_percent, '5')
  })

  test('PATCH merges prices by currency; null removes a currency, null for the object removes all', async () => {
    const item = await create({ prices: { USD: '10.00', EUR: '9.00' }, discount_percent: '5' })
    const merged = await admin('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { prices: { USD: '11.00', GBP: '8.00' } } } })
    assert.equal(merged.status, 200)
    assert.deepEqual(merged.body.prices, { EUR: '9.00', GBP: '8.00', USD: '11.00' })
    assert.equal(merged.body.discount_percent, '5', 'absent: unchanged')
    const removed = await admin('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { prices: { EUR: null, CHF: null } } } })
    assert.deepEqual(removed.body.prices, { GBP: '8.00', USD: '11.00' })
    const renamed = await admin('PUT', `/subscribables/${item.id}`, { json: { subscribable: { name: 'Coffee, dark' } } })
    assert.deepEqual([renamed.body.prices, renamed.body.discount_percent], [{ GBP: '8.00', USD: '11.00' }, '5'])
    const cleared = await admin('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { prices: null, discount_percent: null } } })
    assert.deepEqual([cleared.body.prices, cleared.body.discount_percent], [{}, '0'])
    assert.deepEqual((await admin('GET', `/subscribables/${item.id}`)).body, cleared.body)
  })

  test('form bodies: bracketed prices, and a bare key (null) removes a currency', async () => {
    const res = await admin('POST', '/subscribables', { form: `subscribable[sku]=${sku()}&subscribable[name]=Tea&subscribable[prices][USD]=4.50&subscribable[prices][EUR]=4&subscribable[discount_percent]=7.5` })
    assert.equal(res.status, 201)
    assert.deepEqual([res.body.prices, res.body.discount_percent], [{ EUR: '4.00', USD: '4.50' }, '7.5'])
    const patched = await admin('PATCH', `/subscribables/${res.body.id}`, { form: 'subscribable[prices][EUR]&subscribable[discount_percent]=' })
    assert.deepEqual([patched.body.prices, patched.body.discount_percent], [{ USD: '4.50' }, '7.5'])
  })

  test('422 prices.CODE "is not a valid amount": numbers, exponents, negatives, extra digits, above 1000000', async () => {
    const item = await create({ prices: { USD: '1.00' } })
    const cases: [Record<string, unknown>, string][] = [
      [{ USD: 12.5 }, 'USD'], [{ USD: 12 }, 'USD'], [{ USD: '1e3' }, 'USD'], [{ USD: '-1.00' }, 'USD'], [{ USD: '12.505' }, 'USD'],
      [{ JPY: '12.5' }, 'JPY'], [{ BHD: '1.0005' }, 'BHD'], [{ USD: '1000000.01' }, 'USD'], [{ usd: 'ten' }, 'USD'], [{ USD: '' }, 'USD'],
      [{ USD: true }, 'USD'], [{ USD: { amount: '1' } }, 'USD'], [{ USD: ' 5' }, 'USD'],
    ]
    for (const [prices, code] of cases) {
      await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', prices } } }, { [`prices.${code}`]: ['is not a valid amount'] })
      await refused('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { prices } } }, { [`prices.${code}`]: ['is not a valid amount'] })
    }
  })

  test('422 prices "has an unknown currency: XYZ"; prices not an object is invalid', async () => {
    await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', prices: { XYZ: '1.00', USD: '2.00' } } } }, { prices: ['has an unknown currency: XYZ'] })
    await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', prices: { XYZ: '1', DOLLARS: '2', USD: 'x' } } } }, {
      prices: ['has an unknown currency: XYZ', 'has an unknown currency: DOLLARS'],
      'prices.USD': ['is not a valid amount'],
    })
    await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', prices: ['USD', '1.00'] } } }, { prices: ['is invalid'] })
    await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', prices: '12.50' } } }, { prices: ['is invalid'] })
  })

  test('422 discount_percent "must be between 0 and 100", and what is not a percent', async () => {
    const item = await create({ discount_percent: '10' })
    for (const value of ['100.01', '101', '-1', '-0.5', 150]) {
      await refused('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { discount_percent: value } } }, { discount_percent: ['must be between 0 and 100'] })
    }
    await refused('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { discount_percent: '12.345' } } }, { discount_percent: ['must have at most 2 decimal places'] })
    await refused('PATCH', `/subscribables/${item.id}`, { json: { subscribable: { discount_percent: 'ten' } } }, { discount_percent: ['is not a number'] })
    await refused('POST', '/subscribables', { json: { subscribable: { sku: sku(), name: 'X', discount_percent: '1e1' } } }, { discount_percent: ['is not a number'] })
    // Every field's errors at once, in the order of the fields.
    await refused('POST', '/subscribables', { json: { subscribable: { name: 'X', prices: { USD: '-1' }, discount_percent: '200' } } }, {
      sku: ["can't be blank"], 'prices.USD': ['is not a valid amount'], discount_percent: ['must be between 0 and 100'],
    })
  })

  test('the messages are localised; keys never change', async () => {
    const res = await admin('POST', '/subscribables', {
      json: { subscribable: { sku: sku(), name: 'X', prices: { USD: 'x', XYZ: '1' }, discount_percent: '101' } },
      headers: { 'Accept-Language': 'es' },
    })
    assert.deepEqual([res.status, res.body], [422, {
      'prices.USD': ['no es un importe válido'], prices: ['tiene una moneda desconocida: XYZ'], discount_percent: ['debe estar entre 0 y 100'],
    }])
  })
})
