/**
 * What the staff console's browser tests share (docs/console.md): a small shop seeded through
 * the APIs, signing in, opening a section, and the notices an action leaves.
 */
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, TODAY, type Page, type TestServer } from './harness.ts'
import { createSubscription } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'
import { processAsOf } from '../processing/helpers.ts'
import { addDays } from '../../src/domain/dates.ts'

export const A = '/admin/api/v1'

/** Both sizes the console is checked at (issue 28): a desktop and a phone. */
export const WIDE = { width: 1280, height: 800 }
export const PHONE = { width: 390, height: 844 }

export async function admin(server: TestServer, method: string, path: string, json?: unknown): Promise<any> {
  const res = await server.request(method, `${A}${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`)
  return res.body
}

export async function customer(server: TestServer, email: string, externalId: string): Promise<{ id: number; key: string }> {
  const user = await admin(server, 'POST', '/users', { user: { email, external_id: externalId } })
  const key = await admin(server, 'POST', `/users/${user.id}/api_keys`)
  return { id: user.id, key: key.key }
}

export const ADDRESS = { firstname: 'Alice', lastname: 'Martin', company: null, address1: '12 Rue des Lilas', address2: null, city: 'Lyon', zipcode: '69003', state_name: null, country_iso: 'FR', phone: '+33 4 00 00 00 00' }

/**
 * A small shop: Alice's subscription with two items, addresses and a card (the one the staff
 * finds), due today like three of Bob's, all processed (installments to report on); two dozen more
 * spread over the next 90 days, and outcomes recorded over the last 90 days (for the charts).
 * Items carry prices where the API has them (C16; ignored by one that does not).
 */
export async function seedShop(server: TestServer) {
  const coffee = await admin(server, 'POST', '/subscribables', { subscribable: { sku: 'COF-1KG', name: 'Coffee beans 1 kg', prices: { USD: '24.00', EUR: '22.00' }, discount_percent: '10' } })
  const filters = await admin(server, 'POST', '/subscribables', { subscribable: { sku: 'FLT-100', name: 'Paper filters', prices: { USD: '4.50' } } })
  const card = await admin(server, 'POST', '/payment_methods', { payment_method: { name: 'Card' } })
  const alice = await customer(server, 'alice@example.com', 'shop-1001')
  const bob = await customer(server, 'bob@example.com', 'shop-1002')
  const source = await admin(server, 'POST', '/payment_sources', { payment_source: { user_id: alice.id, payment_method_id: card.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 4, year: 2029 } })
  const lines = [{ subscribable_id: coffee.id, quantity: 2 }, { subscribable_id: filters.id, quantity: 1 }]
  const main = await createSubscription(server, alice.key, {
    actionable_date: TODAY, interval_units: 'month', line_items_attributes: lines,
    shipping_address_attributes: ADDRESS, billing_address_attributes: ADDRESS, payment_method_id: card.id, payment_source_id: source.id,
  })
  for (let i = 0; i < 3; i++) await createSubscription(server, bob.key, { actionable_date: TODAY, interval_units: 'week', line_items_attributes: [{ subscribable_id: coffee.id, quantity: 1 }] })
  for (let i = 0; i < 24; i++) {
    await createSubscription(server, bob.key, { actionable_date: addDays(TODAY, 1 + ((i * 37) % 89)), interval_units: 'month', line_items_attributes: [{ subscribable_id: filters.id, quantity: 1 + (i % 3) }] })
  }
  await processAsOf(server, TODAY)
  const installments = (await admin(server, 'GET', '/installments')).installments as any[]
  const results = ['fulfilled', 'fulfilled', 'fulfilled', 'failed', 'payment_failed', 'fulfilled', 'out_of_stock']
  const insert = sqliteOf(server.store).db.prepare('INSERT INTO installment_attempts (installment_id, result, order_reference, created_at) VALUES (?, ?, ?, ?)')
  for (let d = 89; d >= 1; d -= 2) {
    for (let k = 0; k < 1 + (d % 4); k++) insert.run(installments[installments.length - 1].id, results[(d + k) % results.length] as string, null, `${addDays(TODAY, -d)}T1${k}:00:00.000Z`)
  }
  return { alice, bob, main, coffee, filters, card, source, installments }
}

export async function signIn(page: Page, url: string, token = ADMIN_TOKEN, heading = 'Overview'): Promise<void> {
  await page.goto(`${url}/admin/`)
  await page.getByLabel('Admin token').fill(token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
}

/** Goes to a page by its address and waits for its heading. */
export async function visit(page: Page, url: string, route: string, heading: string): Promise<void> {
  await page.goto(`${url}/admin/#/${route}`)
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
}

/** Opens a section from the navigation (through the menu on a phone) and waits for its heading. */
export async function open(page: Page, link: string, heading = link): Promise<void> {
  const toggle = page.getByRole('button', { name: 'Menu' })
  if (await toggle.isVisible()) await toggle.click()
  await page.getByRole('navigation').getByRole('link', { name: link, exact: true }).click()
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
}

/** The notice an action leaves above the page (role=status), and a failure's (role=alert). */
export const notice = (page: Page) => page.locator('main > .notice[role="status"]')
export const failure = (page: Page) => page.locator('main > .problem[role="alert"]')

/** How far the page is wider than the screen (0: nothing scrolls sideways). */
export async function overflow(page: Page): Promise<number> {
  return page.evaluate(() => {
    const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }).document.documentElement
    return root.scrollWidth - root.clientWidth
  })
}

/** The text of the focused element ('' on <body>). */
export async function focused(page: Page): Promise<string> {
  return page.evaluate('document.activeElement === document.body ? "" : (document.activeElement?.textContent ?? "")') as Promise<string>
}

/**
 * No API field name (snake_case) in what the page's main region says to people (issue 28): codes
 * people copy (request ids, key prefixes) and form values are left out.
 */
export async function noRawNames(page: Page, label: string): Promise<void> {
  const text = await page.evaluate(`(() => {
    const main = document.querySelector('main').cloneNode(true)
    main.querySelectorAll('code, .request-id, input, select, textarea').forEach((c) => c.remove())
    return main.textContent ?? ''
  })()`) as string
  assert.deepEqual(text.match(/\b[a-z]+_[a-z_]+\b/g) ?? [], [], `${label}: no API field names on the page`)
}

/** Waits until no dialog is in the page (closed and removed). A function: the page's CSP refuses a string's evaluation. */
export async function noDialog(page: Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('dialog') === null)
}
