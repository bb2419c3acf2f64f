/**
 * The staff console changes a subscription (issue 28 items 7 and 9, C18): every change is tried
 * first as a dry run and its effect shown, nothing stored until it is confirmed; only the actions
 * the state allows are offered; a refusal is the API's, its fields named as people name them; the
 * history says who changed what (before → after); a dialog closed without a change gives the focus
 * back to the button that opened it. At 1280 × 800 and 390 × 844, axe on every new state.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { checkAccessibility, startHarness, type Page } from './harness.ts'
import { PHONE, WIDE, admin, focused, noDialog, noRawNames, notice, overflow, seedShop, signIn, visit } from './console-shop.ts'

/** The buttons that change the subscription, as offered now. */
async function offered(page: Page): Promise<string[]> {
  return (await page.getByRole('group', { name: 'Change this subscription' }).getByRole('button').allTextContents()).map((s) => s.trim())
}

/** The seeded shop, signed in, on Alice's subscription's page. */
async function openMain(t: TestContext, viewport: { width: number; height: number }) {
  const h = await startHarness(t)
  const shop = await seedShop(h.server)
  const id = shop.main.id as number
  const { page, problems } = await h.newPage({ viewport })
  await signIn(page, h.server.url)
  await visit(page, h.server.url, `subscriptions/${id}`, `Subscription #${id}`)
  return { h, shop, id, page, problems }
}

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`a subscription's changes are previewed from a dry run, then made; the history names who changed what (${size})`, async (t) => {
    const { h, shop, id, page, problems } = await openMain(t, viewport)
    await page.getByText('Coffee beans 1 kg (COF-1KG)').first().waitFor()
    // Running: no Resume, no Reactivate.
    assert.deepEqual(await offered(page), ['Skip next delivery', 'Pause', 'Cancel subscription', 'Change schedule'])

    // Skip: the dialog shows what the dry run says, and nothing is stored before the confirmation.
    await page.getByRole('button', { name: 'Skip next delivery' }).click()
    const skip = page.getByRole('dialog', { name: 'Skip next delivery' })
    const preview = skip.getByRole('status')
    await preview.filter({ hasText: 'What will change' }).waitFor()
    assert.match(await preview.innerText(), /Next date\s*December 25, 2026\s*→?\s*becomes\s*January 25, 2027/)
    assert.match(await preview.innerText(), /Skips in all\s*0\s*→?\s*becomes\s*1/)
    await checkAccessibility(page, `skip preview at ${size}`)
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${id}`)).skip_count, 0, 'the preview stored nothing')
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${id}/events`)).events.length, 2, 'nor an event')
    await skip.getByRole('button', { name: 'Skip next delivery' }).click()
    await notice(page).filter({ hasText: 'Skipped. The next delivery is on January 25, 2027.' }).waitFor()
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${id}`)).skip_count, 1)

    // The history: who (the configured admin token) and what changed, before → after. The next
    // date's before is not claimed: the processor moved it (the installment) without an event of
    // the subscription, so the representation before says November 25.
    const history = page.locator('.timeline > li').first()
    await history.filter({ hasText: 'Delivery skipped' }).waitFor()
    assert.match(await history.innerText(), /by staff \(the configured admin token\)/)
    assert.match(await history.innerText(), /Next date\s*January 25, 2027\n/)
    assert.doesNotMatch(await history.innerText(), /November 25, 2026/)
    assert.match(await history.innerText(), /Skips in all\s*0\s*→?\s*becomes\s*1/)
    assert.match(await page.locator('.timeline > li').last().innerText(), /Subscription created\s*by the customer \(API key #\d+\)/)
    await checkAccessibility(page, `history at ${size}`)

    // Change schedule: a new interval alone moves the next date (C7); previewed, then saved.
    await page.getByRole('button', { name: 'Change schedule' }).click()
    const schedule = page.getByRole('dialog', { name: 'Change schedule' })
    await schedule.getByRole('status').filter({ hasText: 'Nothing changes.' }).waitFor()
    await schedule.getByLabel('Interval', { exact: true }).fill('2')
    // Choosing in a list asks for the preview at once.
    await schedule.getByLabel('Unit').selectOption('week')
    await schedule.getByRole('status').filter({ hasText: 'Every 2 weeks' }).waitFor()
    await checkAccessibility(page, `schedule preview at ${size}`)
    await schedule.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const rescheduled = await admin(h.server, 'GET', `/subscriptions/${id}`)
    assert.deepEqual([rescheduled.interval_length, rescheduled.interval_units], [2, 'week'])

    // Items: a quantity, a swap, an item added, one removed; each previewed.
    const row = (name: string) => page.getByRole('row').filter({ hasText: name })
    await row('Coffee beans 1 kg').getByRole('button', { name: 'Edit' }).click()
    const change = page.getByRole('dialog', { name: 'Change Coffee beans 1 kg' })
    await change.getByLabel('Quantity').fill('3')
    await change.getByRole('button', { name: 'Preview' }).click()
    await change.getByRole('status').filter({ hasText: 'Coffee beans 1 kg × 3' }).waitFor()
    await change.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    await row('Paper filters').getByRole('button', { name: 'Edit' }).click()
    const swap = page.getByRole('dialog', { name: 'Change Paper filters' })
    await swap.getByLabel('Item').selectOption(String(shop.coffee.id))
    await swap.getByRole('status').filter({ hasText: 'Coffee beans 1 kg × 3, Coffee beans 1 kg × 1' }).waitFor()
    await swap.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    await page.getByRole('button', { name: 'Add item' }).click()
    const add = page.getByRole('dialog', { name: 'Add item' })
    await add.getByLabel('Item').selectOption(String(shop.filters.id))
    await add.getByLabel('Quantity').fill('4')
    await add.getByRole('button', { name: 'Preview' }).click()
    await add.getByRole('status').filter({ hasText: 'Paper filters × 4' }).waitFor()
    await checkAccessibility(page, `add item preview at ${size}`)
    await add.getByRole('button', { name: 'Add item' }).click()
    await notice(page).filter({ hasText: 'Item added.' }).waitFor()
    const items = (await admin(h.server, 'GET', `/subscriptions/${id}`)).line_items.map((li: any) => [li.subscribable_id, li.quantity])
    assert.deepEqual(items, [[shop.coffee.id, 3], [shop.coffee.id, 1], [shop.filters.id, 4]])
    await row('Paper filters').getByRole('button', { name: 'Remove' }).click()
    const remove = page.getByRole('dialog', { name: 'Remove' })
    await remove.getByRole('status').filter({ hasText: 'Paper filters × 4' }).waitFor()
    await remove.getByRole('button', { name: 'Remove' }).click()
    await notice(page).filter({ hasText: 'Paper filters removed.' }).waitFor()
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${id}`)).line_items.length, 2)
    // A one-time add-on (C17): for the next delivery only, marked so in the list.
    await page.getByRole('button', { name: 'Add item' }).click()
    const once = page.getByRole('dialog', { name: 'Add item' })
    await once.getByLabel('Item').selectOption(String(shop.filters.id))
    await once.getByLabel('Next delivery only (one time)').check()
    await once.getByRole('status').filter({ hasText: 'Paper filters × 1 (one time)' }).waitFor()
    await once.getByRole('button', { name: 'Add item' }).click()
    await notice(page).filter({ hasText: 'Item added.' }).waitFor()
    await row('Paper filters').filter({ hasText: 'one time' }).waitFor()
    assert.deepEqual((await admin(h.server, 'GET', `/subscriptions/${id}`)).line_items.map((li: any) => li.one_time), [false, false, true])

    // A refusal is the API's, with its field named as people name it, and the field marked.
    await row('Coffee beans 1 kg × 3').or(row('Coffee beans 1 kg')).first().getByRole('button', { name: 'Edit' }).click()
    const bad = page.getByRole('dialog').filter({ hasText: 'Quantity' })
    await bad.getByLabel('Quantity').fill('0')
    await bad.getByRole('button', { name: 'Preview' }).click()
    await bad.getByRole('alert').filter({ hasText: /Items: Quantity: must be greater than 0/ }).waitFor()
    assert.equal(await bad.getByLabel('Quantity').getAttribute('aria-invalid'), 'true')
    await checkAccessibility(page, `refused preview at ${size}`)
    await page.keyboard.press('Escape')
    await bad.waitFor({ state: 'detached' })

    // The shipping address, its country from a picker of ISO codes.
    await page.getByRole('region', { name: 'Shipping address' }).or(page.locator('section').filter({ has: page.getByRole('heading', { name: 'Shipping address' }) })).first()
      .getByRole('button', { name: 'Edit' }).click()
    const address = page.getByRole('dialog', { name: 'Change the shipping address' })
    await address.getByLabel('Country', { exact: true }).selectOption('DE')
    await address.getByLabel('City').fill('Berlin')
    await address.getByLabel('Postal code').fill('10115')
    await address.getByRole('button', { name: 'Preview' }).click()
    await address.getByRole('status').filter({ hasText: '10115 Berlin' }).filter({ hasText: 'Germany' }).waitFor()
    await checkAccessibility(page, `address preview at ${size}`)
    await address.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const moved = (await admin(h.server, 'GET', `/subscriptions/${id}`)).shipping_address
    assert.deepEqual([moved.country_iso, moved.city, moved.zipcode], ['DE', 'Berlin', '10115'])

    // Payment: none, previewed and saved.
    await page.locator('section').filter({ has: page.getByRole('heading', { name: 'Payment' }) }).getByRole('button', { name: 'Edit' }).click()
    const payment = page.getByRole('dialog', { name: 'Change the payment' })
    await payment.getByLabel('Payment source').selectOption({ label: 'No payment details' })
    await payment.getByRole('status').filter({ hasText: 'Payment' }).waitFor()
    await payment.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const paid = await admin(h.server, 'GET', `/subscriptions/${id}`)
    assert.deepEqual([paid.payment_method_id, paid.payment_source_id], [null, null])
    await noRawNames(page, `subscription at ${size}`)
    assert.ok(await overflow(page) <= 0, 'nothing wider than the screen')
    assert.deepEqual(problems, [])
  })

  test(`only the actions the state allows; a change refused meanwhile shows the API's words; a dialog closed gives focus back (${size})`, async (t) => {
    const { h, shop, id, page, problems } = await openMain(t, viewport)

    // Escape and Cancel both close the dialog and give the focus back to its opener, enabled.
    for (const close of ['Escape', 'Cancel'] as const) {
      const opener = page.getByRole('button', { name: 'Pause', exact: true })
      await opener.click()
      const dialog = page.getByRole('dialog', { name: 'Pause' })
      await dialog.getByRole('status').filter({ hasText: 'What will change' }).waitFor()
      if (close === 'Escape') await page.keyboard.press('Escape')
      else await dialog.getByRole('button', { name: 'Cancel', exact: true }).click()
      // The dialog leaves the accessibility tree when it closes, and the page then moves the focus.
      await noDialog(page)
      assert.equal(await focused(page), 'Pause', `${close}: focus on the opener`)
      assert.equal(await opener.isEnabled(), true, `${close}: the opener is enabled again`)
    }

    // Paused in another tab: the skip's preview is the API's refusal, its field named.
    await page.getByRole('button', { name: 'Skip next delivery' }).click()
    const skip = page.getByRole('dialog', { name: 'Skip next delivery' })
    await skip.getByRole('status').filter({ hasText: 'What will change' }).waitFor()
    await skip.getByRole('button', { name: 'Cancel', exact: true }).click()
    await admin(h.server, 'POST', `/subscriptions/${id}/pause`)
    await page.getByRole('button', { name: 'Skip next delivery' }).click()
    await skip.getByRole('alert').filter({ hasText: /Paused: cannot skip a subscription which is paused/ }).waitFor()
    await checkAccessibility(page, `refused skip at ${size}`)
    await page.keyboard.press('Escape')
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${id}`)).skip_count, 0)

    // Drawn again, paused: Resume, and no Skip nor Pause.
    await page.reload()
    await page.getByRole('heading', { name: `Subscription #${id}`, level: 1 }).waitFor()
    assert.deepEqual(await offered(page), ['Resume', 'Cancel subscription', 'Change schedule'])
    await page.getByRole('button', { name: 'Resume' }).click()
    const resume = page.getByRole('dialog', { name: 'Resume' })
    await resume.getByRole('status').filter({ hasText: 'Paused' }).waitFor()
    assert.match(await resume.getByRole('status').innerText(), /Paused\s*Yes\s*→?\s*becomes\s*No/)
    await resume.getByRole('button', { name: 'Resume' }).click()
    await notice(page).filter({ hasText: 'Resumed. The next delivery is on November 26, 2026.' }).waitFor()

    // Canceled: only Reactivate.
    await admin(h.server, 'POST', `/subscriptions/${id}/cancel`)
    await page.reload()
    await page.getByRole('heading', { name: `Subscription #${id}`, level: 1 }).waitFor()
    assert.deepEqual(await offered(page), ['Reactivate'])
    await page.getByRole('button', { name: 'Reactivate' }).click()
    await page.getByRole('dialog', { name: 'Reactivate' }).getByRole('status').filter({ hasText: 'Active' }).waitFor()
    await checkAccessibility(page, `reactivate preview at ${size}`)
    await page.getByRole('dialog', { name: 'Reactivate' }).getByRole('button', { name: 'Reactivate' }).click()
    await notice(page).filter({ hasText: 'Reactivated.' }).waitFor()

    // Its installment was abandoned by the cancellation: no outcome can be recorded for it (C9).
    const installments = page.locator('section').filter({ has: page.getByRole('heading', { name: 'Installments' }) })
    await installments.getByText('Abandoned').first().waitFor()
    assert.equal(await installments.getByRole('button', { name: 'Record outcome' }).count(), 0)
    assert.deepEqual(problems, [])
  })
}
