/**
 * Issue 28 item 3 (C18 "Exports"): `GET /admin/api/v1/exports/{subscriptions,users,installments}.csv`
 * — RFC 4180 with a header row, every matching row in id order across the store's batches, the
 * list filters read as strictly as the lists read them, dates as C3, the formula-injection guard,
 * `text/csv; charset=utf-8` with `Content-Disposition: attachment`, scopes admin and read, and
 * the stream compressed when the client accepts it. On both backends.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import zlib from 'node:zlib'
import type { Store } from '../../src/store/api.ts'
import { EXPORT_BATCH } from '../../src/admin/exports.ts'
import { ADMIN_TOKEN, createSubscription, seedPayment, seedSubscribable, seedUser, startTestServer, type TestResponse, type TestServer } from '../helpers/server.ts'
import { bulkUsers } from '../helpers/rows.ts'
import { rawGet } from '../helpers/raw-http.ts'
import { csvObjects, parseCsv } from '../helpers/csv.ts'
import { processAsOf } from '../processing/helpers.ts'

const A = '/admin/api/v1'
const TODAY = '2026-01-15'
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** An export, checked against the OpenAPI document like every answer of server.request. */
async function csv(server: TestServer, path: string, key = ADMIN_TOKEN): Promise<{ header: string[]; rows: Record<string, string>[]; text: string; res: TestResponse }> {
  const res = await server.request('GET', `${A}/exports/${path}`, { key })
  assert.equal(res.status, 200, `${path}: ${res.text}`)
  return { ...csvObjects(res.text), text: res.text, res }
}

async function subscribable(store: Store, sku: string, name: string): Promise<number> {
  return store.write(async (tx) => (await tx.catalog.createSubscribable({ sku, name, subscribable: true, discount_bp: 0, prices: new Map() })).id)
}

test('subscriptions.csv: the headers, then one record per subscription in id order, its fields, its owner and its items by name', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const owner = await seedUser(server.store)
  const email = (await server.store.accounts.findUser(owner.id))?.email
  await server.store.write((tx) => tx.accounts.updateUser(owner.id, email ?? null, 'shop-7', { locale: null, email_notifications: true }))
  const coffee = await subscribable(server.store, 'COF-1', 'Coffee, dark')
  const tea = await subscribable(server.store, 'TEA-1', 'Tea "Earl Grey"')
  const pay = await seedPayment(server.store, owner.id)
  const rich = await createSubscription(server, owner.key, {
    interval_units: 'week', interval_length: 2, end_date: '2027-01-01', payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
    line_items_attributes: [{ subscribable_id: tea, quantity: 3 }, { subscribable_id: coffee, quantity: 1 }],
  })
  const bare = await createSubscription(server, owner.key, {})
  await server.request('POST', `${A}/subscriptions/${bare.id}/pause`, { key: ADMIN_TOKEN })

  const { header, rows, res } = await csv(server, 'subscriptions.csv')
  assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8')
  assert.equal(res.headers.get('content-disposition'), `attachment; filename="subscriptions-${TODAY}.csv"`)
  assert.equal(res.headers.get('cache-control'), 'no-store')
  assert.ok(res.headers.get('x-request-id'))
  assert.deepEqual(header, [
    'id', 'user_id', 'user_email', 'user_external_id', 'state', 'paused', 'interval_length', 'interval_units', 'actionable_date', 'end_date',
    'skip_count', 'successive_skip_count', 'payment_method_id', 'payment_source_id', 'currency', 'subtotal', 'discount_total', 'total',
    'processing_state', 'items', 'created_at', 'updated_at',
  ])
  const shown = (await server.request('GET', `${A}/subscriptions/${bare.id}`, { key: ADMIN_TOKEN })).body
  assert.deepEqual(rows, [
    {
      id: String(rich.id), user_id: String(owner.id), user_email: email as string, user_external_id: 'shop-7', state: 'active', paused: 'false',
      interval_length: '2', interval_units: 'week', actionable_date: rich.actionable_date, end_date: '2027-01-01', skip_count: '0',
      successive_skip_count: '0', payment_method_id: String(pay.methodId), payment_source_id: String(pay.sourceId), currency: 'USD',
      subtotal: '', discount_total: '', total: '', processing_state: 'pending', items: '3 × Tea "Earl Grey"; 1 × Coffee, dark', created_at: rich.created_at, updated_at: rich.updated_at,
    },
    {
      id: String(bare.id), user_id: String(owner.id), user_email: email as string, user_external_id: 'shop-7', state: 'active', paused: 'true',
      interval_length: '1', interval_units: 'month', actionable_date: '', end_date: '', skip_count: '0', successive_skip_count: '0',
      payment_method_id: '', payment_source_id: '', currency: 'USD', subtotal: '0.00', discount_total: '0.00', total: '0.00', processing_state: 'pending', items: '', created_at: shown.created_at,
      updated_at: shown.updated_at,
    },
  ])
  assert.match(rows[0]?.['created_at'] ?? '', ISO_TIME)
})

test('the list filters apply, paused included; a bad one is the list\'s 422 (JSON) before anything is sent; limit is no parameter', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const bob = await seedUser(server.store)
  const a1 = await createSubscription(server, alice.key, {})
  const a2 = await createSubscription(server, alice.key, {})
  const b1 = await createSubscription(server, bob.key, {})
  await server.request('POST', `${A}/subscriptions/${a2.id}/pause`, { key: ADMIN_TOKEN })
  await server.request('POST', `${A}/subscriptions/${b1.id}/cancel`, { key: ADMIN_TOKEN })
  const ids = async (query: string): Promise<number[]> => (await csv(server, `subscriptions.csv?${query}`)).rows.map((r) => Number(r['id']))
  assert.deepEqual(await ids(''), [a1.id, a2.id, b1.id])
  assert.deepEqual(await ids(`user_id=${alice.id}`), [a1.id, a2.id])
  assert.deepEqual(await ids('state=canceled'), [b1.id])
  assert.deepEqual(await ids('paused=true'), [a2.id])
  assert.deepEqual(await ids('paused=false'), [a1.id, b1.id])
  assert.deepEqual(await ids(`paused=false&user_id=${alice.id}`), [a1.id])
  assert.deepEqual(await ids(`after=${a1.id}`), [a2.id, b1.id])
  assert.deepEqual(await ids('limit=1'), [a1.id, a2.id, b1.id])
  // Nothing matches: the header alone.
  assert.equal((await csv(server, 'subscriptions.csv?user_id=999999')).text.split('\r\n')[1], '')

  for (const [query, errors] of [
    ['paused=yes', { paused: ['is not included in the list'] }],
    ['state=paused&after=x', { after: ['is not a number'], state: ['is not included in the list'] }],
    ['user_id=0', { user_id: ['must be greater than 0'] }],
    ['actionable_before=2026-02-30', { actionable_before: ['is not a valid date'] }],
  ] as const) {
    const res = await server.request('GET', `${A}/exports/subscriptions.csv?${query}`, { key: ADMIN_TOKEN })
    assert.equal(res.status, 422, query)
    assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.deepEqual(res.body, errors, query)
  }
  const installments = await server.request('GET', `${A}/exports/installments.csv?due_after=soon`, { key: ADMIN_TOKEN })
  assert.deepEqual([installments.status, installments.body], [422, { due_after: ['is not a valid date'] }])
  const users = await server.request('GET', `${A}/exports/users.csv?email=%00`, { key: ADMIN_TOKEN })
  assert.deepEqual([users.status, users.body], [422, { email: ['must not contain a NUL character'] }])
})

test(`users.csv: every user across batches of ${EXPORT_BATCH}, in id order, from after=, with the search filters`, async (t) => {
  const server = await startTestServer(t)
  const n = EXPORT_BATCH * 2 + 345
  await bulkUsers(server.store, n, 'bulk', 'example.com')
  const all = await server.store.accounts.listUsers(0, n + 1)
  assert.equal(all.length, n)
  const { header, rows, text } = await csv(server, 'users.csv')
  assert.deepEqual(header, ['id', 'email', 'external_id', 'locale', 'email_notifications', 'created_at', 'updated_at'])
  assert.deepEqual(rows, all.map((u) => ({
    id: String(u.id), email: u.email, external_id: u.external_id, locale: 'en', email_notifications: 'true', created_at: u.created_at, updated_at: u.updated_at,
  })))
  assert.ok(text.endsWith('\r\n'))
  // Exactly a batch's worth after `after` (the last batch full, then an empty read).
  const from = (all[n - EXPORT_BATCH - 1] as { id: number }).id
  assert.deepEqual((await csv(server, `users.csv?after=${from}`)).rows.map((r) => Number(r['id'])), all.slice(n - EXPORT_BATCH).map((u) => u.id))
  assert.deepEqual((await csv(server, 'users.csv?q=BULK12')).rows.map((r) => r['email']),
    all.filter((u) => u.email?.startsWith('bulk12')).map((u) => u.email))
  assert.deepEqual((await csv(server, 'users.csv?email=bulk7@example.com')).rows.map((r) => r['email']), ['bulk7@example.com'])
})

test('installments.csv: due date, state, the customer, the items by name, attempts and the last outcome', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const item = await subscribable(server.store, 'BEANS', 'Beans')
  const sub = await createSubscription(server, alice.key, { actionable_date: '2026-01-20', interval_units: 'month', line_items_attributes: [{ subscribable_id: item, quantity: 2 }] })
  await processAsOf(server, '2026-01-21')
  await processAsOf(server, '2026-02-21')
  const listed = (await server.request('GET', `${A}/installments`, { key: ADMIN_TOKEN })).body.installments as any[]
  const first = listed[0]
  const outcome = await server.request('POST', `${A}/installments/${first.id}/outcome`, { key: ADMIN_TOKEN, json: { outcome: { result: 'fulfilled', order_reference: 'R-1', message: '=1+1' } } })
  assert.equal(outcome.status, 200, outcome.text)
  const email = (await server.store.accounts.findUser(alice.id))?.email as string
  const { header, rows } = await csv(server, 'installments.csv')
  assert.deepEqual(header, [
    'id', 'subscription_id', 'user_id', 'user_email', 'user_external_id', 'due_date', 'state', 'retry_at', 'items', 'payment_method_id',
    'payment_source_id', 'currency', 'subtotal', 'discount_total', 'total', 'attempts', 'last_result', 'last_order_reference', 'last_message', 'created_at', 'updated_at',
  ])
  assert.equal(rows.length, 2)
  const after = (await server.request('GET', `${A}/installments/${first.id}`, { key: ADMIN_TOKEN })).body
  assert.deepEqual(rows[0], {
    id: String(first.id), subscription_id: String(sub.id), user_id: String(alice.id), user_email: email, user_external_id: '', due_date: '2026-01-20',
    state: 'fulfilled', retry_at: '', items: '2 × Beans', payment_method_id: '', payment_source_id: '', currency: 'USD', subtotal: '', discount_total: '', total: '', attempts: '1',
    last_result: 'fulfilled', last_order_reference: 'R-1', last_message: "'=1+1", created_at: after.created_at, updated_at: after.updated_at,
  })
  assert.deepEqual([rows[1]?.['due_date'], rows[1]?.['state'], rows[1]?.['attempts'], rows[1]?.['last_result']], ['2026-02-20', 'pending', '0', ''])
  assert.deepEqual((await csv(server, 'installments.csv?state=pending')).rows.map((r) => r['due_date']), ['2026-02-20'])
  assert.deepEqual((await csv(server, `installments.csv?user_id=${alice.id}&due_before=2026-02-01`)).rows.map((r) => r['due_date']), ['2026-01-20'])
})

test("formula injection: a text cell beginning with =, +, -, @ (or a tab or CR) starts with '; quotes, commas and line breaks are quoted (RFC 4180)", async (t) => {
  const server = await startTestServer(t)
  const cases: [string, string][] = [
    ['=HYPERLINK("http://evil.example","x")', `'=HYPERLINK("http://evil.example","x")`],
    ['+1-555-0100', "'+1-555-0100"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['\tcmd', "'\tcmd"],
    ['a, "b"\r\nc', 'a, "b"\r\nc'],
    ['plain=fine', 'plain=fine'],
  ]
  for (const [i, [externalId]] of cases.entries()) {
    await server.store.write((tx) => tx.accounts.createUser(`u${i}@example.com`, externalId))
  }
  await server.store.write((tx) => tx.accounts.createUser('=cmd|x@example.com', null))
  const { rows, text } = await csv(server, 'users.csv')
  assert.deepEqual(rows.map((r) => r['external_id']), [...cases.map(([, shown]) => shown), ''])
  assert.equal(rows[cases.length]?.['email'], "'=cmd|x@example.com")
  // The raw text: a field with a quote, comma or line break is quoted, its quotes doubled.
  assert.ok(text.includes(`,"'=HYPERLINK(""http://evil.example"",""x"")",`), text)
  assert.ok(text.includes(',"a, ""b""\r\nc",'), text)
  // Ids are numbers: never guarded.
  assert.match(text.split('\r\n')[1] ?? '', /^\d+,/)
})

test('scopes admin and read may export; metrics may not (403), and no token is a 401, both as JSON', async (t) => {
  const server = await startTestServer(t)
  const token = async (scope: string): Promise<string> =>
    (await server.request('POST', `${A}/admin_tokens`, { key: ADMIN_TOKEN, json: { admin_token: { scope } } })).body.token
  for (const path of ['subscriptions.csv', 'users.csv', 'installments.csv']) {
    assert.deepEqual((await csv(server, path, await token('read'))).rows, [])
    const metrics = await server.request('GET', `${A}/exports/${path}`, { key: await token('metrics') })
    assert.deepEqual([metrics.status, metrics.body], [403, { error: "This token's scope does not allow this request." }])
    const none = await server.request('GET', `${A}/exports/${path}`)
    assert.deepEqual([none.status, none.body], [401, { error: 'You must specify an admin token.' }])
  }
})

test('the stream is compressed when the client accepts it (gzip, or br when preferred), chunked, with Vary; HEAD sends the headers only', async (t) => {
  const server = await startTestServer(t)
  await bulkUsers(server.store, 1500, 'zip', 'example.com')
  const get = (headers: Record<string, string>, method?: string) => rawGet(`${server.url}${A}/exports/users.csv`, { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, method)
  const plain = await get({})
  assert.equal(plain.status, 200)
  assert.equal(plain.headers['content-encoding'], undefined)
  assert.equal(plain.headers['transfer-encoding'], 'chunked')
  assert.equal(plain.headers['content-length'], undefined)
  assert.equal(plain.headers['vary'], 'Accept-Encoding')
  assert.equal(parseCsv(plain.bytes.toString('utf8')).length, 1501)

  const gzip = await get({ 'accept-encoding': 'gzip, deflate, br' })
  assert.equal(gzip.headers['content-encoding'], 'gzip')
  assert.equal(gzip.headers['vary'], 'Accept-Encoding')
  assert.ok(gzip.bytes.length < plain.bytes.length / 3, `${gzip.bytes.length} of ${plain.bytes.length}`)
  assert.equal(zlib.gunzipSync(gzip.bytes).toString('utf8'), plain.bytes.toString('utf8'))

  const br = await get({ 'accept-encoding': 'gzip;q=0.5, br' })
  assert.equal(br.headers['content-encoding'], 'br')
  assert.equal(zlib.brotliDecompressSync(br.bytes).toString('utf8'), plain.bytes.toString('utf8'))

  const head = await get({ 'accept-encoding': 'gzip' }, 'HEAD')
  assert.equal(head.status, 200)
  assert.equal(head.headers['content-type'], 'text/csv; charset=utf-8')
  assert.equal(head.headers['content-disposition'], gzip.headers['content-disposition'])
  assert.equal(head.headers['content-encoding'], 'gzip')
  assert.equal(head.bytes.length, 0)
})

test('money as C16 strings: a subscription\'s subtotal, discount_total and total after currency (now, from the catalog), an installment\'s frozen ones; empty when unpriced', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const alice = await seedUser(server.store)
  const beans = await seedSubscribable(server.store, { prices: { USD: '12.50', JPY: '1250' }, discount: 1000 })
  const unpriced = await seedSubscribable(server.store)
  const usd = await createSubscription(server, alice.key, { actionable_date: '2026-01-20', line_items_attributes: [{ subscribable_id: beans, quantity: 3 }] })
  const jpy = await createSubscription(server, alice.key, { currency: 'JPY', line_items_attributes: [{ subscribable_id: beans, quantity: 1 }] })
  const none = await createSubscription(server, alice.key, { line_items_attributes: [{ subscribable_id: unpriced, quantity: 1 }] })
  await processAsOf(server, '2026-01-21')

  const { header, rows } = await csv(server, 'subscriptions.csv')
  const at = header.indexOf('currency')
  assert.deepEqual(header.slice(at, at + 4), ['currency', 'subtotal', 'discount_total', 'total'])
  const money = (r: Record<string, string> | undefined): (string | undefined)[] => [r?.['currency'], r?.['subtotal'], r?.['discount_total'], r?.['total']]
  assert.deepEqual(rows.map(money), [['USD', '37.50', '3.75', '33.75'], ['JPY', '1250', '125', '1125'], ['USD', '', '', '']])
  for (const [i, sub] of [usd, jpy, none].entries()) {
    const shown = (await server.request('GET', `${A}/subscriptions/${sub.id}`, { key: ADMIN_TOKEN })).body
    assert.deepEqual(money(rows[i]), [shown.currency, shown.subtotal ?? '', shown.discount_total ?? '', shown.total ?? ''])
  }

  // The catalog's price changes; the installment keeps what it was made with.
  await server.request('PATCH', `${A}/subscribables/${beans}`, { key: ADMIN_TOKEN, json: { subscribable: { prices: { USD: '20.00' } } } })
  const installments = await csv(server, 'installments.csv')
  const from = installments.header.indexOf('currency')
  assert.deepEqual(installments.header.slice(from, from + 4), ['currency', 'subtotal', 'discount_total', 'total'])
  assert.deepEqual(installments.rows.map(money), [['USD', '37.50', '3.75', '33.75']])
  assert.equal((await csv(server, 'subscriptions.csv')).rows[0]?.['total'], '54.00')
})

test('users.csv: each user\'s locale (the service\'s default while they have none) and email_notifications, as the admin API shows them', async (t) => {
  const server = await startTestServer(t, { REPLENISH_DEFAULT_LOCALE: 'fr' })
  const plain = await seedUser(server.store)
  const set = await seedUser(server.store)
  const patched = await server.request('PATCH', `${A}/users/${set.id}`, { key: ADMIN_TOKEN, json: { user: { locale: 'de', email_notifications: false } } })
  assert.equal(patched.status, 200, patched.text)
  const { rows } = await csv(server, 'users.csv')
  for (const [i, id] of [plain.id, set.id].entries()) {
    const shown = (await server.request('GET', `${A}/users/${id}`, { key: ADMIN_TOKEN })).body
    assert.deepEqual([rows[i]?.['locale'], rows[i]?.['email_notifications']], [shown.locale, String(shown.email_notifications)])
  }
  assert.deepEqual(rows.map((r) => [r['locale'], r['email_notifications']]), [['fr', 'true'], ['de', 'false']])
})
