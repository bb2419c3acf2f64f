/**
 * C14's configuration: REPLENISH_SHOP_NAME, REPLENISH_SHOP_LOGO_URL, REPLENISH_SHOP_ACCENT (WCAG AA
 * on white) and REPLENISH_PUBLIC_URL, validated once with messages naming the variable.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ConfigError, loadConfig } from '../../src/config.ts'

const load = (env: Record<string, string>, flags: Record<string, string> = {}) => loadConfig(flags, env)

test('defaults: the name "replenish", no logo, an accent that reads on white, no public URL', () => {
  const c = load({})
  assert.equal(c.shopName, 'replenish')
  assert.equal(c.shopLogoUrl, undefined)
  assert.equal(c.shopAccent, '#1d4ed8')
  assert.equal(c.publicUrl, undefined)
})

test('the accent is #rgb or #rrggbb, normalised; one with less than 4.5:1 on white is refused with its ratio', () => {
  assert.equal(load({ REPLENISH_SHOP_ACCENT: '#7C2D12' }).shopAccent, '#7c2d12')
  assert.equal(load({ REPLENISH_SHOP_ACCENT: '#000' }).shopAccent, '#000000')
  assert.equal(load({}, { 'shop-accent': '#767676' }).shopAccent, '#767676') // 4.54:1, the lightest grey that passes
  assert.throws(() => load({ REPLENISH_SHOP_ACCENT: '#777777' }), { name: 'ConfigError', message: 'REPLENISH_SHOP_ACCENT: expected a colour with a contrast of at least 4.5:1 on white (WCAG AA), this one has 4.48:1: choose a darker one, got "#777777"' })
  assert.throws(() => load({ REPLENISH_SHOP_ACCENT: '#ffff00' }), /1\.07:1/)
  for (const bad of ['blue', '#12345', 'rgb(0,0,0)', '#gggggg']) {
    assert.throws(() => load({ REPLENISH_SHOP_ACCENT: bad }), (e: unknown) => e instanceof ConfigError && e.message.startsWith('REPLENISH_SHOP_ACCENT: expected a colour as #rrggbb'), bad)
  }
  assert.throws(() => load({}, { 'shop-accent': 'red' }), /^ConfigError: --shop-accent: /)
})

test('the logo is an https URL or a path on this server; http, javascript: and protocol-relative ones are refused', () => {
  assert.equal(load({ REPLENISH_SHOP_LOGO_URL: 'https://cdn.example/logo.svg' }).shopLogoUrl, 'https://cdn.example/logo.svg')
  assert.equal(load({ REPLENISH_SHOP_LOGO_URL: '/static/logo.png' }).shopLogoUrl, '/static/logo.png')
  for (const bad of ['http://cdn.example/logo.png', 'javascript:alert(1)', '//evil.example/x.png', 'https://cdn.example/a"b.png', 'logo.png']) {
    assert.throws(() => load({ REPLENISH_SHOP_LOGO_URL: bad }), /^ConfigError: REPLENISH_SHOP_LOGO_URL: expected an https:\/\/ URL or a path on this server beginning with \//, bad)
  }
})

test('the public URL is an origin (a trailing slash is dropped); a path, query or credentials are refused', () => {
  assert.equal(load({ REPLENISH_PUBLIC_URL: 'https://Portal.Shop.Example/' }).publicUrl, 'https://portal.shop.example')
  assert.equal(load({ REPLENISH_PUBLIC_URL: 'http://127.0.0.1:8080' }).publicUrl, 'http://127.0.0.1:8080')
  for (const bad of ['https://shop.example/replenish', 'https://shop.example?x=1', 'https://u:p@shop.example', 'ftp://shop.example', 'shop.example']) {
    assert.throws(() => load({ REPLENISH_PUBLIC_URL: bad }), /^ConfigError: REPLENISH_PUBLIC_URL: expected an origin such as https:\/\/shop\.example/, bad)
  }
})

test('the shop name: 1 to 100 printable characters', () => {
  assert.equal(load({ REPLENISH_SHOP_NAME: 'Beans & Leaves' }).shopName, 'Beans & Leaves')
  assert.throws(() => load({ REPLENISH_SHOP_NAME: 'x'.repeat(101) }), /REPLENISH_SHOP_NAME: expected a name of 1 to 100 printable characters/)
  assert.throws(() => load({ REPLENISH_SHOP_NAME: 'a\u0007b' }), /REPLENISH_SHOP_NAME/)
})

test('the shop URL (C18: where a spent portal link leads): an http(s) URL, paths allowed; javascript:, credentials and non-URLs refused', () => {
  assert.equal(load({}).shopUrl, undefined)
  assert.equal(load({ REPLENISH_SHOP_URL: 'https://shop.example/account?tab=subscriptions' }).shopUrl, 'https://shop.example/account?tab=subscriptions')
  assert.equal(load({}, { 'shop-url': 'http://127.0.0.1:3000/' }).shopUrl, 'http://127.0.0.1:3000/')
  for (const bad of ['javascript:alert(1)', 'https://u:p@shop.example/', 'ftp://shop.example', 'shop.example/account', '/account']) {
    assert.throws(() => load({ REPLENISH_SHOP_URL: bad }), /^ConfigError: REPLENISH_SHOP_URL: expected an http:\/\/ or https:\/\/ URL/, bad)
  }
})
