/**
 * The overview (issue 28): "Active" counts the subscriptions that run (paused ones apart, a
 * defect), chart axes step by whole numbers evenly (0, 1, 2, 3 for a maximum of 3, a defect: it
 * drew 0, 2, 3), dates under the bars in the page's language (a defect: ISO dates), and on a
 * phone the charts keep a usable height. At 1280 × 800 and 390 × 844, axe on every state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, TODAY, checkAccessibility, startHarness, type Page } from './harness.ts'
import { PHONE, WIDE, admin, customer, overflow } from './console-shop.ts'
import { createSubscription } from '../helpers/server.ts'
import { addDays } from '../../src/domain/dates.ts'

/** A chart's axis values (top to bottom as drawn: read by their y) and the dates under its bars. */
async function axes(page: Page, title: string): Promise<{ ticks: { text: string; y: number }[]; dates: string[]; height: number }> {
  const chart = page.getByRole('figure').filter({ hasText: title })
  const ticks = await chart.locator('svg.chart .grid text').evaluateAll((els) => els.map((e) => ({ text: e.textContent ?? '', y: Number(e.getAttribute('y')) })))
  const dates = await chart.locator('svg.chart text.tick').allTextContents()
  const height = (await chart.locator('svg.chart').boundingBox())?.height ?? 0
  return { ticks, dates, height }
}

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`
  test(`the overview counts running subscriptions as active, and its charts have whole, even ticks and dates in the page's language (${size})`, async (t) => {
    const h = await startHarness(t)
    const item = await admin(h.server, 'POST', '/subscribables', { subscribable: { sku: 'COF', name: 'Coffee' } })
    const ana = await customer(h.server, 'ana@example.com', 'a-1')
    const line = { line_items_attributes: [{ subscribable_id: item.id, quantity: 1 }] }
    // Three deliveries on one day (the busiest), one on another; one of the five paused.
    for (let i = 0; i < 3; i++) await createSubscription(h.server, ana.key, { actionable_date: addDays(TODAY, 3), ...line })
    await createSubscription(h.server, ana.key, { actionable_date: addDays(TODAY, 10), ...line })
    const paused = await createSubscription(h.server, ana.key, { actionable_date: addDays(TODAY, 20), ...line })
    await admin(h.server, 'POST', `/subscriptions/${paused.id}/pause`)

    const { page, problems } = await h.newPage({ viewport, locale: 'de-DE' })
    await page.goto(`${h.server.url}/admin/`)
    await page.getByLabel('Admin-Token').fill(ADMIN_TOKEN)
    await page.getByRole('button', { name: 'Anmelden' }).click()
    await page.getByRole('heading', { name: 'Übersicht', level: 1 }).waitFor()
    await page.getByRole('figure').first().waitFor()
    const counts = page.locator('.stat').filter({ hasText: 'Abonnements' })
    assert.equal(await counts.getByRole('definition').first().textContent(), '4', 'active: the four that run')
    assert.equal(await counts.getByRole('definition').nth(1).textContent(), '1', 'paused apart')

    const due = await axes(page, 'Fällige Lieferungen')
    assert.deepEqual(due.ticks.map((x) => x.text), ['0', '1', '2', '3'])
    const steps = due.ticks.slice(1).map((x, i) => (due.ticks[i]?.y ?? 0) - x.y)
    assert.ok(steps.every((s) => Math.abs(s - (steps[0] ?? 0)) < 0.01), `evenly spaced: ${steps.join(', ')}`)
    const short = new Intl.DateTimeFormat('de-DE', { month: 'short', day: 'numeric', timeZone: 'UTC' })
    assert.equal(due.dates[0], short.format(new Date(`${TODAY}T00:00:00Z`)))
    assert.ok(due.dates.every((d) => !/\d{4}-\d{2}-\d{2}/.test(d)), `no ISO dates: ${due.dates.join(', ')}`)
    assert.ok(due.height >= 180, `a usable height: ${due.height} px`)
    assert.ok(await overflow(page) <= 0)
    await checkAccessibility(page, `overview in German at ${size}`)
    assert.deepEqual(problems, [])
  })
}
