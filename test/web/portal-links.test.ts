/**
 * C14: POST /admin/api/v1/users/:id/portal_sessions makes a one-time link valid one hour; opening
 * it sets the session cookie and redirects to /portal/; a used, expired or unknown link is a 410
 * HTML page in the browser's language, never JSON.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { ADMIN_TOKEN, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { countRows, testSql } from '../helpers/rows.ts'
import { newLink, openLink } from './portal-client.ts'

let server: TestServer

before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

const LINK = /^http:\/\/127\.0\.0\.1:\d+\/portal\/sessions\/rplp_[A-Za-z0-9_-]{43}$/

test('neither the link nor the session cookie reaches the access log or an error line', async () => {
  const user = await seedUser(server.store)
  const url = await newLink(server, user.id)
  const token = url.split('/').pop() as string
  const opened = await openLink(url)
  const cookie = opened.headers.get('set-cookie') ?? ''
  const session = /replenish_portal=([^;]+)/.exec(cookie)?.[1] as string
  assert.ok(session)
  await server.request('GET', '/portal/api/session', { headers: { cookie: `replenish_portal=${session}` } })
  await openLink(url) // used: 410
  const logged = JSON.stringify([server.log, server.errors])
  assert.ok(server.log.some((e) => e.route === '/portal/sessions/:token'))
  assert.equal(logged.includes(token), false)
  assert.equal(logged.includes(session), false)
})

describe('making a link (admin API)', () => {
  test('201 {url, expires_at}: the url on the Host the request came to, valid for one hour', async () => {
    const user = await seedUser(server.store)
    const before = Date.now()
    const res = await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: ADMIN_TOKEN, json: { portal_session: {} } })
    assert.equal(res.status, 201)
    assert.deepEqual(Object.keys(res.body).sort(), ['expires_at', 'url'])
    assert.match(res.body.url, LINK)
    assert.ok(res.body.url.startsWith(server.url))
    const ttl = Date.parse(res.body.expires_at) - before
    assert.ok(ttl >= 3_600_000 - 5_000 && ttl <= 3_600_000 + 5_000, `expires in ${ttl} ms`)
  })

  test('an empty body is allowed; the token is stored only as a hash', async () => {
    const user = await seedUser(server.store)
    const res = await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: ADMIN_TOKEN })
    assert.equal(res.status, 201)
    const token = (res.body.url as string).split('/').pop() as string
    const rows = JSON.stringify(await testSql(server.store).all('SELECT * FROM portal_links'))
    assert.ok(!rows.includes(token), 'no link row holds the token')
  })

  test('REPLENISH_PUBLIC_URL is the base of the link, whatever the Host', async (t) => {
    const other = await startTestServer(t, { REPLENISH_PUBLIC_URL: 'https://portal.shop.example/' })
    const user = await seedUser(other.store)
    const url = await newLink(other, user.id)
    assert.match(url, /^https:\/\/portal\.shop\.example\/portal\/sessions\/rplp_[A-Za-z0-9_-]{43}$/)
  })

  test('X-Forwarded-Proto counts only behind a trusted proxy', async (t) => {
    const user = await seedUser(server.store)
    // node:http, not fetch: fetch does not let a caller set Host.
    const make = (s: TestServer, id: number): Promise<string> => new Promise((resolve, reject) => {
      const req = http.request(`${s.url}/admin/api/v1/users/${id}/portal_sessions`, {
        method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'x-forwarded-proto': 'https', host: 'shop.example' },
      }, (res) => {
        let text = ''
        res.on('data', (chunk: Buffer) => { text += chunk.toString() })
        res.on('end', () => resolve(JSON.parse(text).url))
      })
      req.on('error', reject)
      req.end()
    })
    assert.match(await make(server, user.id), /^http:\/\/shop\.example\/portal\//)
    const proxied = await startTestServer(t, { REPLENISH_TRUST_PROXY: '1' })
    const proxiedUser = await seedUser(proxied.store)
    assert.match(await make(proxied, proxiedUser.id), /^https:\/\/shop\.example\/portal\//)
  })

  test('return_url must be an http(s) URL: javascript: and relative ones are 422', async () => {
    const user = await seedUser(server.store)
    for (const bad of ['javascript:alert(1)', '/account', 'ftp://shop.example/']) {
      const res = await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: ADMIN_TOKEN, json: { portal_session: { return_url: bad } } })
      assert.equal(res.status, 422, bad)
      assert.deepEqual(res.body, { return_url: ['is invalid'] })
    }
    assert.equal((await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: ADMIN_TOKEN, json: { portal_session: { return_url: 'https://shop.example/account' } } })).status, 201)
  })

  test('an unknown user is 404; no token 401; a read token 403', async () => {
    assert.equal((await server.request('POST', '/admin/api/v1/users/999999/portal_sessions', { key: ADMIN_TOKEN })).status, 404)
    const user = await seedUser(server.store)
    assert.equal((await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`)).status, 401)
    const read = await server.request('POST', '/admin/api/v1/admin_tokens', { key: ADMIN_TOKEN, json: { admin_token: { scope: 'read' } } })
    const res = await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: read.body.token })
    assert.equal(res.status, 403)
    assert.deepEqual(res.body, { error: "This token's scope does not allow this request." })
  })

  test('a customer API key cannot make a link', async () => {
    const user = await seedUser(server.store)
    const res = await server.request('POST', `/admin/api/v1/users/${user.id}/portal_sessions`, { key: user.key })
    assert.equal(res.status, 401)
  })
})

describe('opening a link', () => {
  test('303 to /portal/ with the session cookie: Path=/, HttpOnly, SameSite=Strict, no Secure over plain http', async () => {
    const user = await seedUser(server.store)
    const res = await openLink(await newLink(server, user.id))
    assert.equal(res.status, 303)
    assert.equal(res.headers.get('location'), '/portal/')
    assert.match(res.headers.get('set-cookie') ?? '', /^replenish_portal=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/)
    assert.equal(res.headers.get('x-frame-options'), 'DENY')
  })

  test('over https (a trusted proxy says so) the cookie is Secure too', async (t) => {
    const proxied = await startTestServer(t, { REPLENISH_TRUST_PROXY: '1' })
    const user = await seedUser(proxied.store)
    const res = await openLink(await newLink(proxied, user.id), { 'x-forwarded-proto': 'https' })
    assert.equal(res.status, 303)
    assert.match(res.headers.get('set-cookie') ?? '', /; HttpOnly; SameSite=Strict; Secure$/)
  })

  test('the session id is stored only as a hash', async () => {
    const user = await seedUser(server.store)
    const res = await openLink(await newLink(server, user.id))
    const id = /replenish_portal=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')?.[1] as string
    const rows = JSON.stringify(await testSql(server.store).all('SELECT * FROM portal_sessions'))
    assert.ok(id.length > 0 && !rows.includes(id))
  })

  test('a used link is 410: an HTML page, localised, with the page headers, and no cookie', async () => {
    const user = await seedUser(server.store)
    const url = await newLink(server, user.id)
    assert.equal((await openLink(url)).status, 303)
    const again = await openLink(url, { 'accept-language': 'es-ES,es;q=0.9' })
    assert.equal(again.status, 410)
    assert.equal(again.headers.get('content-type'), 'text/html; charset=utf-8')
    assert.equal(again.headers.get('set-cookie'), null)
    assert.ok(again.headers.get('content-security-policy')?.includes("script-src 'self'"))
    const html = await again.text()
    assert.match(html, /^<!doctype html>/)
    assert.match(html, /<html lang="es">/)
    assert.match(html, /<h1>Este enlace ya no se puede usar<\/h1>/)
    assert.doesNotMatch(html, /<script/)
    assert.match(html, /<link rel="stylesheet" href="\/assets\/portal\.css\?v=[0-9a-f]{16}">/)
  })

  test('an expired link is 410 (in German for a German browser) and makes no session', async () => {
    const user = await seedUser(server.store)
    const url = await newLink(server, user.id)
    const token = url.split('/').pop() as string
    const sessions = await countRows(server.store, 'portal_sessions')
    await testSql(server.store).run("UPDATE portal_links SET expires_at = '2000-01-01T00:00:00.000Z' WHERE token_hash = ?",
      (await import('../../src/api/kit/auth.ts')).sha256(token))
    const res = await openLink(url, { 'accept-language': 'de' })
    assert.equal(res.status, 410)
    assert.match(await res.text(), /Dieser Link kann nicht mehr verwendet werden/)
    assert.equal(await countRows(server.store, 'portal_sessions'), sessions)
  })

  test('an unknown or malformed token is the same 410 page', async () => {
    for (const token of [`rplp_${'A'.repeat(43)}`, 'nonsense', 'rplp_%00']) {
      const res = await openLink(`${server.url}/portal/sessions/${token}`)
      assert.equal(res.status, 410, token)
      assert.match(await res.text(), /This link can no longer be used/)
    }
  })

  test("the 410 page links back (C18): to the spent link's return_url, else REPLENISH_SHOP_URL, else nowhere", async (t) => {
    const backLink = async (res: Response): Promise<string | undefined> => {
      assert.equal(res.status, 410)
      const html = await res.text()
      const links = [...html.matchAll(/<a class="button" href="([^"]*)">([^<]*)<\/a>/g)]
      assert.ok(links.length <= 1, html)
      if (links[0] !== undefined) assert.equal(links[0][2], 'Back to the shop')
      return links[0]?.[1]
    }
    const user = await seedUser(server.store)
    // Without REPLENISH_SHOP_URL: the link's return_url, escaped; a link without one, or an unknown token, offers none.
    const url = await newLink(server, user.id, { return_url: 'https://shop.example/account?a=1&b="2"' })
    await openLink(url)
    assert.equal(await backLink(await openLink(url)), 'https://shop.example/account?a=1&#38;b=&#34;2&#34;')
    const bare = await newLink(server, user.id)
    await openLink(bare)
    assert.equal(await backLink(await openLink(bare)), undefined)
    assert.equal(await backLink(await openLink(`${server.url}/portal/sessions/rplp_${'B'.repeat(43)}`)), undefined)

    const shop = await startTestServer(t, { REPLENISH_SHOP_URL: 'https://shop.example/' })
    const alice = await seedUser(shop.store)
    const withReturn = await newLink(shop, alice.id, { return_url: 'https://shop.example/me' })
    await openLink(withReturn)
    assert.equal(await backLink(await openLink(withReturn)), 'https://shop.example/me')
    const without = await newLink(shop, alice.id)
    await openLink(without)
    assert.equal(await backLink(await openLink(without)), 'https://shop.example/')
    for (const token of [`rplp_${'C'.repeat(43)}`, 'nonsense']) assert.equal(await backLink(await openLink(`${shop.url}/portal/sessions/${token}`)), 'https://shop.example/')
    // An expired link leads back too, in the browser's language.
    const expired = await newLink(shop, alice.id, { return_url: 'https://shop.example/me' })
    await testSql(shop.store).run("UPDATE portal_links SET expires_at = '2000-01-01T00:00:00.000Z' WHERE token_hash = ?",
      (await import('../../src/api/kit/auth.ts')).sha256(expired.split('/').pop() as string))
    const es = await openLink(expired, { 'accept-language': 'es' })
    assert.match(await es.clone().text(), />Volver a la tienda<\/a>/)
    assert.equal((await es.text()).includes('href="https://shop.example/me"'), true)
    // An erased customer's link shows nothing of theirs: the shop's page, not their return_url.
    const bob = await seedUser(shop.store)
    const bobs = await newLink(shop, bob.id, { return_url: 'https://shop.example/bob' })
    assert.equal((await shop.request('POST', `/admin/api/v1/users/${bob.id}/erase`, { key: ADMIN_TOKEN })).status < 300, true)
    assert.equal(await backLink(await openLink(bobs)), 'https://shop.example/')
  })

  test('two opens of one link at once make one session', async () => {
    const user = await seedUser(server.store)
    const url = await newLink(server, user.id)
    const statuses = (await Promise.all([openLink(url), openLink(url), openLink(url)])).map((r) => r.status).sort()
    assert.deepEqual(statuses, [303, 410, 410])
  })
})
