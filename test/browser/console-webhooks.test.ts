/**
 * Webhook operations in the staff console (issue 28, C18): an endpoint edited (previewed from a
 * dry run) and disabled (then no test is offered for it), a test event sent (a 2xx said to be
 * delivered, a refusal said to have failed, with what the endpoint answered), deliveries across
 * endpoints by state, and a refused state filter beside its form. At 1280 × 800 and 390 × 844.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { checkAccessibility, startHarness } from './harness.ts'
import { PHONE, WIDE, admin, failure, noRawNames, notice, overflow, signIn, visit } from './console-shop.ts'

/** A receiver answering `status` (and a body saying why when it refuses). */
async function receiver(t: { after(fn: () => Promise<void>): void }, status: number): Promise<string> {
  const server = await new Promise<Server>((resolve) => {
    const s = createServer((_req, res) => {
      // A refusal's body runs longer than its box: the box scrolls, and must be reachable by keyboard.
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status < 300 ? 'ok' : `Maintenance until 18:00\n${'Try again later.\n'.repeat(40)}`)
    })
    s.listen(0, '127.0.0.1', () => resolve(s))
  })
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
}

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`an endpoint is edited, tested and disabled; deliveries are listed across endpoints (${size})`, async (t) => {
    const h = await startHarness(t)
    const good = await receiver(t, 200)
    const down = await receiver(t, 503)
    const orders = await admin(h.server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: good, events: ['*'], description: 'Orders' } })
    const crm = await admin(h.server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: down, events: ['subscription.created'], description: 'CRM' } })
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)
    await visit(page, h.server.url, 'webhooks', 'Webhooks')
    const row = (description: string) => page.getByRole('region', { name: 'Endpoints' }).getByRole('row').filter({ hasText: description })

    // A test event to a receiver that answers 200: delivered.
    await row('Orders').getByRole('button', { name: 'Send test' }).click()
    await notice(page).filter({ hasText: 'Test event delivered: 200.' }).waitFor()
    // To one that answers 503: said to have failed, and what it answered is kept.
    await row('CRM').getByRole('button', { name: 'Send test' }).click()
    await failure(page).filter({ hasText: 'Test event not delivered: 503.' }).waitFor()
    await checkAccessibility(page, `failed test at ${size}`)

    // Deliveries across endpoints, pending ones: the CRM's test, its answer's body shown.
    await page.getByRole('link', { name: 'Deliveries to every endpoint' }).click()
    await page.getByRole('heading', { name: 'Deliveries to every endpoint', level: 1 }).waitFor()
    await page.getByLabel('State').selectOption('pending')
    await page.getByRole('search', { name: 'Deliveries' }).getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/state=pending/)
    // Drawn after the address changes: one row left, the CRM's (the delivered one to Orders is not pending).
    const list = page.getByRole('region', { name: 'Deliveries to every endpoint' })
    await list.locator('tbody tr').nth(1).waitFor({ state: 'detached' })
    const pending = list.getByRole('row').filter({ hasText: 'Test event' })
    await pending.getByRole('link', { name: `#${crm.id}`, exact: true }).waitFor()
    assert.equal(await list.getByRole('link', { name: `#${orders.id}`, exact: true }).count(), 0)
    await pending.getByText('Attempts (1)').click()
    await pending.getByText('Maintenance until 18:00').waitFor()
    await noRawNames(page, `deliveries at ${size}`)
    await checkAccessibility(page, `deliveries across endpoints at ${size}`)
    assert.ok(await overflow(page) <= 0)

    // Edit the CRM endpoint: a new URL and disabled, previewed, then saved; no test offered then.
    await visit(page, h.server.url, 'webhooks', 'Webhooks')
    await row('CRM').getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('dialog', { name: `Edit endpoint #${crm.id}` })
    await edit.getByLabel('URL', { exact: true }).fill(good)
    await edit.getByLabel('Disabled (no new deliveries, none sent)').check()
    await edit.getByRole('status').filter({ hasText: 'Disabled' }).filter({ hasText: good }).waitFor()
    assert.match(await edit.getByRole('status').innerText(), /Disabled\s*No\s*→?\s*becomes\s*Yes/)
    await checkAccessibility(page, `endpoint edit preview at ${size}`)
    assert.equal((await admin(h.server, 'GET', `/webhook_endpoints/${crm.id}`)).disabled, false, 'the preview changed nothing')
    await edit.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const saved = await admin(h.server, 'GET', `/webhook_endpoints/${crm.id}`)
    assert.deepEqual([saved.url, saved.disabled], [good, true])
    await row('CRM').filter({ hasText: 'Disabled' }).waitFor()
    assert.equal(await row('CRM').getByRole('button', { name: 'Send test' }).count(), 0)
    assert.equal(await row('Orders').getByRole('button', { name: 'Send test' }).count(), 1)
    assert.deepEqual(problems, [])
  })
}

test('a state the deliveries list does not know is refused beside its form', async (t) => {
  const h = await startHarness(t)
  const { page, problems } = await h.newPage()
  await signIn(page, h.server.url)
  await visit(page, h.server.url, 'webhooks/deliveries?state=lost', 'Deliveries to every endpoint')
  await page.getByRole('alert').filter({ hasText: /State: is not included in the list/ }).waitFor()
  assert.equal(await page.getByRole('search', { name: 'Deliveries' }).locator('[name="state"]').getAttribute('aria-invalid'), 'true')
  await checkAccessibility(page, 'refused deliveries filter')
  assert.deepEqual(problems, [])
})
