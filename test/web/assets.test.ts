/**
 * C14: /assets/<name> with an ETag (the content hash), immutable caching when asked for by that
 * hash, revalidation (304) otherwise; and the console's budget: what one page loads, its
 * JavaScript and CSS, under 150 KB before compression.
 */
import { after, before, test } from 'node:test'
import assert from 'node:assert/strict'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { bundleFromSource } from '../../src/web/dev-assets.ts'
import { createAssets } from '../../src/web/assets.ts'

const BUDGET_BYTES = 150_000

let server: TestServer

before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

/** The asset URLs a page links, with their hashes. */
async function linked(path: string): Promise<string[]> {
  const html = await (await fetch(server.url + path)).text()
  return [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1] as string)
}

test('an asset has a content-hash ETag; asked for by its hash it is immutable for a year', async () => {
  const urls = await linked('/portal/')
  assert.deepEqual(urls.map((u) => u.replace(/\?v=[0-9a-f]{16}$/, '')), ['/assets/portal.css', '/assets/theme.css', '/assets/portal.js'])
  for (const url of urls) {
    const res = await fetch(server.url + url)
    assert.equal(res.status, 200, url)
    const hash = url.split('?v=')[1]
    // Weak: the asset's gzip, br and plain bytes share it (RFC 9110 §8.8.1).
    assert.equal(res.headers.get('etag'), `W/"${hash}"`)
    assert.equal(res.headers.get('cache-control'), 'public, max-age=31536000, immutable')
    assert.equal(res.headers.get('x-content-type-options'), 'nosniff')
    assert.equal(res.headers.get('content-type'), url.includes('.js') ? 'text/javascript; charset=utf-8' : 'text/css; charset=utf-8')
  }
})

test('without the hash, or with an old one, it must be revalidated (no-cache); If-None-Match gets a 304 without a body', async () => {
  const first = await fetch(`${server.url}/assets/portal.js`)
  assert.equal(first.headers.get('cache-control'), 'no-cache')
  const etag = first.headers.get('etag') as string
  assert.ok((await first.text()).length > 1000)
  const old = await fetch(`${server.url}/assets/portal.js?v=0123456789abcdef`)
  assert.equal(old.headers.get('cache-control'), 'no-cache')
  assert.match(etag, /^W\/"[0-9a-f]{16}"$/)
  for (const header of [etag, etag.slice(2), `"nope", ${etag}`, '*']) {
    const res = await fetch(`${server.url}/assets/portal.js`, { headers: { 'if-none-match': header } })
    assert.equal(res.status, 304, header)
    assert.equal(res.headers.get('etag'), etag)
    assert.equal(await res.text(), '')
  }
  const changed = await fetch(`${server.url}/assets/portal.js`, { headers: { 'if-none-match': '"0123456789abcdef"' } })
  assert.equal(changed.status, 200)
})

test('an unknown asset is a 404', async () => {
  for (const name of ['nope.js', '..%2Fpackage.json', 'portal.ts']) {
    assert.equal((await fetch(`${server.url}/assets/${name}`)).status, 404, name)
  }
})

test('the ETag follows the content: another text, another hash', async () => {
  const a = await (await createAssets({}, async () => ({ 'x.js': 'one' })).all()).get('x.js')
  const b = await (await createAssets({}, async () => ({ 'x.js': 'two' })).all()).get('x.js')
  assert.ok(a && b)
  assert.match(a.hash, /^[0-9a-f]{16}$/)
  assert.notEqual(a.hash, b.hash)
})

test(`budget: what a page of the console loads (its script, its language's words, its styles) is under ${BUDGET_BYTES / 1000} KB before compression`, async () => {
  const texts = await bundleFromSource()
  const size = (name: string) => (texts[name] === undefined ? 0 : Buffer.byteLength(texts[name]))
  assert.ok('portal.js' in texts && 'portal.css' in texts && 'admin.js' in texts, Object.keys(texts).join(', '))
  // Each language's words of the dashboard are an asset of their own, loaded by its pages alone.
  assert.deepEqual(Object.keys(texts).filter((n) => /^admin-[a-z]{2}\.js$/.test(n)).sort(), ['admin-de.js', 'admin-es.js', 'admin-fr.js'])
  for (const app of ['admin', 'portal']) {
    for (const language of ['en', 'es', 'fr', 'de']) {
      const loaded = [`${app}.js`, `${app}-${language}.js`, `${app}.css`]
      const total = loaded.reduce((n, name) => n + size(name), 0)
      assert.ok(total < BUDGET_BYTES, `${app} in ${language}: ${total} bytes (${loaded.map((n) => `${n} ${size(n)}`).join(', ')})`)
    }
  }
})
