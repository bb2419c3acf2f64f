/**
 * Finding things in the staff console (issue 28 item 8, C18): the search box on every page (a
 * subscription or customer by id, customers by the start of an email, external id or domain), lists
 * that name customers and items, sorted by id or date both ways, the paused filter, CSV exports of
 * what the filters select, and a filter the API refuses shown beside the form that stays (a defect:
 * it replaced the page with one line). At 1280 × 800 and 390 × 844, axe on every new state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { checkAccessibility, startHarness, type Page } from './harness.ts'
import { PHONE, WIDE, admin, noRawNames, open, overflow, seedShop, signIn, visit } from './console-shop.ts'

/** The ids in the first column of the list's rows, in the order shown. */
async function ids(page: Page, caption: string): Promise<number[]> {
  const cells = await page.getByRole('region', { name: caption }).locator('tbody tr td:first-child').allTextContents()
  return cells.map((c) => Number(c.replace(/\D/g, '')))
}

/** Waits until the list shows these ids, in this order (a page is drawn after its address changes). */
async function showsIds(page: Page, caption: string, expected: number[]): Promise<void> {
  const cells = `[role="region"][aria-label="${caption}"] tbody tr td:first-child`
  // A function, not a string: the page's CSP (no unsafe-eval) refuses a string's evaluation.
  await page.waitForFunction(([selector, want]) => {
    const doc = (globalThis as unknown as { document: { querySelectorAll(s: string): ArrayLike<{ textContent: string | null }> } }).document
    return JSON.stringify(Array.from(doc.querySelectorAll(selector), (td) => Number((td.textContent ?? '').replace(/\D/g, '')))) === want
  }, [cells, JSON.stringify(expected)] as const)
  assert.deepEqual(await ids(page, caption), expected)
}

/** Runs `click` and answers the file the browser saved. */
async function downloaded(page: Page, click: () => Promise<void>): Promise<{ name: string; text: string }> {
  const [download] = await Promise.all([page.waitForEvent('download'), click()])
  return { name: download.suggestedFilename(), text: readFileSync(await download.path(), 'utf8') }
}

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`search from any page, lists that name things, sorting both ways, the paused filter and CSV exports (${size})`, async (t) => {
    const h = await startHarness(t)
    const shop = await seedShop(h.server)
    const paused = (await admin(h.server, 'GET', `/subscriptions?user_id=${shop.bob.id}&limit=1`)).subscriptions[0]
    await admin(h.server, 'POST', `/subscriptions/${paused.id}/pause`)
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)
    const search = async (text: string) => {
      const toggle = page.getByRole('button', { name: 'Menu' })
      if (await toggle.isVisible()) await toggle.click()
      await page.getByRole('searchbox', { name: 'Search customers and subscriptions' }).fill(text)
      await page.getByRole('search', { name: 'Search' }).getByRole('button', { name: 'Search' }).click()
      await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor()
    }

    // From the catalog page: a subscription by its id.
    await open(page, 'Catalog')
    await search(`#${shop.main.id}`)
    await page.getByRole('link', { name: `Subscription #${shop.main.id}` }).click()
    await page.getByRole('heading', { name: `Subscription #${shop.main.id}`, level: 1 }).waitFor()
    // From a subscription's page: customers by the start of an email, in any case, and by domain.
    await search('ALI')
    await page.getByRole('region', { name: 'Customers' }).getByRole('link', { name: 'alice@example.com' }).waitFor()
    assert.equal(await page.getByRole('region', { name: 'Customers' }).getByText('bob@example.com').count(), 0)
    await search('example.com')
    await page.getByRole('region', { name: 'Customers' }).getByRole('link', { name: 'bob@example.com' }).waitFor()
    await checkAccessibility(page, `search results at ${size}`)

    // The subscriptions list names the customer and the items.
    await visit(page, h.server.url, 'subscriptions', 'Subscriptions')
    const list = page.getByRole('region', { name: 'Subscriptions' })
    await list.getByRole('row').filter({ hasText: 'alice@example.com' }).filter({ hasText: 'Coffee beans 1 kg × 2, Paper filters × 1' }).waitFor()
    await noRawNames(page, `subscriptions at ${size}`)
    const first = await ids(page, 'Subscriptions')
    assert.deepEqual(first, [...first].sort((a, b) => a - b), 'in id order as the API pages them')
    // Sorted by id, descending, then ascending again: the heading says which (aria-sort).
    await list.getByRole('link', { name: /^Id/ }).click()
    await list.locator('th[aria-sort="ascending"]').waitFor()
    await page.getByRole('region', { name: 'Subscriptions' }).getByRole('link', { name: /^Id/ }).click()
    await page.getByRole('region', { name: 'Subscriptions' }).locator('th[aria-sort="descending"]').waitFor()
    await showsIds(page, 'Subscriptions', [...first].sort((a, b) => b - a))
    // By date of creation, newest first.
    await page.getByRole('region', { name: 'Subscriptions' }).getByRole('link', { name: /^Created/ }).click()
    await page.getByRole('region', { name: 'Subscriptions' }).getByRole('link', { name: /^Created/ }).click()
    await page.getByRole('region', { name: 'Subscriptions' }).locator('th[aria-sort="descending"]').filter({ hasText: 'Created' }).waitFor()
    // Made one after the other: newest first is highest id first.
    await showsIds(page, 'Subscriptions', [...first].sort((a, b) => b - a))
    await checkAccessibility(page, `sorted list at ${size}`)
    assert.ok(await overflow(page) <= 0, 'the list fits the screen')

    // The paused filter, and the customer filter by the search.
    await page.getByLabel('Paused', { exact: true }).selectOption('true')
    await page.getByRole('search', { name: 'Find subscriptions' }).getByRole('button', { name: 'Search' }).click()
    await showsIds(page, 'Subscriptions', [paused.id])
    await page.getByLabel('Paused', { exact: true }).selectOption('')
    await page.getByLabel('Customer', { exact: true }).fill('alice')
    await page.getByRole('search', { name: 'Find subscriptions' }).getByRole('button', { name: 'Search' }).click()
    await showsIds(page, 'Subscriptions', [shop.main.id])

    // Export: the CSV of what the filters select.
    const csv = await downloaded(page, () => page.getByRole('button', { name: 'Export CSV' }).click())
    assert.equal(csv.name, 'subscriptions.csv')
    const rows = csv.text.trim().split(/\r?\n/)
    assert.equal(rows.length, 2, csv.text)
    assert.match(rows[0] ?? '', /^id,/)
    assert.match(rows[1] ?? '', new RegExp(`^${shop.main.id},`))
    assert.match(rows[1] ?? '', /alice@example\.com/)

    // Customers: the q search, and their export.
    await open(page, 'Customers')
    await page.getByLabel('Email, external id or domain').fill('shop-100')
    await page.getByRole('search', { name: 'Find customers' }).getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/q=shop-100/)
    await page.getByRole('region', { name: 'Customers' }).getByText('bob@example.com').waitFor()
    const users = await downloaded(page, () => page.getByRole('button', { name: 'Export CSV' }).click())
    assert.equal(users.text.trim().split(/\r?\n/).length, 3, users.text)
    // Installments: exported with their filter.
    await open(page, 'Installments')
    const installments = await downloaded(page, () => page.getByRole('button', { name: 'Export CSV' }).click())
    assert.equal(installments.text.trim().split(/\r?\n/).length, 1 + shop.installments.length, installments.text)
    await checkAccessibility(page, `installments at ${size}`)
    assert.deepEqual(problems, [])
  })

  test(`a filter the API refuses is shown beside the form, which stays, the field marked (${size})`, async (t) => {
    const h = await startHarness(t)
    await seedShop(h.server)
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)
    const cases: [route: string, heading: string, form: string, message: string, field: string][] = [
      ['subscriptions?state=sleeping', 'Subscriptions', 'Find subscriptions', 'State: is not included in the list', 'state'],
      ['subscriptions?actionable_before=next-week', 'Subscriptions', 'Find subscriptions', 'Due before: is not a valid date', 'actionable_before'],
      ['installments?state=lost', 'Installments', 'Filter installments', 'State: is not included in the list', 'state'],
    ]
    for (const [route, heading, form, message, field] of cases) {
      await visit(page, h.server.url, route, heading)
      const search = page.getByRole('search', { name: form })
      await search.waitFor()
      // Case matters: the field's label, not its API name.
      await page.getByRole('alert').filter({ hasText: new RegExp(message) }).waitFor()
      assert.equal(await search.locator(`[name="${field}"]`).getAttribute('aria-invalid'), 'true', `${route}: the field is marked`)
      await checkAccessibility(page, `${route} refused at ${size}`)
    }
    // The form still works: a good filter draws the list.
    await visit(page, h.server.url, 'subscriptions?state=sleeping', 'Subscriptions')
    await page.getByLabel('State', { exact: true }).selectOption('active')
    await page.getByRole('search', { name: 'Find subscriptions' }).getByRole('button', { name: 'Search' }).click()
    await page.getByRole('region', { name: 'Subscriptions' }).locator('tbody tr').first().waitFor()
    assert.equal(await page.getByRole('alert').filter({ hasText: /\S/ }).count(), 0)
    assert.deepEqual(problems, [])
  })
}

test('a search for an id that nothing has says so, rather than showing an empty page (1280 and 390 px, axe-clean)', async (t) => {
  const h = await startHarness(t)
  for (const viewport of [WIDE, PHONE]) {
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)
    await page.goto(`${h.server.url}/admin/#/search?q=%23999999`)
    await page.getByRole('heading', { name: 'Search', level: 1 }).waitFor()
    // The answer sits right under the line naming the search.
    const said = page.getByRole('status').filter({ hasText: 'Results for' })
    await said.waitFor()
    assert.equal(await said.locator('xpath=following-sibling::p[1]').innerText(), 'Nothing to show.')
    await checkAccessibility(page, `search for an unknown id at ${viewport.width} px`)
    assert.ok(await overflow(page) <= 0)
    assert.deepEqual(problems, [])
  }
})
