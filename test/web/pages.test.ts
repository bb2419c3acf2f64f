/**
 * C14: every page of the console carries the strict CSP and X-Frame-Options, has no inline
 * script, takes its language from Accept-Language and the shop's branding from the configuration.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { CONTENT_SECURITY_POLICY } from '../../src/web/page-headers.ts'
import { newLink, openLink } from './portal-client.ts'

const CSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

let server: TestServer

before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

function assertPageHeaders(res: Response, label: string): void {
  assert.equal(res.headers.get('content-security-policy'), CSP, label)
  assert.equal(res.headers.get('x-frame-options'), 'DENY', label)
  assert.equal(res.headers.get('x-content-type-options'), 'nosniff', label)
  assert.equal(res.headers.get('referrer-policy'), 'same-origin', label)
}

test('the policy is exactly the one docs/console.md states', () => {
  assert.equal(CONTENT_SECURITY_POLICY, CSP)
})

test('every page (/admin/, /portal/, the link redirect, the 410 page, /) carries CSP, X-Frame-Options, nosniff, Referrer-Policy', async () => {
  const user = await seedUser(server.store)
  const link = await newLink(server, user.id)
  const pages: [string, Response][] = [
    ['/admin/', await fetch(`${server.url}/admin/`)],
    ['/admin', await fetch(`${server.url}/admin`)],
    ['/portal/', await fetch(`${server.url}/portal/`)],
    ['link', await openLink(link)],
    ['used link', await openLink(link)],
    ['/', await fetch(`${server.url}/`, { redirect: 'manual' })],
  ]
  assert.deepEqual(pages.map(([label, res]) => [label, res.status]), [['/admin/', 200], ['/admin', 200], ['/portal/', 200], ['link', 303], ['used link', 410], ['/', 302]])
  for (const [label, res] of pages) assertPageHeaders(res, label)
})

test('GET / redirects to the staff dashboard', async () => {
  const res = await fetch(`${server.url}/`, { redirect: 'manual' })
  assert.equal(res.status, 302)
  assert.equal(res.headers.get('location'), '/admin/')
})

test('a shell has no inline script: only script tags with src under /assets/, linked by hash', async () => {
  for (const path of ['/admin/', '/portal/']) {
    const html = await (await fetch(server.url + path)).text()
    const scripts = html.match(/<script[^>]*>/g) ?? []
    const app = path.slice(1, -1)
    assert.equal(scripts.length, 1, path)
    assert.match(scripts[0] as string, new RegExp(`^<script defer src="/assets/${app}\\.js\\?v=[0-9a-f]{16}">$`))
    assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]|\son[a-z]+=|style=/i, path)
    assert.match(html, new RegExp(`<link rel="stylesheet" href="/assets/${app}\\.css\\?v=[0-9a-f]{16}">`))
    assert.match(html, /<link rel="stylesheet" href="\/assets\/theme\.css\?v=[0-9a-f]{16}">/)
  }
})

test("a staff page in Spanish, French or German loads that language's words first, and no other (issue 28: the budget)", async () => {
  for (const language of ['es', 'fr', 'de']) {
    const html = await (await fetch(`${server.url}/admin/`, { headers: { 'accept-language': language } })).text()
    const scripts = (html.match(/<script[^>]*>/g) ?? []).map((tag) => /src="\/assets\/([^"?]+)/.exec(tag)?.[1])
    assert.deepEqual(scripts, [`admin-${language}.js`, 'admin.js'], language)
    const words = await fetch(`${server.url}/assets/admin-${language}.js`)
    assert.equal(words.status, 200)
    assert.match(words.headers.get('content-type') ?? '', /^text\/javascript/)
  }
  // English is in admin.js; the portal has no words of its own apart.
  const english = await (await fetch(`${server.url}/admin/`, { headers: { 'accept-language': 'en' } })).text()
  assert.equal((english.match(/<script[^>]*>/g) ?? []).length, 1)
  const portal = await (await fetch(`${server.url}/portal/`, { headers: { 'accept-language': 'de' } })).text()
  assert.equal((portal.match(/<script[^>]*>/g) ?? []).length, 1)
})

test('<html lang> follows Accept-Language as the API negotiates it (en, es, fr, de; others English)', async () => {
  const cases: [string | undefined, string, string][] = [
    [undefined, 'en', 'Your subscriptions'], ['es-MX,es;q=0.9', 'es', 'Sus suscripciones'], ['fr', 'fr', 'Vos abonnements'],
    ['de-AT;q=0.8, en;q=0.5', 'de', 'Ihre Abonnements'], ['ja', 'en', 'Your subscriptions'],
  ]
  for (const [header, lang, title] of cases) {
    const html = await (await fetch(`${server.url}/portal/`, { headers: header === undefined ? {} : { 'accept-language': header } })).text()
    assert.match(html, new RegExp(`<html lang="${lang}">`), String(header))
    assert.match(html, new RegExp(`<title>${title} · replenish</title>`), String(header))
  }
})

test('the shop name, logo and accent come from the configuration, escaped, as data attributes and theme.css', async (t) => {
  const branded = await startTestServer(t, {
    REPLENISH_SHOP_NAME: 'Beans & "Leaves" <Co>',
    REPLENISH_SHOP_LOGO_URL: 'https://cdn.example/logo.png',
    REPLENISH_SHOP_ACCENT: '#7C2D12',
  })
  const html = await (await fetch(`${branded.url}/portal/`)).text()
  assert.match(html, /<body data-app="portal" data-shop-name="Beans &#38; &#34;Leaves&#34; &#60;Co&#62;" data-shop-logo-url="https:\/\/cdn\.example\/logo\.png" data-shop-accent="#7c2d12">/)
  assert.match(html, /<span class="shop-name"><img class="shop-logo" src="https:\/\/cdn\.example\/logo\.png" alt="" width="32" height="32">Beans &#38; &#34;Leaves&#34; &#60;Co&#62;<\/span>/)
  assert.doesNotMatch(html, /<Co>/)
  const href = /href="(\/assets\/theme\.css\?v=[0-9a-f]+)"/.exec(html)?.[1] as string
  assert.equal(await (await fetch(branded.url + href)).text(), ':root{--accent:#7c2d12}\n')
})
