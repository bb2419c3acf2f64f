/**
 * C14: the portal's session cookie opens the customer API as its user, with C2's ownership rule
 * unchanged; every write with the cookie needs the session's CSRF token; sessions end after 12 h
 * idle or on sign-out.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, createSubscription, seedSubscribable, seedUser, snapshot, startTestServer, type TestServer } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import { asPortal, signIn } from './portal-client.ts'

const CSRF_REFUSED = { error: 'Invalid or missing CSRF token.' }
const SESSION_ENDED = { error: 'Your portal session has ended: open a new link from the shop.' }
const NOT_AUTHORIZED = { error: 'You are not authorized to perform that action.' }

let server: TestServer

before(async () => {
  server = await startTestServer(undefined, { REPLENISH_TODAY: '2026-11-25' })
})
after(() => server.close())

async function customerWithSubscription(): Promise<{ user: { id: number; key: string }; sub: any }> {
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const sub = await createSubscription(server, user.key, { line_items_attributes: [{ subscribable_id: item, quantity: 2 }] })
  return { user, sub }
}

describe('the cookie opens the customer API as its user', () => {
  test('GET /api/v1/subscriptions with the cookie lists exactly what the API key lists', async () => {
    const { user } = await customerWithSubscription()
    await customerWithSubscription() // someone else's
    const signed = await signIn(server, user.id)
    const byCookie = await server.request('GET', '/api/v1/subscriptions', { headers: asPortal(signed, false) })
    const byKey = await server.request('GET', '/api/v1/subscriptions', { key: user.key })
    assert.equal(byCookie.status, 200)
    assert.deepEqual(byCookie.body, byKey.body)
    assert.equal(byCookie.body.total_count, 1)
  })

  test('GET /portal/api/session: the user, the CSRF token, today and the catalogue', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const res = await server.request('GET', '/portal/api/session', { headers: asPortal(signed, false) })
    assert.equal(res.status, 200)
    assert.equal(res.body.user.id, user.id)
    assert.match(res.body.user.email, /@example\.com$/)
    assert.equal(res.body.csrf_token, signed.csrf)
    assert.equal(res.body.today, '2026-11-25')
    assert.deepEqual(res.body.shop, { name: 'replenish', logo_url: null, accent: '#1d4ed8' })
    assert.ok(res.body.catalogue.length >= 1)
    assert.deepEqual(Object.keys(res.body.catalogue[0]).sort(), ['id', 'name', 'sku', 'subscribable'])
  })

  test("another customer's subscription is the API's 401 and shows nothing of it; an unknown id is 404", async () => {
    const { user } = await customerWithSubscription()
    const { sub: theirs } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const before = await snapshot(server.store)
    for (const [method, path] of [
      ['GET', `/api/v1/subscriptions/${theirs.id}`], ['GET', `/api/v1/subscriptions/${theirs.id}/events`],
      ['POST', `/api/v1/subscriptions/${theirs.id}/skip`], ['POST', `/api/v1/subscriptions/${theirs.id}/cancel`],
      ['PATCH', `/api/v1/line_items/${theirs.line_items[0].id}`],
    ] as const) {
      const res = await server.request(method, path, { headers: asPortal(signed), ...(method === 'PATCH' ? { json: { quantity: 5 } } : {}) })
      assert.equal(res.status, 401, `${method} ${path}`)
      assert.deepEqual(res.body, NOT_AUTHORIZED)
    }
    assert.equal(await snapshot(server.store), before)
    const missing = await server.request('GET', '/api/v1/subscriptions/999999', { headers: asPortal(signed, false) })
    assert.equal(missing.status, 404)
  })

  test('an Authorization header wins: the cookie is not looked at, even beside a bad key', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const res = await server.request('GET', '/api/v1/subscriptions', { key: 'rpl_not_a_key_at_all_000000', headers: asPortal(signed, false) })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { error: 'Invalid API key specified.' })
  })

  test('the cookie never opens the admin API', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const res = await server.request('GET', '/admin/api/v1/users', { headers: asPortal(signed) })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { error: 'You must specify an admin token.' })
  })

  test('no portal cookie among other cookies: "You must specify an API key."', async () => {
    const res = await server.request('GET', '/api/v1/subscriptions', { headers: { cookie: 'theme=dark; other=1' } })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, { error: 'You must specify an API key.' })
  })
})

describe('CSRF: a write with the cookie needs the session token', () => {
  test('a cross-site-style POST (cookie, form body, no X-CSRF-Token) is 403 and changes nothing', async () => {
    const { user, sub } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const before = await snapshot(server.store)
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, {
      headers: { cookie: signed.cookie, origin: 'http://evil.example' }, form: 'subscription[actionable_date]=2027-01-01',
    })
    assert.equal(res.status, 403)
    assert.deepEqual(res.body, CSRF_REFUSED)
    assert.equal(await snapshot(server.store), before)
  })

  test('a wrong or empty token is refused on every write method; the right one is accepted', async () => {
    const { user, sub } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const item = sub.line_items[0].id
    for (const token of ['', 'x', `${signed.csrf}x`, signed.csrf.slice(1)]) {
      for (const [method, path] of [['POST', `/api/v1/subscriptions/${sub.id}/skip`], ['PATCH', `/api/v1/line_items/${item}`], ['PUT', `/api/v1/line_items/${item}`], ['DELETE', `/api/v1/line_items/${item}`]] as const) {
        const res = await server.request(method, path, { headers: { cookie: signed.cookie, 'x-csrf-token': token }, ...(method === 'DELETE' ? {} : { json: { quantity: 3 } }) })
        assert.equal(res.status, 403, `${method} ${path} with ${JSON.stringify(token)}`)
        assert.deepEqual(res.body, CSRF_REFUSED)
      }
    }
    const ok = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { headers: asPortal(signed) })
    assert.equal(ok.status, 200)
    assert.equal(ok.body.skip_count, 1)
  })

  test("one session's token does not work with another session's cookie", async () => {
    const { user, sub } = await customerWithSubscription()
    const first = await signIn(server, user.id)
    const second = await signIn(server, user.id)
    assert.notEqual(first.csrf, second.csrf)
    const res = await server.request('POST', `/api/v1/subscriptions/${sub.id}/skip`, { headers: { cookie: first.cookie, 'x-csrf-token': second.csrf } })
    assert.equal(res.status, 403)
  })

  test('reads need no token', async () => {
    const { user, sub } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    assert.equal((await server.request('GET', `/api/v1/subscriptions/${sub.id}`, { headers: asPortal(signed, false) })).status, 200)
    assert.equal((await server.request('HEAD', `/api/v1/subscriptions/${sub.id}`, { headers: asPortal(signed, false) })).status, 200)
  })
})

describe('the session ends', () => {
  test('sign out: refused without the token; with it, 200, the cookie cleared and the session gone', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const refused = await server.request('POST', '/portal/api/sign_out', { headers: asPortal(signed, false) })
    assert.equal(refused.status, 403)
    assert.deepEqual(refused.body, CSRF_REFUSED)
    const res = await server.request('POST', '/portal/api/sign_out', { headers: asPortal(signed) })
    assert.equal(res.status, 200)
    assert.equal(res.headers.get('set-cookie'), 'replenish_portal=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict')
    const after = await server.request('GET', '/api/v1/subscriptions', { headers: asPortal(signed, false) })
    assert.equal(after.status, 401)
    assert.deepEqual(after.body, SESSION_ENDED)
  })

  test('after 12 h without use the session is refused', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    await testSql(server.store).run("UPDATE portal_sessions SET expires_at = '2000-01-01T00:00:00.000Z'")
    const res = await server.request('GET', '/portal/api/session', { headers: asPortal(signed, false) })
    assert.equal(res.status, 401)
    assert.deepEqual(res.body, SESSION_ENDED)
  })

  test('a use a minute or more after the last one moves the idle expiry on to 12 h from now', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const sql = testSql(server.store)
    const soon = new Date(Date.now() + 60_000).toISOString()
    await sql.run('UPDATE portal_sessions SET expires_at = ?, touched_at = ? WHERE user_id = ?', soon, new Date(Date.now() - 61_000).toISOString(), user.id)
    const before = Date.now()
    assert.equal((await server.request('GET', '/api/v1/subscriptions', { headers: asPortal(signed, false) })).status, 200)
    await server.settled() // the touch is written in a unit of its own, not awaited by the request
    const row = (await sql.get('SELECT expires_at FROM portal_sessions WHERE user_id = ?', user.id)) as { expires_at: string }
    assert.ok(Date.parse(row.expires_at) >= before + 12 * 3_600_000 - 1_000, row.expires_at)
  })

  test('a use within the minute writes nothing', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const before = await snapshot(server.store)
    assert.equal((await server.request('GET', '/api/v1/subscriptions', { headers: asPortal(signed, false) })).status, 200)
    await server.settled()
    assert.equal(await snapshot(server.store), before)
  })

  test('an erased user (email null) has no portal: neither the session nor a link works', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const { newLink, openLink } = await import('./portal-client.ts')
    const link = await newLink(server, user.id)
    await testSql(server.store).run('UPDATE users SET email = NULL WHERE id = ?', user.id)
    assert.equal((await server.request('GET', '/portal/api/session', { headers: asPortal(signed, false) })).status, 401)
    assert.equal((await openLink(link)).status, 410)
  })

  test('erasing a user through the admin API ends their portal sessions and links', async () => {
    const { user } = await customerWithSubscription()
    const signed = await signIn(server, user.id)
    const { newLink } = await import('./portal-client.ts')
    await newLink(server, user.id)
    const count = async (table: string): Promise<number> =>
      Number((await testSql(server.store).get(`SELECT count(*) AS n FROM ${table} WHERE user_id = ?`, user.id))?.['n'])
    assert.ok((await count('portal_sessions')) > 0 && (await count('portal_links')) > 0)
    const erased = await server.request('POST', `/admin/api/v1/users/${user.id}/erase`, { key: ADMIN_TOKEN })
    assert.equal(erased.status, 200, erased.text)
    assert.deepEqual([await count('portal_sessions'), await count('portal_links')], [0, 0])
    assert.equal((await server.request('GET', '/portal/api/session', { headers: asPortal(signed, false) })).status, 401)
  })
})
