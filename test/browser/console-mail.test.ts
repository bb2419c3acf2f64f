/**
 * Customer e-mail in the staff console (C17, issue 28): a customer's language and e-mail setting
 * changed (previewed from a dry run), and the mail log, per customer and overall. At 1280 × 800
 * and 390 × 844, axe on every state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkAccessibility, startHarness } from './harness.ts'
import { PHONE, WIDE, admin, noRawNames, notice, open, overflow, seedShop, signIn, visit } from './console-shop.ts'
import { startSmtpSink, TEST_CA_FILE } from '../helpers/smtp.ts'

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`a customer's language and e-mail setting, and the mail log (${size})`, async (t) => {
    // Mail is queued only with SMTP set up; nothing sends it here (no sender runs): the log shows it pending.
    const sink = await startSmtpSink(t)
    const h = await startHarness(t, {
      REPLENISH_SMTP_URL: sink.url(), REPLENISH_SMTP_CA_FILE: TEST_CA_FILE,
      REPLENISH_MAIL_FROM: 'shop@example.com', REPLENISH_PUBLIC_URL: 'https://shop.example',
    })
    const shop = await seedShop(h.server)
    // A cancellation writes subscription.canceled, whose mail (C17 `canceled`) is queued in its unit.
    await admin(h.server, 'POST', `/subscriptions/${shop.main.id}/cancel`)
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)

    await visit(page, h.server.url, `customers/${shop.alice.id}`, `Customer #${shop.alice.id}`)
    const log = page.getByRole('region', { name: 'Mail sent to this customer' })
    await log.getByRole('row').filter({ hasText: 'Canceled' }).filter({ hasText: 'Pending' }).waitFor()
    await noRawNames(page, `customer with mail at ${size}`)

    // Language and e-mail setting: previewed, then saved.
    await page.getByRole('group', { name: 'Change this customer' }).getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('dialog', { name: `Edit customer #${shop.alice.id}` })
    await edit.getByLabel('Language').selectOption('de')
    await edit.getByLabel('Sends e-mail to the customer').uncheck()
    await edit.getByRole('status').filter({ hasText: 'German' }).filter({ hasText: 'Sends e-mail to the customer' }).waitFor()
    assert.match(await edit.getByRole('status').innerText(), /Language\s*English\s*→?\s*becomes\s*German/)
    await checkAccessibility(page, `customer settings preview at ${size}`)
    await edit.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const user = await admin(h.server, 'GET', `/users/${shop.alice.id}`)
    assert.deepEqual([user.locale, user.email_notifications], ['de', false])
    await checkAccessibility(page, `customer with mail at ${size}`)

    // The log of every mail, filtered by state.
    await open(page, 'Mail', 'Mail to customers')
    await page.getByRole('region', { name: 'Mail to customers' }).getByRole('row').filter({ hasText: 'alice@example.com' }).waitFor()
    await page.getByLabel('State').selectOption('sent')
    await page.getByRole('search', { name: 'Filter mail' }).getByRole('button', { name: 'Search' }).click()
    await page.waitForURL(/state=sent/)
    await page.getByRole('main').getByText('Nothing to show.').waitFor()
    assert.ok(await overflow(page) <= 0)
    await checkAccessibility(page, `mail log at ${size}`)
    assert.deepEqual(problems, [])
  })
}
