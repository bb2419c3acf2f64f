/**
 * Money in the staff console (issue 26 item 6, C16): the overview's monthly recurring value and
 * the charts of fulfilled revenue and churn per month; a subscription's prices, discount and
 * totals, an installment's frozen total, a catalog price changed (previewed) and followed at once
 * by the subscription but not by the installment. Amounts are the API's strings, formatted by
 * Intl in the page's language. At 1280 × 800 and 390 × 844, axe on every state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, checkAccessibility, startHarness } from './harness.ts'
import { PHONE, WIDE, admin, notice, overflow, seedShop, signIn, visit } from './console-shop.ts'

const usd = (amount: string, locale = 'en-US') => new Intl.NumberFormat(locale, { style: 'currency', currency: 'USD' }).format(amount as Intl.StringNumericLiteral)

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`money on the overview, a subscription, its installment and the catalog (${size})`, async (t) => {
    const h = await startHarness(t)
    const shop = await seedShop(h.server)
    const id = shop.main.id as number
    const [installment] = shop.installments.filter((i: any) => i.subscription_id === id)
    // Alice's next delivery: 2 × 24.00 less 10 % (43.20) and 1 × 4.50.
    const sub = await admin(h.server, 'GET', `/subscriptions/${id}`)
    assert.deepEqual([sub.subtotal, sub.discount_total, sub.total], ['52.50', '4.80', '47.70'])
    await admin(h.server, 'POST', `/installments/${installment.id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-1' } })
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url)

    // The overview: the monthly recurring value as the report gives it, and both monthly charts.
    const recurring = await admin(h.server, 'GET', '/reports/recurring')
    const money = page.locator('.stat').filter({ hasText: 'Recurring revenue' })
    await money.getByText(usd(recurring.monthly_recurring_value)).waitFor()
    const revenue = page.getByRole('figure').filter({ hasText: 'Fulfilled revenue per month (USD)' })
    await revenue.getByText('Show the numbers').click()
    await revenue.getByRole('row').filter({ hasText: 'November 2026' }).filter({ hasText: '$47.70' }).waitFor()
    await page.getByRole('figure').filter({ hasText: 'Churn per month' }).waitFor()
    assert.ok(await overflow(page) <= 0)
    await checkAccessibility(page, `overview with money at ${size}`)

    // The subscription: each line's price, discount and total; the next delivery's totals.
    await visit(page, h.server.url, `subscriptions/${id}`, `Subscription #${id}`)
    const coffee = page.getByRole('region', { name: 'Items' }).getByRole('row').filter({ hasText: 'Coffee beans 1 kg' })
    await coffee.filter({ hasText: '$24.00' }).filter({ hasText: '10%' }).filter({ hasText: '$43.20' }).waitFor()
    const items = page.locator('section').filter({ has: page.getByRole('heading', { name: 'Items', exact: true }) })
    assert.match(await items.innerText(), /Subtotal\s*\$52\.50\s*Discount\s*\$4\.80\s*Next delivery total\s*\$47\.70/)
    // Its installment: the frozen total.
    const installments = page.locator('section').filter({ has: page.getByRole('heading', { name: 'Installments' }) })
    await installments.getByRole('row').filter({ hasText: `#${installment.id}` }).filter({ hasText: '$47.70' }).waitFor()
    await checkAccessibility(page, `subscription with money at ${size}`)

    // A new price for the coffee, previewed, then saved: the subscription follows, the installment not.
    await visit(page, h.server.url, 'catalog', 'Catalog')
    await page.getByRole('region', { name: 'Items' }).getByRole('row').filter({ hasText: 'Coffee beans 1 kg' }).getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('dialog', { name: `Edit item #${shop.coffee.id}` })
    await edit.getByLabel('Price in USD').fill('30.00')
    await edit.getByRole('button', { name: 'Preview' }).click()
    await edit.getByRole('status').filter({ hasText: '$30.00' }).waitFor()
    assert.match(await edit.getByRole('status').innerText(), /Price in USD\s*\$24\.00\s*→?\s*becomes\s*\$30\.00/)
    await checkAccessibility(page, `price preview at ${size}`)
    assert.equal((await admin(h.server, 'GET', `/subscribables/${shop.coffee.id}`)).prices.USD, '24.00', 'the preview changed nothing')
    await edit.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    await visit(page, h.server.url, `subscriptions/${id}`, `Subscription #${id}`)
    // 2 × 30.00 less 10 % (54.00) and 4.50.
    await items.getByText('$58.50').waitFor()
    await installments.getByRole('row').filter({ hasText: `#${installment.id}` }).filter({ hasText: '$47.70' }).waitFor()

    // In German: the same amounts as German writes them.
    const { page: german } = await h.newPage({ viewport, locale: 'de-DE' })
    await german.goto(`${h.server.url}/admin/`)
    await german.getByLabel('Admin-Token').fill(ADMIN_TOKEN)
    await german.getByRole('button', { name: 'Anmelden' }).click()
    await german.getByRole('heading', { name: 'Übersicht', level: 1 }).waitFor()
    await german.goto(`${h.server.url}/admin/#/subscriptions/${id}`)
    await german.getByText(usd('58.50', 'de-DE')).first().waitFor()
    assert.deepEqual(problems, [])
  })
}
