/**
 * C17: users carry `locale` (en, es, fr, de; the service's default while they have none) and
 * `email_notifications` (default true), set by the admin API's create and PATCH and by import.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, snapshot, startTestServer } from '../helpers/server.ts'

test('create and PATCH set them; null goes back to the default language; a locale not in the list is 422, and changes nothing', async (t) => {
  const server = await startTestServer(t, { REPLENISH_DEFAULT_LOCALE: 'es' })
  const admin = (method: string, path: string, json?: unknown) => server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
  const plain = await admin('POST', '/users', { user: { email: 'a@example.com' } })
  assert.deepEqual([plain.body.locale, plain.body.email_notifications], ['es', true], 'REPLENISH_DEFAULT_LOCALE')
  const chosen = await admin('POST', '/users', { user: { email: 'b@example.com', locale: 'de', email_notifications: false } })
  assert.deepEqual([chosen.status, chosen.body.locale, chosen.body.email_notifications], [201, 'de', false])
  const form = await server.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, form: 'user[email]=c%40example.com&user[locale]=fr&user[email_notifications]=0' })
  assert.deepEqual([form.status, form.body.locale, form.body.email_notifications], [201, 'fr', false])

  for (const locale of ['it', 'EN', 'en-US', 3, true]) {
    const res = await admin('POST', '/users', { user: { email: 'd@example.com', locale } })
    assert.deepEqual([res.status, res.body], [422, { locale: ['is not included in the list'] }], String(locale))
  }
  const before = await snapshot(server.store)
  const refused = await admin('PATCH', `/users/${chosen.body.id}`, { user: { locale: 'xx', email_notifications: 'maybe' } })
  assert.deepEqual([refused.status, refused.body], [422, { locale: ['is not included in the list'], email_notifications: ['is not included in the list'] }])
  assert.equal(await snapshot(server.store), before)

  const patched = await admin('PATCH', `/users/${chosen.body.id}`, { user: { email_notifications: true } })
  assert.deepEqual([patched.body.locale, patched.body.email_notifications], ['de', true], 'a field left out keeps its value')
  assert.notEqual(patched.body.updated_at, chosen.body.updated_at)
  const reset = await admin('PATCH', `/users/${chosen.body.id}`, { user: { locale: null } })
  assert.equal(reset.body.locale, 'es')
  assert.equal((await server.store.accounts.findUser(chosen.body.id))?.locale, null, 'stored as none of their own: a new default applies to them')
  const same = await admin('PATCH', `/users/${chosen.body.id}`, { user: { locale: null, email_notifications: true } })
  assert.equal(same.body.updated_at, reset.body.updated_at, 'nothing changed, nothing written')
})

test('import brings a user\'s locale and email_notifications; absent, the defaults; a locale not in the list refuses the line', async (t) => {
  const server = await startTestServer(t)
  const lines = [
    { type: 'user', id: 10, email: 'x@example.com', locale: 'fr', email_notifications: false },
    { type: 'user', id: 11, email: 'y@example.com' },
  ].map((l) => JSON.stringify(l)).join('\n')
  const res = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: lines, headers: { 'content-type': 'application/x-ndjson' } })
  assert.equal(res.status, 200, res.text)
  const show = async (id: number) => (await server.request('GET', `/admin/api/v1/users/${id}`, { key: ADMIN_TOKEN })).body
  assert.deepEqual([(await show(10)).locale, (await show(10)).email_notifications], ['fr', false])
  assert.deepEqual([(await show(11)).locale, (await show(11)).email_notifications], ['en', true])
  const again = await server.request('POST', '/admin/api/v1/imports', { key: ADMIN_TOKEN, raw: lines, headers: { 'content-type': 'application/x-ndjson' } })
  assert.equal(again.status, 200, 'the same file again changes nothing')
  assert.equal(again.body.users.present, 2)
  const bad = await server.request('POST', '/admin/api/v1/imports', {
    key: ADMIN_TOKEN, raw: JSON.stringify({ type: 'user', id: 12, email: 'z@example.com', locale: 'pt' }), headers: { 'content-type': 'application/x-ndjson' },
  })
  assert.equal(bad.status, 422)
  assert.deepEqual(bad.body.errors, { locale: ['is not included in the list'] })
})
