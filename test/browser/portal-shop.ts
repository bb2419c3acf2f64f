/**
 * What the portal's browser tests share (portal*.test.ts): a small shop made through the admin
 * and customer APIs as a shop's backend and its customers would, the API's own view of a
 * subscription to check the page against, and the page-side steps every flow takes.
 */
import type { TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Locator } from 'playwright-core'
import { ADMIN_TOKEN, SCREENSHOTS, checkAccessibility, type Page, type TestServer } from './harness.ts'
import { createSubscription } from '../helpers/server.ts'

/** The two sizes every portal flow is tried at (C18): a desktop and a phone. */
export const SIZES = [
  { name: 'desktop', width: 1280, height: 800 },
  { name: 'phone', width: 390, height: 844 },
] as const

export async function admin(server: TestServer, method: string, path: string, json?: unknown): Promise<any> {
  const res = await server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
  assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${res.text}`)
  return res.body
}

export async function customer(server: TestServer, email: string): Promise<{ id: number; key: string }> {
  const user = await admin(server, 'POST', '/users', { user: { email } })
  return { id: user.id, key: (await admin(server, 'POST', `/users/${user.id}/api_keys`)).key }
}

/** The catalogue, priced (C16): coffee with 10 % subscribe-and-save, filters and a tea (once per server). */
export async function seedCatalog(server: TestServer) {
  const coffee = await admin(server, 'POST', '/subscribables', { subscribable: { sku: 'COF-1KG', name: 'Coffee beans 1 kg', prices: { USD: '12.50' }, discount_percent: '10' } })
  const filters = await admin(server, 'POST', '/subscribables', { subscribable: { sku: 'FLT-100', name: 'Paper filters', prices: { USD: '3.00' } } })
  const tea = await admin(server, 'POST', '/subscribables', { subscribable: { sku: 'TEA-SEC', name: 'Secret Oolong', prices: { USD: '8.00' } } })
  return { coffee, filters, tea }
}

/** A customer with a monthly plan of coffee × 2 and filters × 1, due 2026-12-10. */
export async function seedCustomer(server: TestServer, catalog: Awaited<ReturnType<typeof seedCatalog>>, email: string) {
  const user = await customer(server, email)
  const sub = await createSubscription(server, user.key, {
    actionable_date: '2026-12-10', interval_units: 'month',
    line_items_attributes: [{ subscribable_id: catalog.coffee.id, quantity: 2 }, { subscribable_id: catalog.filters.id, quantity: 1 }],
  })
  return { user, sub }
}

/** The subscription as the API shows it, and the types of its events, oldest first. */
export async function apiView(server: TestServer, key: string, id: number): Promise<{ sub: any; events: string[] }> {
  const sub = (await server.request('GET', `/api/v1/subscriptions/${id}`, { key })).body
  const events = (await server.request('GET', `/api/v1/subscriptions/${id}/events?per_page=100`, { key })).body.events as { type: string }[]
  return { sub, events: events.map((e) => e.type).reverse() }
}

/** axe on the page (fails on serious or critical); what else it found goes to the test's diagnostics. */
export async function axe(t: TestContext, page: Page, label: string): Promise<void> {
  const { violations } = await checkAccessibility(page, label)
  t.diagnostic(`axe ${label}: ${violations.length === 0 ? 'no violations' : violations.map((v) => `${v.impact} ${v.id}`).join(', ')}`)
}

export async function notice(page: Page, text: string): Promise<void> {
  await page.getByRole('status').filter({ hasText: text }).waitFor()
}

/** The element that has the focus, as `#id` and its text. */
export async function focused(page: Page): Promise<{ id: string; text: string; role: string | null }> {
  return page.evaluate(() => {
    const el = (globalThis as any).document.activeElement
    return { id: el.id, text: el.textContent, role: el.getAttribute('role') }
  })
}

/** Whether the element is wholly inside the window as it is scrolled now. */
export async function inView(page: Page, selector: string): Promise<boolean> {
  const box = await page.locator(selector).boundingBox()
  const size = page.viewportSize()
  return box !== null && size !== null && box.y >= 0 && box.y + box.height <= size.height
}

/** A screenshot (`docs/console/<name>.png`) of what the window shows, or of one part of the page, where a whole page would say less. */
export async function screenshotOf(what: Page | Locator, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true })
  await what.screenshot({ path: join(SCREENSHOTS, `${name}.png`) })
}
