/**
 * The portal as a customer's daily tool (issue 28, C18), at a desktop's 1280×800 and a phone's
 * 390×844: swap a product, undo a pending cancellation and reactivate a canceled subscription,
 * each shown first as a dry run that changes nothing; past and upcoming deliveries with their
 * states; messages beside the form they are about, focused, with the refused field marked and
 * named as people name it; a refusal caused elsewhere (another tab) shows the subscription as it
 * now is. axe on every new state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { portalLink, startHarness, type Page } from './harness.ts'
import { SIZES, admin, apiView, axe, customer, focused, inView, notice, screenshotOf, seedCatalog, seedCustomer } from './portal-shop.ts'
import { createSubscription } from '../helpers/server.ts'
import { testSql } from '../helpers/rows.ts'
import { processAsOf } from '../processing/helpers.ts'

/** The page's width fits the window: nothing scrolls sideways. */
async function fits(page: Page): Promise<void> {
  const [content, window] = await page.evaluate(() => [(globalThis as any).document.documentElement.scrollWidth, (globalThis as any).innerWidth])
  assert.ok(content <= window, `content ${content} px wide in a ${window} px window`)
}

test('swap a product, undo a pending cancellation and reactivate a canceled subscription, each previewed by a dry run that changes nothing', async (t) => {
  // 30 days of notice: a cancel of the delivery due 2026-12-10 (today 2026-11-25) leaves it pending.
  const h = await startHarness(t, { REPLENISH_CANCELLATION_NOTICE_DAYS: '30' })
  const catalog = await seedCatalog(h.server)
  for (const size of SIZES) {
    const { user, sub } = await seedCustomer(h.server, catalog, `${size.name}@example.com`)
    const later = await createSubscription(h.server, user.key, { actionable_date: '2027-03-03', line_items_attributes: [{ subscribable_id: catalog.tea.id, quantity: 1 }] })
    const { page, problems } = await h.newPage({ viewport: size })
    await page.goto(await portalLink(h.server, user.id))
    await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
    await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()

    // Swap: the dialog shows the items the change leaves; until confirmed, nothing changed.
    await page.getByLabel('Swap Coffee beans 1 kg for').selectOption({ label: 'Secret Oolong' })
    await page.getByRole('button', { name: 'Swap Coffee beans 1 kg' }).click()
    const swap = page.getByRole('dialog', { name: 'Swap Coffee beans 1 kg for Secret Oolong?' })
    await swap.getByText('Secret Oolong × 2, Paper filters × 1').waitFor()
    await axe(t, page, `swap preview (${size.name})`)
    let api = await apiView(h.server, user.key, sub.id)
    assert.deepEqual([api.sub.line_items[0].subscribable_id, api.events], [catalog.coffee.id, ['subscription.created']])
    await swap.getByRole('button', { name: 'Yes, swap it' }).click()
    await notice(page, 'The item was swapped.')
    assert.equal((await focused(page)).text, 'The item was swapped.')
    api = await apiView(h.server, user.key, sub.id)
    assert.deepEqual(api.sub.line_items.map((li: any) => [li.subscribable_id, li.quantity]), [[catalog.tea.id, 2], [catalog.filters.id, 1]])
    assert.equal(api.events.at(-1), 'line_item.updated')
    await page.getByText('Secret Oolong × 2, Paper filters × 1').first().waitFor()
    // The line's new "swap for" list offers its own choices, one of them chosen: the one picked
    // before is not among them, and a list left blank would swap for nothing.
    const swapAgain = page.getByLabel('Swap Secret Oolong for')
    const offered = await swapAgain.locator('option').evaluateAll((os) => os.map((o) => (o as unknown as { value: string }).value))
    assert.ok(offered.includes(await swapAgain.inputValue()), `chosen ${JSON.stringify(await swapAgain.inputValue())} of ${JSON.stringify(offered)}`)

    // Cancel within the notice: the preview says the next delivery is still sent.
    await page.getByRole('button', { name: 'Cancel subscription' }).click()
    const cancel = page.getByRole('dialog', { name: 'Cancel this subscription?' })
    await cancel.getByText('The shop needs notice: the delivery on December 10, 2026 is still sent, then the subscription ends.').waitFor()
    await cancel.getByRole('definition').filter({ hasText: 'Cancellation pending' }).waitFor()
    await cancel.getByRole('button', { name: 'Yes, cancel it' }).click()
    await notice(page, 'Cancellation requested: the next delivery is still sent.')
    assert.equal((await apiView(h.server, user.key, sub.id)).sub.state, 'pending_cancellation')
    await page.getByText('You asked to cancel: the delivery on December 10, 2026 is still sent, then the subscription ends.').waitFor()
    assert.equal(await page.getByRole('button', { name: 'Cancel subscription' }).count(), 0)
    await axe(t, page, `pending cancellation (${size.name})`)
    await fits(page)

    // Undo it: C8's activate, whose new date the preview shows before the customer agrees.
    await page.getByRole('button', { name: 'Undo cancellation' }).click()
    const undo = page.getByRole('dialog', { name: 'Keep this subscription?' })
    await undo.getByRole('definition').filter({ hasText: 'December 25, 2026' }).waitFor()
    await undo.getByRole('definition').filter({ hasText: 'Active' }).waitFor()
    assert.equal((await apiView(h.server, user.key, sub.id)).sub.state, 'pending_cancellation')
    await undo.getByRole('button', { name: 'Yes, keep it' }).click()
    await notice(page, 'Your subscription continues: the cancellation was undone.')
    api = await apiView(h.server, user.key, sub.id)
    assert.deepEqual([api.sub.state, api.sub.actionable_date, api.events.at(-1)], ['active', '2026-12-25', 'subscription.activated'])
    assert.equal(await page.locator('#next-delivery').textContent(), 'December 25, 2026')

    // A subscription canceled by the shop (or another tab): reactivate it, no date to set meanwhile.
    await admin(h.server, 'POST', `/subscriptions/${later.id}/cancel`)
    await page.goto(`${h.server.url}/portal/#/subscriptions/${later.id}`)
    await page.getByRole('heading', { name: `Subscription #${later.id}` }).waitFor()
    assert.equal(await page.getByRole('button', { name: 'Set next delivery' }).count(), 0)
    assert.equal(await page.getByRole('button', { name: 'Skip next delivery' }).count(), 0)
    await axe(t, page, `canceled (${size.name})`)
    await page.getByRole('button', { name: 'Reactivate subscription' }).click()
    const reactivate = page.getByRole('dialog', { name: 'Reactivate this subscription?' })
    await reactivate.getByRole('definition').filter({ hasText: 'December 25, 2026' }).waitFor()
    await axe(t, page, `reactivate preview (${size.name})`)
    assert.equal((await apiView(h.server, user.key, later.id)).sub.state, 'canceled')
    await reactivate.getByRole('button', { name: 'Yes, reactivate it' }).click()
    await notice(page, 'The subscription is active again.')
    api = await apiView(h.server, user.key, later.id)
    assert.deepEqual([api.sub.state, api.sub.actionable_date, api.events.at(-1)], ['active', '2026-12-25', 'subscription.activated'])
    await page.getByRole('button', { name: 'Skip next delivery' }).waitFor()
    assert.deepEqual(problems, [])
  }
})

test('deliveries: the planned one, those being prepared or retried, and past ones sent or not, in Spanish, with older ones a page further', async (t) => {
  const h = await startHarness(t)
  const catalog = await seedCatalog(h.server)
  const user = await customer(h.server, 'dora@example.com')
  // A plan from August, made by the shop (which may date it in the past), processed each month since.
  const sub = await admin(h.server, 'POST', '/subscriptions', { subscription: {
    user_id: user.id, interval_length: 1, interval_units: 'month', actionable_date: '2026-08-25',
    line_items_attributes: [{ subscribable_id: catalog.coffee.id, quantity: 2 }],
  } })
  for (const date of ['2026-08-25', '2026-09-25', '2026-10-25', '2026-11-25']) await processAsOf(h.server, date)
  const [aug, sep, oct] = ((await admin(h.server, 'GET', `/installments?subscription_id=${sub.id}`)).installments as any[])
  await admin(h.server, 'POST', `/installments/${aug.id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-1' } })
  await admin(h.server, 'POST', `/installments/${oct.id}/outcome`, { outcome: { result: 'out_of_stock' } })
  await testSql(h.server.store).run("UPDATE installments SET state = 'abandoned' WHERE id = ?", sep.id)

  for (const size of SIZES) {
    const { page, problems } = await h.newPage({ viewport: size, locale: 'es-ES' })
    await page.goto(await portalLink(h.server, user.id))
    await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
    const deliveries = page.getByRole('region', { name: 'Entregas' })
    await deliveries.waitFor()
    const upcoming = await deliveries.locator('ul').nth(0).getByRole('listitem').allInnerTexts()
    const past = await deliveries.locator('ul').nth(1).getByRole('listitem').allInnerTexts()
    const flat = (texts: string[]) => texts.map((s) => s.replace(/\s+/g, ' ').trim())
    assert.deepEqual(flat(upcoming).map((s) => s.replace(/Próximo intento el .*/, 'Próximo intento el …')), [
      '25 de diciembre de 2026 Prevista Coffee beans 1 kg × 2 22,50 US$ (Ahorra 2,50 US$) a los precios actuales',
      '25 de noviembre de 2026 En preparación Coffee beans 1 kg × 2 22,50 US$ (Ahorra 2,50 US$)',
      '25 de octubre de 2026 Retrasada, se reintentará Coffee beans 1 kg × 2 22,50 US$ (Ahorra 2,50 US$) Próximo intento el …',
    ])
    assert.deepEqual(flat(past), [
      '25 de septiembre de 2026 No enviada Coffee beans 1 kg × 2 22,50 US$ (Ahorra 2,50 US$)',
      '25 de agosto de 2026 Enviada Coffee beans 1 kg × 2 22,50 US$ (Ahorra 2,50 US$)',
    ])
    // No state is left in the API's words.
    const text = await page.locator('main').innerText()
    for (const raw of ['pending', 'retrying', 'fulfilled', 'abandoned']) assert.ok(!text.includes(raw), `the page says "${raw}"`)
    await axe(t, page, `deliveries (${size.name}, es)`)
    await fits(page)
    assert.equal(await page.getByRole('button', { name: 'Ver entregas anteriores' }).count(), 0)
    assert.deepEqual(problems, [])
  }

  // Twenty-two older deliveries: the first page shows twenty, the button the rest, focused on the first of them.
  const now = new Date().toISOString()
  for (let month = 1; month <= 22; month++) {
    const due = `${2024 + Math.floor((month - 1) / 12)}-${String(((month - 1) % 12) + 1).padStart(2, '0')}-25`
    await testSql(h.server.store).run(`INSERT INTO installments (subscription_id, due_date, state, line_items, currency, created_at, updated_at)
      VALUES (?, ?, 'fulfilled', '[]', 'USD', ?, ?)`, sub.id, due, now, now)
  }
  const { page, problems } = await h.newPage({ viewport: SIZES[1] })
  await page.goto(await portalLink(h.server, user.id))
  await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
  const deliveries = page.getByRole('region', { name: 'Deliveries' })
  await deliveries.waitFor()
  assert.equal(await deliveries.getByRole('listitem').count(), 1 + 20) // the planned one and the first page
  await page.getByRole('button', { name: 'Show older deliveries' }).click()
  await deliveries.getByText('January 25, 2024').waitFor()
  assert.equal(await deliveries.getByRole('listitem').count(), 1 + 26)
  assert.equal(await page.getByRole('button', { name: 'Show older deliveries' }).count(), 0)
  assert.ok((await focused(page)).text.startsWith('June 25, 2024'), 'the first of the older deliveries has the focus')
  assert.deepEqual(problems, [])
})

test('a message stands beside its form, takes the focus and marks the field; fields are named as people name them; nothing changed is said so', async (t) => {
  const h = await startHarness(t, { REPLENISH_MAX_SUCCESSIVE_SKIPS: '1' })
  const catalog = await seedCatalog(h.server)
  for (const size of SIZES) {
    const { user, sub } = await seedCustomer(h.server, catalog, `${size.name}@example.com`)
    const { page, problems } = await h.newPage({ viewport: size })
    await page.goto(await portalLink(h.server, user.id))
    await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
    await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
    const item = sub.line_items[1].id as number

    // A refused quantity: the message is in the item's own place, in view and focused; the input is marked and keeps what was typed.
    const quantity = page.getByLabel('Quantity of Paper filters', { exact: true })
    await quantity.fill('0')
    await page.getByRole('button', { name: 'Update quantity of Paper filters' }).click()
    const message = page.locator(`#item-${item}-outcome [role="alert"]`)
    await message.filter({ hasText: 'Quantity: must be greater than 0' }).waitFor()
    assert.equal((await focused(page)).id, `item-${item}-outcome-message`)
    assert.ok(await inView(page, `#item-${item}-outcome-message`), 'the message is on screen')
    assert.equal(await quantity.getAttribute('aria-invalid'), 'true')
    assert.equal(await quantity.getAttribute('aria-describedby'), `item-${item}-outcome-message`)
    assert.equal(await quantity.inputValue(), '0')
    await axe(t, page, `refused quantity (${size.name})`)
    if (size.name === 'phone') await screenshotOf(page, 'portal-refused-phone')

    // Fixed, the mark goes; a skip limit's refusal (from the preview's dry run) is the API's sentence, not "successive_skip_count: …".
    await quantity.fill('3')
    await page.getByRole('button', { name: 'Update quantity of Paper filters' }).click()
    await notice(page, 'The quantity was changed.')
    assert.equal(await quantity.getAttribute('aria-invalid'), null)
    await page.getByRole('button', { name: 'Skip next delivery' }).click()
    await page.getByRole('dialog', { name: 'Skip the next delivery?' }).getByRole('button', { name: 'Yes, skip it' }).click()
    await notice(page, 'The next delivery was skipped.')
    await page.getByRole('button', { name: 'Skip next delivery' }).click()
    const limit = page.locator('#skip-outcome [role="alert"]')
    await limit.filter({ hasText: 'This subscription has exceeded the maximum configured successive skip limit.' }).waitFor()
    assert.equal(await page.getByRole('dialog').count(), 0)
    assert.equal((await focused(page)).id, 'skip-outcome-message')
    assert.ok(!(await limit.innerText()).includes('successive_skip_count'))

    // An empty date is asked for beside its form; no request is made.
    const events = (await apiView(h.server, user.key, sub.id)).events.length
    await page.getByLabel('Next delivery', { exact: true }).fill('')
    await page.getByRole('button', { name: 'Set next delivery' }).click()
    await page.locator('#save-next-date-outcome [role="alert"]').filter({ hasText: 'Choose a date.' }).waitFor()
    assert.equal(await page.getByLabel('Next delivery', { exact: true }).getAttribute('aria-invalid'), 'true')
    assert.ok(await inView(page, '#save-next-date-outcome-message'))
    // The date it already has: the API changes nothing, and the page says so instead of "changed".
    const current = (await apiView(h.server, user.key, sub.id)).sub.actionable_date
    await page.getByLabel('Next delivery', { exact: true }).fill(current)
    await page.getByRole('button', { name: 'Set next delivery' }).click()
    await page.locator('#save-next-date-outcome [role="status"]').filter({ hasText: 'Nothing was changed.' }).waitFor()
    assert.equal(await page.getByText('The next delivery date was changed.').count(), 0)
    assert.equal((await apiView(h.server, user.key, sub.id)).events.length, events)
    await axe(t, page, `nothing changed (${size.name})`)

    // The address: every missing field is marked and named by its label; what was typed stays.
    await page.getByLabel('First name').fill('Ada')
    await page.getByLabel('City').fill('')
    await page.getByRole('button', { name: 'Save address' }).click()
    const address = page.locator('#save-address-outcome [role="alert"]')
    await address.waitFor()
    const lines = (await address.getByRole('listitem').allInnerTexts()).sort()
    assert.deepEqual(lines, ["Address: can't be blank", "City: can't be blank", "Country code (2 letters): can't be blank", "Postal code: can't be blank"])
    for (const label of ['Address', 'City', 'Postal code', 'Country code (2 letters)']) {
      assert.equal(await page.getByLabel(label, { exact: true }).getAttribute('aria-invalid'), 'true', label)
    }
    assert.equal(await page.getByLabel('First name').getAttribute('aria-invalid'), null)
    assert.equal(await page.getByLabel('First name').inputValue(), 'Ada')
    assert.ok(await inView(page, '#save-address-outcome-message'))
    await axe(t, page, `refused address (${size.name})`)
    assert.deepEqual(problems, [])
  }
})

test('a refusal caused elsewhere (the subscription canceled in another tab) shows the subscription as it now is, with the reason in words', async (t) => {
  const h = await startHarness(t)
  const catalog = await seedCatalog(h.server)
  for (const size of SIZES) {
    const { user } = await seedCustomer(h.server, catalog, `${size.name}@example.com`)
    const { page, problems } = await h.newPage({ viewport: size })
    await page.goto(await portalLink(h.server, user.id))
    const tries = [
      { what: 'pause', act: async () => {
        await page.getByLabel('Pause until').fill('2027-01-15')
        await page.getByRole('button', { name: 'Pause', exact: true }).click()
      }, card: 'delivery', says: 'Cannot pause/resume a subscription which is not active.', raw: 'paused:' },
      { what: 'skip', act: () => page.getByRole('button', { name: 'Skip next delivery' }).click(), card: 'delivery', says: 'Cannot skip a subscription which is canceled or inactive.', raw: 'state:' },
      { what: 'next date', act: async () => {
        await page.getByLabel('Next delivery', { exact: true }).fill('2027-01-15')
        await page.getByRole('button', { name: 'Set next delivery' }).click()
      }, card: 'schedule', says: 'Next delivery: cannot be set on a subscription which is canceled or inactive', raw: 'actionable_date' },
    ]
    for (const attempt of tries) {
      const sub = await createSubscription(h.server, user.key, { actionable_date: '2026-12-10', line_items_attributes: [{ subscribable_id: catalog.coffee.id, quantity: 1 }] })
      await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
      await page.getByText('Active', { exact: true }).waitFor()
      // Another tab (or the shop) cancels it meanwhile.
      await h.server.request('POST', `/api/v1/subscriptions/${sub.id}/cancel`, { key: user.key })
      await attempt.act()
      const message = page.locator(`#${attempt.card}-outcome [role="alert"]`)
      await message.filter({ hasText: attempt.says }).waitFor()
      assert.equal((await focused(page)).id, `${attempt.card}-outcome-message`, attempt.what)
      // The page shows the subscription as it is now: canceled, with only what that allows.
      await page.getByText('Canceled', { exact: true }).first().waitFor()
      assert.equal(await page.getByText('Active', { exact: true }).count(), 0, attempt.what)
      await page.getByRole('button', { name: 'Reactivate subscription' }).waitFor()
      const text = await page.locator('main').innerText()
      assert.ok(!text.includes(attempt.raw), `${attempt.what}: the page says "${attempt.raw}"`)
      const api = await apiView(h.server, user.key, sub.id)
      assert.deepEqual([api.sub.state, api.events.at(-1)], ['canceled', 'subscription.canceled'])
      await axe(t, page, `refused after a change elsewhere: ${attempt.what} (${size.name})`)
    }
    assert.deepEqual(problems, [])
  }
})

test("prices (C16): each line's price and the next delivery's total, following the catalog; a delivery keeps the total it froze; in German on the phone", async (t) => {
  const h = await startHarness(t)
  const coffee = await admin(h.server, 'POST', '/subscribables', { subscribable: { sku: 'COF-1KG', name: 'Coffee beans 1 kg', prices: { USD: '12.50', EUR: '11.90' }, discount_percent: '10' } })
  const filters = await admin(h.server, 'POST', '/subscribables', { subscribable: { sku: 'FLT-100', name: 'Paper filters', prices: { USD: '3.00' } } })
  await admin(h.server, 'POST', '/subscribables', { subscribable: { sku: 'TEA-SEC', name: 'Secret Oolong' } }) // no price yet
  const user = await customer(h.server, 'erin@example.com')
  const sub = await createSubscription(h.server, user.key, {
    actionable_date: '2026-12-10', interval_units: 'month',
    line_items_attributes: [{ subscribable_id: coffee.id, quantity: 2 }, { subscribable_id: filters.id, quantity: 1 }],
  })
  // A second plan due today, processed: its installment freezes 2 × 12.50 − 10 % = 22.50.
  const due = await admin(h.server, 'POST', '/subscriptions', { subscription: {
    user_id: user.id, interval_length: 1, interval_units: 'month', actionable_date: '2026-11-25', line_items_attributes: [{ subscribable_id: coffee.id, quantity: 2 }],
  } })
  await processAsOf(h.server, '2026-11-25')

  const { page, problems } = await h.newPage({ viewport: SIZES[0] })
  await page.goto(await portalLink(h.server, user.id))
  const card = page.getByRole('article').filter({ hasText: `Subscription #${sub.id}` })
  await card.getByText('$25.50 (You save $2.50)').waitFor()
  await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
  await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
  assert.equal(await page.locator('#next-total').textContent(), '$25.50 (You save $2.50)')
  const items = page.getByRole('region', { name: 'Items' })
  await items.getByText('2 × $12.50, 10% off = $22.50').waitFor()
  await items.getByText('1 × $3.00 = $3.00').waitFor()
  // The API's own figures, the same.
  let api = await apiView(h.server, user.key, sub.id)
  assert.deepEqual([api.sub.subtotal, api.sub.discount_total, api.sub.total], ['28.00', '2.50', '25.50'])

  // A new quantity shows its line and the total at once.
  await page.getByLabel('Quantity of Paper filters', { exact: true }).fill('3')
  await page.getByRole('button', { name: 'Update quantity of Paper filters' }).click()
  await notice(page, 'The quantity was changed.')
  await items.getByText('3 × $3.00 = $9.00').waitFor()
  assert.equal(await page.locator('#next-total').textContent(), '$31.50 (You save $2.50)')
  await page.getByRole('region', { name: 'Deliveries' }).getByText("$31.50 (You save $2.50) at today's prices").waitFor()

  // A swap's preview tells the new total before the customer agrees; an item without a price leaves no total to tell.
  await page.getByLabel('Swap Paper filters for').selectOption({ label: 'Secret Oolong' })
  await page.getByRole('button', { name: 'Swap Paper filters' }).click()
  const swap = page.getByRole('dialog', { name: 'Swap Paper filters for Secret Oolong?' })
  await swap.getByText('Coffee beans 1 kg × 2, Secret Oolong × 3').waitFor()
  assert.equal(await swap.getByText('Next delivery total').count(), 0)
  await swap.getByRole('button', { name: 'Go back' }).click()
  await swap.waitFor({ state: 'detached' })
  assert.equal((await apiView(h.server, user.key, sub.id)).sub.total, '31.50')

  // The shop raises the price: the subscription follows it, the installment keeps what it froze.
  await admin(h.server, 'PATCH', `/subscribables/${coffee.id}`, { subscribable: { prices: { USD: '14.00' } } })
  await page.goto(`${h.server.url}/portal/#/subscriptions/${due.id}`)
  await page.getByRole('heading', { name: `Subscription #${due.id}` }).waitFor()
  assert.equal(await page.locator('#next-total').textContent(), '$25.20 (You save $2.80)')
  const deliveries = page.getByRole('region', { name: 'Deliveries' })
  await deliveries.getByRole('listitem').filter({ hasText: 'December 25, 2026' }).getByText("$25.20 (You save $2.80) at today's prices").waitFor()
  await deliveries.getByRole('listitem').filter({ hasText: 'November 25, 2026' }).getByText('$22.50 (You save $2.50)', { exact: true }).waitFor()
  await screenshotOf(deliveries, 'portal-deliveries')
  await axe(t, page, 'prices and frozen totals')
  assert.deepEqual(problems, [])

  // In German on a phone: the language's way of writing money.
  const phone = await h.newPage({ viewport: SIZES[1], locale: 'de-DE' })
  await phone.page.goto(await portalLink(h.server, user.id))
  await phone.page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
  await phone.page.getByRole('heading', { name: `Abonnement Nr. ${sub.id}` }).waitFor()
  assert.equal((await phone.page.locator('#next-total').textContent())?.replace(/\s/g, ' '), '34,20 $ (Sie sparen 2,80 $)')
  await phone.page.getByText(/^2 × 14,00\s\$, 10\s%\sRabatt = 25,20\s\$$/).waitFor() // Intl's no-break spaces
  await axe(t, phone.page, 'prices (de, phone)')
  await fits(phone.page)
  assert.deepEqual(phone.problems, [])
  api = await apiView(h.server, user.key, sub.id)
  assert.equal(api.sub.total, '34.20')
})

test('e-mail settings (C17): the customer turns e-mails off and picks a language; the answer is said beside the form; a refused value is marked', async (t) => {
  const h = await startHarness(t)
  for (const size of SIZES) {
    const user = await customer(h.server, `${size.name}@example.com`)
    const { page, problems } = await h.newPage({ viewport: size })
    await page.goto(await portalLink(h.server, user.id))
    const settings = page.getByRole('region', { name: 'E-mail' })
    await settings.waitFor()
    const box = page.getByLabel('Send me e-mails about my deliveries (a reminder before each one, a failed payment, a cancellation)')
    assert.equal(await box.isChecked(), true)
    await box.uncheck()
    await page.getByLabel('Language of my e-mails').selectOption('de')
    await page.getByRole('button', { name: 'Save e-mail settings' }).click()
    await page.locator('#save-email-settings-outcome [role="status"]').filter({ hasText: 'Your e-mail settings were saved.' }).waitFor()
    assert.equal((await focused(page)).id, 'save-email-settings-outcome-message')
    const shown = await admin(h.server, 'GET', `/users/${user.id}`)
    assert.deepEqual([shown.email_notifications, shown.locale], [false, 'de'])
    // Saved again as it is: said so.
    await page.getByRole('button', { name: 'Save e-mail settings' }).click()
    await page.locator('#save-email-settings-outcome [role="status"]').filter({ hasText: 'Nothing was changed.' }).waitFor()
    await axe(t, page, `e-mail settings saved (${size.name})`)

    // A language the API does not know (a page of an older version could offer one): its 422 beside the form, the field marked.
    await page.evaluate(() => {
      const doc = (globalThis as any).document
      const option = doc.createElement('option')
      option.value = 'it'
      option.textContent = 'Italiano'
      doc.getElementById('email-locale').append(option)
    })
    await page.getByLabel('Language of my e-mails').selectOption('it')
    await page.getByRole('button', { name: 'Save e-mail settings' }).click()
    await page.locator('#save-email-settings-outcome [role="alert"]').filter({ hasText: 'Language: is not included in the list' }).waitFor()
    assert.equal(await page.getByLabel('Language of my e-mails').getAttribute('aria-invalid'), 'true')
    assert.equal((await focused(page)).id, 'save-email-settings-outcome-message')
    assert.equal((await admin(h.server, 'GET', `/users/${user.id}`)).locale, 'de')
    await axe(t, page, `e-mail settings refused (${size.name})`)
    assert.deepEqual(problems, [])
  }
})

test('"Add to my next delivery only" at both sizes: a refusal stands beside the add form, focused; added, the line is one_time and marked "Next delivery only"', async (t) => {
  const h = await startHarness(t)
  const catalog = await seedCatalog(h.server)
  for (const size of SIZES) {
    const { user, sub } = await seedCustomer(h.server, catalog, `once-${size.name}@example.com`)
    const { page, problems } = await h.newPage({ viewport: size })
    await page.goto(await portalLink(h.server, user.id))
    await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
    await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()

    await page.getByLabel('Add an item').selectOption({ label: 'Secret Oolong' })
    await page.getByLabel('Add to my next delivery only').check()
    await page.getByLabel('Quantity', { exact: true }).fill('0')
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    const refusal = page.locator('#add-outcome [role="alert"]')
    await refusal.filter({ hasText: 'Quantity: must be greater than 0' }).waitFor()
    assert.equal((await focused(page)).id, 'add-outcome-message')
    assert.ok(await inView(page, '#add-outcome-message'), 'the message is on screen')
    assert.equal((await apiView(h.server, user.key, sub.id)).sub.line_items.length, 2, 'nothing added')
    await axe(t, page, `refused one-time add (${size.name})`)

    await page.getByLabel('Quantity', { exact: true }).fill('1')
    assert.equal(await page.getByLabel('Add to my next delivery only').isChecked(), true, 'the box stays ticked after the refusal')
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await notice(page, 'The item was added to your next delivery only.')
    const api = await apiView(h.server, user.key, sub.id)
    assert.deepEqual(api.sub.line_items.map((li: any) => [li.subscribable_id, li.one_time]).at(-1), [catalog.tea.id, true])
    const line = page.locator('li.item').filter({ has: page.locator('.item-name', { hasText: 'Secret Oolong' }) })
    await line.getByText('Next delivery only').waitFor()
    await fits(page)
    await axe(t, page, `one-time line (${size.name})`)
    assert.deepEqual(problems, [])
  }
})
