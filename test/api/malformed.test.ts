/**
 * Malformed input of every kind gets a 4xx, never a 5xx, never a crash: broken JSON, wrong
 * types, huge numbers, arrays where objects belong, unicode, SQL-looking strings, odd ids,
 * deeply nested forms, invalid UTF-8, broken HTTP. Afterwards no error was logged, every table
 * is intact and the server still answers.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import net from 'node:net'
import {
  ADMIN_TOKEN, countRows, createSubscription, seedSubscribable, seedUser, startTestServer, type SeededUser, type TestServer,
} from '../helpers/server.ts'

let server: TestServer
let alice: SeededUser
let subId: number
let itemId: number

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-03-15' })
  alice = await seedUser(server.store)
  const coffee = await seedSubscribable(server.store)
  const sub = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: coffee, quantity: 1 }] })
  subId = sub.id
  itemId = sub.line_items[0].id
})
after(() => server.close())

interface Case {
  readonly name: string
  readonly method: string
  readonly path: string
  readonly status: number
  readonly type?: string
  readonly body?: string | Buffer
  readonly key?: string | null
  readonly headers?: Record<string, string>
}

function send(c: Case): Promise<{ status: number; text: string; type: string | undefined }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...(c.headers ?? {}) }
    const key = c.key === undefined ? alice.key : c.key
    if (key !== null) headers['authorization'] ??= `Bearer ${key}`
    if (c.type !== undefined) headers['content-type'] = c.type
    const req = http.request(server.url + c.path, { method: c.method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (chunk: Buffer) => chunks.push(chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8'), type: res.headers['content-type'] }))
    })
    req.on('error', reject)
    if (c.body !== undefined) req.write(c.body)
    req.end()
  })
}

/** Bytes straight onto a socket, for requests no HTTP client would send. */
function sendRaw(bytes: string | Buffer): Promise<string> {
  const { port } = new URL(server.url)
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1', () => socket.end(bytes))
    const chunks: Buffer[] = []
    socket.on('data', (chunk) => chunks.push(chunk))
    socket.on('end', () => resolve(Buffer.concat(chunks).toString('latin1')))
    socket.on('error', reject)
  })
}

const JSON_TYPE = 'application/json'
const FORM = 'application/x-www-form-urlencoded'
const create = (name: string, status: number, body: string | Buffer, type = JSON_TYPE): Case => ({ name, method: 'POST', path: '/api/v1/subscriptions', status, type, body })
const sub = (attrs: string): string => `{"subscription": {${attrs}}}`

function cases(): Case[] {
  const s = `/api/v1/subscriptions/${subId}`
  const li = `/api/v1/line_items/${itemId}`
  return [
    // Broken JSON: 400
    create('truncated object', 400, '{"subscription":'),
    create('missing value', 400, sub('"interval_length": ')),
    create('lone bracket', 400, '['),
    create('lone quote', 400, '"'),
    create('trailing garbage', 400, `${sub('"interval_length": 1')}garbage`),
    create('NUL byte', 400, '\u0000'),
    create('NaN literal', 400, sub('"interval_length": NaN')),
    create('Infinity literal', 400, sub('"interval_length": Infinity')),
    create('single quotes', 400, "{'subscription': {'interval_length': 1}}"),
    create('byte order mark', 400, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(sub('"interval_length": 1'))])),
    create('UTF-16 body', 400, Buffer.from(sub('"interval_length": 1'), 'utf16le')),
    create('form sent as JSON', 400, 'subscription[interval_length]=1'),
    create('comment in JSON', 400, `/* hi */ ${sub('"interval_length": 1')}`),
    // Numbers out of range and of the wrong type: 422
    create('1e999 (Infinity)', 422, sub('"interval_length": 1e999')),
    create('-1e999', 422, sub('"interval_length": -1e999')),
    create('30-digit number', 422, sub('"interval_length": 123456789012345678901234567890')),
    create('26-digit string', 422, sub('"interval_length": "99999999999999999999999999"')),
    create('negative zero', 422, sub('"interval_length": -0')),
    create('tiny fraction', 422, sub('"interval_length": 1e-300')),
    create('nested arrays as a number', 422, sub('"interval_length": [[[[1]]]]')),
    create('object as a number', 422, sub('"interval_length": {"$gt": 0}')),
    create('boolean as a number', 422, sub('"interval_length": false')),
    create('full-width digits', 422, sub('"interval_length": "１２"')),
    create('Arabic-Indic digit', 422, sub('"interval_length": "\u0661"')),
    create('hex string', 422, sub('"interval_length": "0x10"')),
    create('quantity of 2^53+1', 422, sub('"interval_length": 1, "line_items_attributes": [{"subscribable_id": 1, "quantity": 9007199254740993}]')),
    create('subscribable_id of 1e20', 422, sub('"interval_length": 1, "line_items_attributes": [{"subscribable_id": 1e20, "quantity": 1}]')),
    create('payment ids of -1 and 1.5', 422, sub('"interval_length": 1, "payment_method_id": -1, "payment_source_id": 1.5')),
    // Arrays and scalars where objects belong: 422
    create('root is an array', 422, '[{"interval_length": 1}]'),
    create('subscription is an array', 422, '{"subscription": [1, 2]}'),
    create('root is a number', 422, '42'),
    create('root is null', 422, 'null'),
    create('line items is a string', 422, sub('"interval_length": 1, "line_items_attributes": "all"')),
    create('line items holds arrays', 422, sub('"interval_length": 1, "line_items_attributes": [[]]')),
    create('line items object holds arrays', 422, sub('"interval_length": 1, "line_items_attributes": {"0": []}')),
    create('address is an array', 422, sub('"interval_length": 1, "shipping_address_attributes": [1, 2]')),
    create('address fields of the wrong types', 422, sub('"interval_length": 1, "billing_address_attributes": {"firstname": ["a"], "country_iso": {"x": 1}}')),
    create('dates as objects', 422, sub('"interval_length": 1, "actionable_date": {"y": 2026}, "end_date": [2027]')),
    // Unicode and SQL-looking strings: 422, and nothing is dropped
    create('emoji units', 422, sub('"interval_length": 1, "interval_units": "🗓️"')),
    create('lone surrogate', 422, sub('"interval_length": 1, "interval_units": "\\ud800"')),
    create('right-to-left override', 422, sub('"interval_length": 1, "currency": "\u202eDSU"')),
    create('SQL in a number', 422, sub('"interval_length": "1; DROP TABLE subscriptions;--"')),
    create('SQL in units', 422, sub(`"interval_length": 1, "interval_units": "week' OR '1'='1"`)),
    create('SQL in currency', 422, sub(`"interval_length": 1, "currency": "USD'); DELETE FROM users;--"`)),
    create('SQL in payment ids', 422, sub('"interval_length": 1, "payment_method_id": "1 OR 1=1", "payment_source_id": "1 OR 1=1"')),
    create('SQL in a subscribable id', 422, sub('"interval_length": 1, "line_items_attributes": [{"subscribable_id": "1; DELETE FROM subscribables", "quantity": 1}]')),
    create('NUL inside a string', 422, sub('"interval_length": 1, "interval_units": "week\\u0000"')),
    create('__proto__ as the subscription', 422, '{"subscription": {"__proto__": {"interval_length": 1}}}'),
    create('__proto__ at the root', 422, '{"__proto__": {"interval_length": 1}}'),
    create('constructor.prototype', 422, '{"constructor": {"prototype": {"interval_length": 1}}}'),
    create('deeply nested arrays', 422, `{"subscription": ${'['.repeat(10_000)}${']'.repeat(10_000)}}`),
    create('deeply nested objects', 422, `{"subscription": ${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}}`),
    // Invalid UTF-8: 400 or 422, never a crash
    create('invalid UTF-8 in a value', 422, Buffer.concat([Buffer.from('{"subscription": {"interval_length": "'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}')])),
    create('invalid UTF-8 in a key', 422, Buffer.concat([Buffer.from('{"subscription": {"'), Buffer.from([0xc0, 0xaf]), Buffer.from('": 1}}')])),
    create('invalid UTF-8 outside strings', 400, Buffer.concat([Buffer.from(sub('"interval_length": 1')), Buffer.from([0xff])])),
    create('invalid UTF-8 in a form', 422, Buffer.concat([Buffer.from('subscription[interval_length]='), Buffer.from([0xff, 0x80])]), FORM),
    // Forms
    create('form: lone %', 422, 'subscription[interval_length]=%', FORM),
    create('form: truncated UTF-8 escape', 422, 'subscription[interval_length]=%E2%82', FORM),
    create('form: %FF%FE', 422, 'subscription[interval_length]=%FF%FE', FORM),
    create('form: %00', 422, 'subscription[interval_length]=%00', FORM),
    create('form: nested too deeply', 400, `subscription${'[a]'.repeat(100)}=1`, FORM),
    create('form: 40 levels of arrays', 422, `subscription${'[]'.repeat(40)}=1`, FORM),
    create('form: array as a number', 422, 'subscription[interval_length][]=1&subscription[interval_length][]=2', FORM),
    create('form: hash as a number', 422, 'subscription[interval_length][value]=1', FORM),
    create('form: conflicting structure', 400, 'subscription[a]=1&subscription[a][b]=2', FORM),
    create('form: only separators', 422, '=1&&&=&[]=&[', FORM),
    create('form: doubled brackets (read as Rack reads them)', 422, 'subscription[[interval_length]]=0', FORM),
    create('form: line item without a subscribable', 422, 'subscription[interval_length]=1&subscription[line_items_attributes][][quantity]=1', FORM),
    create('form: __proto__ keys', 422, 'subscription[interval_length]=1&subscription[__proto__][x]=1&subscription[interval_units]=eon', FORM),
    create('form: 5,000 keys', 422, Array.from({ length: 5_000 }, (_, i) => `k${i}=${i}`).join('&'), FORM),
    create('form: 2,000 nested keys', 422, Array.from({ length: 2_000 }, (_, i) => `subscription[k${i}][x]=${i}`).join('&'), FORM),
    create('JSON sent as a form', 422, sub('"interval_length": 1'), FORM),
    // Media types
    create('multipart', 415, '--x\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--x--', 'multipart/form-data; boundary=x'),
    create('no usable type', 415, sub('"interval_length": 1'), ';;;'),
    // Odd ids: 404
    ...['1e3', '-1', '01', '%00', '%ff', '%', '..%2f..%2f', '1%2f2', '9007199254740993', '1'.repeat(1000), '%E2%82', '0', 'NaN', '%20%20'].flatMap((id): Case[] => [
      { name: `GET subscription ${id.slice(0, 20)}`, method: 'GET', path: `/api/v1/subscriptions/${id}`, status: 404 },
      { name: `PATCH line item ${id.slice(0, 20)}`, method: 'PATCH', path: `/api/v1/line_items/${id}`, status: 404, type: JSON_TYPE, body: '{"quantity": -1}' },
    ]),
    // Record routes with bad bodies
    { name: 'update with a number as the root', method: 'PATCH', path: s, status: 422, type: JSON_TYPE, body: '7' },
    { name: 'update with a huge line item id', method: 'PATCH', path: s, status: 404, type: JSON_TYPE, body: sub('"line_items_attributes": [{"id": 99999999999999999999, "quantity": 1}]') },
    { name: 'update with an SQL line item id', method: 'PATCH', path: s, status: 404, type: JSON_TYPE, body: sub('"line_items_attributes": [{"id": "1 OR 1=1", "_destroy": "1"}]') },
    { name: 'line item with quantity 1e400', method: 'PATCH', path: li, status: 422, type: JSON_TYPE, body: '{"subscription_line_item": {"quantity": 1e400}}' },
    { name: 'line item with an object quantity', method: 'PATCH', path: li, status: 422, type: JSON_TYPE, body: '{"subscription_line_item": {"quantity": {"a": 1}}}' },
    { name: 'pause with a broken date', method: 'POST', path: `${s}/pause`, status: 422, type: JSON_TYPE, body: '{"subscription": {"actionable_date": "2026-02-31"}}' },
    // Headers
    { name: 'a 10 KB key', method: 'GET', path: '/api/v1/subscriptions', status: 401, key: 'k'.repeat(10_000) },
    { name: 'a key with odd characters', method: 'GET', path: '/api/v1/subscriptions', status: 401, key: "'; DROP TABLE api_keys;--" },
    { name: 'Accept-Language nonsense', method: 'POST', path: '/api/v1/subscriptions', status: 422, type: JSON_TYPE, body: sub('"interval_length": -1'), headers: { 'accept-language': ';q=abc,,,*;q=-1,es;q=,de;q=1.5' } },
    { name: 'a 300-character Idempotency-Key', method: 'POST', path: '/api/v1/subscriptions', status: 422, type: JSON_TYPE, body: sub('"interval_length": 1'), headers: { 'idempotency-key': 'i'.repeat(300) } },
    // The admin API
    { name: 'admin: email as an array', method: 'POST', path: '/admin/api/v1/users', status: 422, key: ADMIN_TOKEN, type: JSON_TYPE, body: '{"user": {"email": ["a@b.c"]}}' },
    { name: 'admin: a 300-character email', method: 'POST', path: '/admin/api/v1/users', status: 422, key: ADMIN_TOKEN, type: JSON_TYPE, body: JSON.stringify({ user: { email: `${'x'.repeat(300)}@example.com` } }) },
    { name: 'admin: payment source of nonsense', method: 'POST', path: '/admin/api/v1/payment_sources', status: 422, key: ADMIN_TOKEN, type: JSON_TYPE, body: '{"payment_source": {"user_id": "1e3", "payment_method_id": -1, "month": 1e400, "year": [2030]}}' },
    { name: 'admin: subscribable of the wrong types', method: 'POST', path: '/admin/api/v1/subscribables', status: 422, key: ADMIN_TOKEN, type: JSON_TYPE, body: '{"subscribable": {"sku": {}, "name": [], "subscribable": "maybe"}}' },
    { name: 'admin: imported key of the wrong type', method: 'POST', path: `/admin/api/v1/users/${alice.id}/api_keys`, status: 422, key: ADMIN_TOKEN, type: JSON_TYPE, body: '{"api_key": {"key": 12345678901234567890}}' },
    { name: 'admin: subscription 1e3', method: 'GET', path: '/admin/api/v1/subscriptions/1e3', status: 404, key: ADMIN_TOKEN },
    { name: 'admin: api key -1', method: 'DELETE', path: '/admin/api/v1/api_keys/-1', status: 404, key: ADMIN_TOKEN },
  ]
}

test('at least 50 malformed requests: each gets its 4xx, nothing is logged as an error, the server lives on', async () => {
  const all = cases()
  assert.ok(all.length >= 50, `only ${all.length} cases`)
  const tablesBefore = await Promise.all(['users', 'api_keys', 'subscriptions', 'line_items', 'subscribables', 'payment_methods', 'payment_sources'].map((t) => countRows(server.store, t)))
  const wrong: string[] = []
  for (const c of all) {
    const res = await send(c)
    if (res.status !== c.status) wrong.push(`${c.name}: ${res.status} ${res.text.slice(0, 200)}`)
    else if (res.type !== 'application/json; charset=utf-8' || typeof JSON.parse(res.text) !== 'object') wrong.push(`${c.name}: not JSON`)
  }
  assert.ok(all.every((c) => c.status >= 400 && c.status < 500))
  assert.deepEqual(wrong, [])
  assert.deepEqual(server.errors, [])
  // Nothing was created or dropped by any of them.
  const tablesAfter = await Promise.all(['users', 'api_keys', 'subscriptions', 'line_items', 'subscribables', 'payment_methods', 'payment_sources'].map((t) => countRows(server.store, t)))
  assert.deepEqual(tablesAfter, tablesBefore)
  const alive = await server.request('GET', `/api/v1/subscriptions/${subId}`, { key: alice.key })
  assert.equal(alive.status, 200)
  assert.equal(alive.body.line_items.length, 1)
})

test('junk in query strings never breaks a list', async () => {
  for (const query of ['?page=%ff&per_page=%00', '?page[]=1&per_page[a]=2', '?state[]=active', '?state=%ff%fe', `?page=${'9'.repeat(500)}`, '?&&&=&', '?page=1&page=2&per_page=5&per_page=abc']) {
    const res = await server.request('GET', `/api/v1/subscriptions${query}`, { key: alice.key })
    assert.equal(res.status, 200, query)
    assert.ok(Array.isArray(res.body.subscriptions), query)
  }
  for (const query of ['?after=-1&limit=abc', '?after=1e3&limit=-5', '?state[]=x&user_id=1e3&actionable_before=2026-02-30', `?after=${'9'.repeat(400)}`, '?type=%00&after=%ff']) {
    for (const path of ['/admin/api/v1/subscriptions', '/admin/api/v1/users', '/admin/api/v1/events', '/admin/api/v1/payment_sources']) {
      const res = await server.request('GET', `${path}${query}`, { key: ADMIN_TOKEN })
      // The admin API is strict (C13): a page, or a 422 naming the bad parameters (test/admin/strict-query.test.ts).
      if (res.status === 422) assert.ok(Object.values(res.body).every(Array.isArray), `${path}${query}`)
      else assert.deepEqual([res.status, 'next_after' in res.body], [200, true], `${path}${query}`)
    }
  }
  assert.deepEqual(server.errors, [])
})

test('requests broken at the HTTP level are refused with a 4xx and the server stays up', async () => {
  const answers = [
    await sendRaw('GARBAGE\r\n\r\n'),
    await sendRaw('GET /api/v1/subscriptions HTTP/1.1\r\nHost: x\r\nBad Header Name: 1\r\n\r\n'),
    await sendRaw('POST /api/v1/subscriptions HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n'),
    await sendRaw('POST /api/v1/subscriptions HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n'),
    await sendRaw(Buffer.concat([Buffer.from('GET /api/v1/subscriptions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer '), Buffer.from([0x00, 0x01]), Buffer.from('\r\n\r\n')])),
    await sendRaw('POST /api/v1/subscriptions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nzz\r\n{}\r\n0\r\n\r\n'),
  ]
  for (const raw of answers) {
    assert.match(raw, /^HTTP\/1\.1 4\d\d /, raw.slice(0, 80))
    // Even these are JSON (C1): Node's own plain-text answer would break clients that parse every body.
    assert.match(raw, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i, raw.slice(0, 200))
    assert.equal(typeof JSON.parse(raw.slice(raw.indexOf('\r\n\r\n') + 4)).error, 'string')
  }
  assert.deepEqual(server.errors, [])
  const alive = await server.request('GET', '/api/v1/subscriptions', { key: alice.key })
  assert.equal(alive.status, 200)
})
