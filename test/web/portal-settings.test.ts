/** C17: the customer sets their own e-mail settings in the portal, with the admin API's rules. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, seedUser, snapshot, startTestServer } from '../helpers/server.ts'
import { asPortal, signIn } from './portal-client.ts'

test('the portal shows the customer\'s e-mail settings and changes them, CSRF token required; a locale not in the list is C17\'s 422 in the page\'s language', async (t) => {
  const server = await startTestServer(t, { REPLENISH_DEFAULT_LOCALE: 'de' })
  const user = await seedUser(server.store)
  const signed = await signIn(server, user.id)
  const session = await server.request('GET', '/portal/api/session', { headers: asPortal(signed, false) })
  assert.deepEqual([session.body.user.locale, session.body.user.email_notifications], ['de', true], 'the default language until they choose one')

  const patch = (json: unknown, headers = asPortal(signed)) => server.request('PATCH', '/portal/api/settings', { headers, json })
  const before = await snapshot(server.store)
  assert.equal((await patch({ settings: { email_notifications: false } }, asPortal(signed, false))).status, 403)
  const wrong = await patch({ settings: { locale: 'it' } }, { ...asPortal(signed), 'accept-language': 'es' })
  assert.deepEqual([wrong.status, wrong.body], [422, { locale: ['no está incluido en la lista'] }])
  assert.equal(await snapshot(server.store), before, 'nothing changed')

  const saved = await patch({ settings: { email_notifications: false, locale: 'fr' } })
  assert.deepEqual([saved.status, saved.body], [200, { locale: 'fr', email_notifications: false }])
  const shown = await server.request('GET', `/admin/api/v1/users/${user.id}`, { key: ADMIN_TOKEN })
  assert.deepEqual([shown.body.locale, shown.body.email_notifications], ['fr', false])
  assert.deepEqual((await patch({ settings: { email_notifications: true } })).body, { locale: 'fr', email_notifications: true }, 'a field left out keeps its value')
})
