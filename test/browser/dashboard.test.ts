/**
 * The staff dashboard in a real browser (issue 19, docs/console.md): sign-in with a pasted
 * token, finding and changing a subscription, recording an outcome, a webhook secret shown once,
 * a `read` token that can change nothing (no controls, and the API's 403 when forced), axe on
 * every page, the narrow layout, and the screenshots docs/console/dashboard.png and
 * subscription-detail.png.
 */
import { test } from 'node:test'
import { createServer } from 'node:http'
import assert from 'node:assert/strict'
import { ADMIN_TOKEN, TODAY, checkAccessibility, screenshot, startHarness, type Page } from './harness.ts'
import { PHONE, WIDE, A, admin, customer, failure, notice, open, overflow, seedShop, signIn } from './console-shop.ts'
import { createSubscription } from '../helpers/server.ts'

test('staff sign in, find a subscription, skip it, record an outcome and register a webhook endpoint', async (t) => {
  const h = await startHarness(t)
  const shop = await seedShop(h.server)
  const { page, problems } = await h.newPage()

  // One of Bob's deliveries fulfilled: the revenue chart has a bar (C16).
  await admin(h.server, 'POST', `/installments/${shop.installments[3].id}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-7001' } })
  await signIn(page, h.server.url, ADMIN_TOKEN)
  await page.getByRole('figure').first().waitFor()
  assert.equal(await page.locator('.stat').filter({ hasText: 'Subscriptions' }).getByRole('definition').first().textContent(), '28')
  await screenshot(page, 'dashboard')
  await checkAccessibility(page, 'overview')

  // Find Alice's subscription by her email.
  await open(page, 'Subscriptions')
  await page.getByLabel('Customer', { exact: true }).fill('alice@example.com')
  await page.getByRole('search', { name: 'Find subscriptions' }).getByRole('button', { name: 'Search' }).click()
  await page.locator(`main a[href="#/subscriptions/${shop.main.id}"]`).click()
  await page.getByRole('heading', { name: `Subscription #${shop.main.id}`, level: 1 }).waitFor()
  await page.getByText('Coffee beans 1 kg (COF-1KG)').first().waitFor()
  await page.getByRole('list').filter({ hasText: 'Delivery prepared' }).filter({ hasText: 'Subscription created' }).waitFor()
  await screenshot(page, 'subscription-detail')
  await checkAccessibility(page, 'subscription detail')

  // Skip it: previewed (a dry run) and confirmed in a dialog, done by the API.
  await page.getByRole('button', { name: 'Skip next delivery' }).click()
  const dialog = page.getByRole('dialog', { name: 'Skip next delivery' })
  await dialog.getByRole('status').filter({ hasText: 'What will change' }).waitFor()
  await screenshot(page, 'subscription-preview', { fullPage: false })
  await checkAccessibility(page, 'skip dialog')
  await dialog.getByRole('button', { name: 'Skip next delivery' }).click()
  await notice(page).filter({ hasText: 'Skipped. The next delivery is on January 25, 2027.' }).waitFor()
  const skipped = await admin(h.server, 'GET', `/subscriptions/${shop.main.id}`)
  assert.deepEqual([skipped.actionable_date, skipped.skip_count], ['2027-01-25', 1])
  assert.equal((await admin(h.server, 'GET', `/subscriptions/${shop.main.id}/events`)).events[0].type, 'subscription.skipped')

  // Paused (a resume date before today moves to tomorrow, C8): Skip and Pause are offered no more.
  await page.getByRole('button', { name: 'Pause' }).click()
  await page.getByRole('dialog').getByLabel('Resume automatically on (optional)').fill('2020-01-01')
  await page.getByRole('dialog').getByRole('button', { name: 'Preview' }).click()
  await page.getByRole('dialog').getByRole('status').filter({ hasText: 'November 26, 2026' }).waitFor()
  await page.getByRole('dialog').getByRole('button', { name: 'Pause' }).click()
  await notice(page).filter({ hasText: 'Paused.' }).waitFor()
  assert.equal(await page.getByRole('button', { name: 'Skip next delivery' }).count(), 0)
  await page.getByRole('button', { name: 'Resume' }).waitFor()
  assert.equal((await admin(h.server, 'GET', `/subscriptions/${shop.main.id}`)).skip_count, 1)

  // Record an outcome for an installment.
  await open(page, 'Installments')
  await page.getByLabel('State').selectOption('pending')
  await page.getByRole('search', { name: 'Filter installments' }).getByRole('button', { name: 'Search' }).click()
  const target = shop.installments[1].id as number
  await page.getByRole('row', { name: new RegExp(`^#${target}\\b`) }).getByRole('button', { name: 'Record outcome' }).click()
  const outcome = page.getByRole('dialog', { name: `Record the outcome of installment #${target}` })
  await outcome.getByLabel('Result').selectOption('fulfilled')
  await outcome.getByLabel('Order reference').fill('R-7731')
  await checkAccessibility(page, 'outcome dialog')
  await outcome.getByRole('button', { name: 'Record outcome' }).click()
  await notice(page).filter({ hasText: `Outcome recorded. Installment #${target} is now: Fulfilled.` }).waitFor()
  const recorded = await admin(h.server, 'GET', `/installments/${target}`)
  assert.deepEqual([recorded.state, recorded.attempts.map((a: any) => [a.result, a.order_reference])], ['fulfilled', [['fulfilled', 'R-7731']]])
  // Fulfilled: no outcome may be recorded for it any more (C9), so none is offered.
  await page.getByLabel('State').selectOption('')
  await page.getByRole('search', { name: 'Filter installments' }).getByRole('button', { name: 'Search' }).click()
  await page.getByRole('row', { name: new RegExp(`^#${target}\\b`) }).filter({ hasText: 'Fulfilled' }).waitFor()
  assert.equal(await page.getByRole('row', { name: new RegExp(`^#${target}\\b`) }).getByRole('button', { name: 'Record outcome' }).count(), 0)

  // Register a webhook endpoint: the secret is shown once, and not after a reload.
  await open(page, 'Webhooks')
  await page.getByLabel('URL', { exact: true }).fill('https://shop.example/hooks/replenish')
  await page.getByLabel('Description').fill('Order system')
  await page.getByRole('button', { name: 'Create' }).click()
  const secretBox = page.getByLabel('Signing secret')
  await secretBox.waitFor()
  const secret = await secretBox.inputValue()
  assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/)
  await checkAccessibility(page, 'webhooks with the secret')
  const endpoints = (await admin(h.server, 'GET', '/webhook_endpoints')).webhook_endpoints
  assert.deepEqual(endpoints.map((e: any) => [e.url, e.events, e.description]), [['https://shop.example/hooks/replenish', ['*'], 'Order system']])
  await page.reload()
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor()
  await page.getByText('https://shop.example/hooks/replenish').waitFor()
  assert.equal(await page.getByLabel('Signing secret').count(), 0)
  assert.ok(!(await page.content()).includes(secret), 'the secret is nowhere in the page after a reload')
  assert.ok(!JSON.stringify(await page.evaluate(() => ({ ...sessionStorage }))).includes(secret), 'nor in the session storage')

  assert.deepEqual(problems, [])
})

test('every dashboard page has no serious or critical axe violation, at 1280 × 800 and on a 390 × 844 phone (menu open too)', async (t) => {
  const h = await startHarness(t)
  const shop = await seedShop(h.server)
  const hook = await admin(h.server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hook', events: ['*'] } })
  await admin(h.server, 'POST', `/subscriptions/${shop.main.id}/skip`)
  await admin(h.server, 'POST', '/admin_tokens', { admin_token: { scope: 'read', label: 'A label of a hundred characters, as a person may type one to say which desk and which shop use it ok' } })
  const pages: [string, string][] = [
    ['', 'Overview'], ['subscriptions', 'Subscriptions'], [`subscriptions/${shop.main.id}`, `Subscription #${shop.main.id}`],
    ['customers', 'Customers'], [`customers/${shop.alice.id}`, `Customer #${shop.alice.id}`], ['catalog', 'Catalog'],
    ['installments', 'Installments'], ['webhooks', 'Webhooks'], [`webhooks/${hook.id}`, `Deliveries to endpoint #${hook.id}`], ['tokens', 'Admin tokens'],
    ['search?q=alice', 'Search'],
  ]
  const minor: string[] = []
  let checked = 0
  const axe = async (page: Page, label: string) => {
    const result = await checkAccessibility(page, label)
    checked++
    minor.push(...result.violations.map((v) => `${label}: ${v.impact} ${v.id}`))
  }
  for (const viewport of [WIDE, PHONE]) {
    const { page, problems } = await h.newPage({ viewport })
    await page.goto(`${h.server.url}/admin/`)
    await page.getByLabel('Admin token').waitFor()
    await axe(page, `sign-in at ${viewport.width}`)
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()
    for (const [route, heading] of pages) {
      await page.goto(`${h.server.url}/admin/#/${route}`)
      await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
      await axe(page, `${heading} at ${viewport.width}`)
      // Nothing wider than the screen: on a phone tables become cards.
      const wider = await overflow(page)
      assert.ok(wider <= 0, `${heading} at ${viewport.width} px is ${wider} px too wide`)
    }
    if (viewport === PHONE) {
      // The navigation is folded into a menu; opened, it is checked too.
      assert.equal(await page.getByRole('navigation').getByRole('link', { name: 'Customers', exact: true }).isVisible(), false)
      await page.getByRole('button', { name: 'Menu' }).click()
      await page.getByRole('navigation').getByRole('link', { name: 'Customers', exact: true }).waitFor()
      assert.equal(await page.getByRole('button', { name: 'Menu' }).getAttribute('aria-expanded'), 'true')
      await axe(page, 'menu open at 390')
      await screenshot(page, 'dashboard-phone-menu', { fullPage: false })
    }
    assert.deepEqual(problems, [])
  }
  t.diagnostic(`axe: ${checked} page views, no serious or critical violation; minor or moderate: ${minor.length === 0 ? 'none' : minor.join('; ')}`)
})

test('a read token sees everything and can change nothing: no write controls, and a forced write is 403', async (t) => {
  const h = await startHarness(t)
  const shop = await seedShop(h.server)
  const reader = await admin(h.server, 'POST', '/admin_tokens', { admin_token: { scope: 'read', label: 'Support desk' } })
  const { page, problems } = await h.newPage()
  await signIn(page, h.server.url, reader.token)
  await page.getByText('Read-only: this token can look at everything but change nothing.').waitFor()
  await page.getByText('Signed in with Support desk (read)').waitFor()

  const noButtons = async (label: string) => {
    const names = await page.locator('main button').allTextContents()
    // Exports are reads: a read token may take them (C18).
    assert.deepEqual(names.filter((n) => !['Search', 'Show older', 'Next page', 'Export CSV'].includes(n)), [], `${label} offers no change`)
  }
  await page.goto(`${h.server.url}/admin/#/subscriptions/${shop.main.id}`)
  await page.getByRole('heading', { name: `Subscription #${shop.main.id}`, level: 1 }).waitFor()
  await page.getByText('Coffee beans 1 kg (COF-1KG)').first().waitFor()
  await noButtons('the subscription')
  for (const [route, heading] of [['installments', 'Installments'], ['catalog', 'Catalog'], ['webhooks', 'Webhooks']] as const) {
    await page.goto(`${h.server.url}/admin/#/${route}`)
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
    assert.equal(await page.locator('main form.create').count(), 0, `${heading} has no create form`)
    await noButtons(heading)
  }
  // The rows are there all the same: a read token sees everything.
  await page.goto(`${h.server.url}/admin/#/catalog`)
  await page.getByRole('cell', { name: 'Coffee beans 1 kg' }).waitFor()
  // Except the admin tokens, which the API keeps to scope admin (C13): no link, and its 403 if typed in.
  assert.equal(await page.getByRole('navigation').getByRole('link', { name: 'Admin tokens' }).count(), 0)
  await page.goto(`${h.server.url}/admin/#/tokens`)
  await page.getByRole('heading', { name: 'Admin tokens', level: 1 }).waitFor()
  await page.getByRole('alert').filter({ hasText: "This token's scope does not allow this request." }).waitFor()

  // Forced from the page with the session's own token, a write is the API's 403, and nothing changes.
  const forced = await page.evaluate(async (id) => {
    const token = sessionStorage.getItem('replenish.admin.token')
    const res = await fetch(`/admin/api/v1/subscriptions/${id}/skip`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    return { status: res.status, body: await res.json() }
  }, shop.main.id)
  assert.deepEqual(forced, { status: 403, body: { error: "This token's scope does not allow this request." } })
  assert.equal((await admin(h.server, 'GET', `/subscriptions/${shop.main.id}`)).skip_count, 0)
  assert.deepEqual(problems, [])
})

test('sign-in refuses a metrics token and an unknown one with the API\'s words, in the page\'s language', async (t) => {
  const h = await startHarness(t)
  const metrics = await admin(h.server, 'POST', '/admin_tokens', { admin_token: { scope: 'metrics' } })
  const { page, problems } = await h.newPage()
  await page.goto(`${h.server.url}/admin/`)
  await page.getByLabel('Admin token').fill(metrics.token)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: "This token's scope does not allow this request." }).waitFor()
  await page.getByLabel('Admin token').fill('not-a-token')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('alert').filter({ hasText: 'Invalid admin token.' }).waitFor()
  assert.equal(await page.evaluate(() => sessionStorage.length), 0, 'nothing kept')

  const { page: german } = await h.newPage({ locale: 'de-DE' })
  await german.goto(`${h.server.url}/admin/`)
  await german.getByLabel('Admin-Token').fill(ADMIN_TOKEN)
  await german.getByRole('button', { name: 'Anmelden' }).click()
  await german.getByRole('heading', { name: 'Übersicht', level: 1 }).waitFor()
  assert.deepEqual(problems, [])
})

test('a token revoked while signed in ends the session at the next page', async (t) => {
  const h = await startHarness(t)
  const writer = await admin(h.server, 'POST', '/admin_tokens', { admin_token: { scope: 'admin', label: 'Temp' } })
  const { page, problems } = await h.newPage()
  await signIn(page, h.server.url, writer.token)
  await admin(h.server, 'DELETE', `/admin_tokens/${writer.id}`)
  await page.getByRole('navigation').getByRole('link', { name: 'Customers', exact: true }).click()
  await page.getByRole('alert').filter({ hasText: 'You were signed out: Invalid admin token.' }).waitFor()
  assert.equal(await page.evaluate(() => sessionStorage.getItem('replenish.admin.token')), null)
  assert.deepEqual(problems, [])
})

test('catalog items and payment methods are created and edited; an admin token is shown once and revoked', async (t) => {
  const h = await startHarness(t)
  const { page, problems } = await h.newPage()
  await signIn(page, h.server.url, ADMIN_TOKEN)
  await open(page, 'Catalog')
  const newItem = page.getByRole('form', { name: 'New item' })
  await newItem.getByLabel('SKU').fill('TEA-250')
  await newItem.getByLabel('Name').fill('Green tea')
  await newItem.getByRole('button', { name: 'Create' }).click()
  await notice(page).filter({ hasText: 'Saved.' }).waitFor()
  // A duplicate SKU is the API's 422, shown on the form.
  await page.getByRole('form', { name: 'New item' }).getByLabel('SKU').fill('TEA-250')
  await page.getByRole('form', { name: 'New item' }).getByLabel('Name').fill('Other tea')
  await page.getByRole('form', { name: 'New item' }).getByRole('button', { name: 'Create' }).click()
  await page.getByRole('form', { name: 'New item' }).getByRole('alert').filter({ hasText: /SKU: has already been taken/ }).waitFor()
  const item = (await admin(h.server, 'GET', '/subscribables')).subscribables[0]
  await page.getByRole('row', { name: /Green tea/ }).getByRole('button', { name: 'Edit' }).click()
  const edit = page.getByRole('dialog', { name: `Edit item #${item.id}` })
  await edit.getByLabel('Name').fill('Green tea, loose')
  await edit.getByLabel('Can be subscribed to').uncheck()
  // Saved once its effect is shown (a dry run of the change).
  await edit.getByRole('status').filter({ hasText: 'Green tea, loose' }).filter({ hasText: 'Can be subscribed to' }).waitFor()
  await checkAccessibility(page, 'catalog edit preview')
  await edit.getByRole('button', { name: 'Save' }).click()
  await page.getByRole('cell', { name: 'Green tea, loose' }).waitFor()
  assert.deepEqual(await admin(h.server, 'GET', `/subscribables/${item.id}`).then((i: any) => [i.sku, i.name, i.subscribable]), ['TEA-250', 'Green tea, loose', false])
  const newMethod = page.getByRole('form', { name: 'New payment method' })
  await newMethod.getByLabel('Name').fill('SEPA debit')
  await newMethod.getByRole('button', { name: 'Create' }).click()
  await page.getByRole('cell', { name: 'SEPA debit' }).waitFor()
  assert.deepEqual((await admin(h.server, 'GET', '/payment_methods')).payment_methods.map((m: any) => [m.name, m.active]), [['SEPA debit', true]])

  await open(page, 'Admin tokens')
  await page.getByLabel('Scope').selectOption('read')
  await page.getByLabel('Label').fill('Accountant')
  await page.getByRole('button', { name: 'Create' }).click()
  const shown = await page.getByLabel('Token', { exact: true }).inputValue()
  const listed = (await admin(h.server, 'GET', '/admin_tokens')).admin_tokens
  assert.deepEqual(listed.map((x: any) => [x.label, x.scope, shown.startsWith(x.prefix)]), [['Accountant', 'read', true]])
  assert.equal((await h.server.request('GET', `${A}/admin_tokens/current`, { key: shown })).body.scope, 'read')
  await page.getByRole('row', { name: /Accountant/ }).getByRole('button', { name: 'Revoke' }).click()
  await page.getByRole('dialog', { name: 'Revoke' }).getByRole('button', { name: 'Revoke' }).click()
  await notice(page).filter({ hasText: 'Token revoked.' }).waitFor()
  assert.equal(await page.getByLabel('Token', { exact: true }).count(), 0)
  assert.equal((await h.server.request('GET', `${A}/admin_tokens/current`, { key: shown })).status, 401)
  assert.deepEqual(problems, [])
})

for (const viewport of [WIDE, PHONE]) {
  test(`a 100-character token label wraps: Revoke stays in the table (${viewport.width} px)`, async (t) => {
    const h = await startHarness(t)
    // No space to break at, as labels made by scripts often are.
    const label = 'MonthEndExportJob_AccountingDesk_SecondFloor_AskDanaBeforeRevokingIt_ShopExampleCom_EUWest1_Batch007'
    assert.equal(label.length, 100)
    const { page, problems } = await h.newPage({ viewport })
    await signIn(page, h.server.url, ADMIN_TOKEN)
    await open(page, 'Admin tokens')
    await page.getByLabel('Label').fill(label)
    await page.getByRole('button', { name: 'Create' }).click()
    await page.getByLabel('Token', { exact: true }).waitFor()
    const table = page.getByRole('region', { name: 'Admin tokens' })
    const revoke = table.getByRole('row').filter({ hasText: label }).getByRole('button', { name: 'Revoke' })
    const box = await revoke.boundingBox()
    const frame = await table.boundingBox()
    assert.ok(box && frame, 'both drawn')
    assert.ok(box.x >= frame.x && box.x + box.width <= frame.x + frame.width, `Revoke ${JSON.stringify(box)} inside the table ${JSON.stringify(frame)}`)
    assert.ok(box.x + box.width <= viewport.width, 'and on the screen')
    assert.ok(await overflow(page) <= 0)
    await checkAccessibility(page, `long label at ${viewport.width}`)
    assert.deepEqual(problems, [])
  })
}

test('a delivery is sent again: a 2xx is said to be a success, a 503 a failure (not "Sent again: 503.")', async (t) => {
  const h = await startHarness(t)
  const received: string[] = []
  let status = 204
  const receiver = await new Promise<import('node:http').Server>((resolve) => {
    const s = createServer((req, res) => {
      received.push(String(req.headers['replenish-event-id']))
      res.writeHead(status, { 'content-type': 'text/plain' }).end(status === 204 ? undefined : 'Service Unavailable: down for maintenance')
    })
    s.listen(0, '127.0.0.1', () => resolve(s))
  })
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())))
  const url = `http://127.0.0.1:${(receiver.address() as import('node:net').AddressInfo).port}/hook`
  const hook = await admin(h.server, 'POST', '/webhook_endpoints', { webhook_endpoint: { url, events: ['subscription.created'] } })
  const user = await customer(h.server, 'carol@example.com', 'shop-3')
  await createSubscription(h.server, user.key)
  const { page, problems } = await h.newPage()
  await signIn(page, h.server.url, ADMIN_TOKEN)
  await open(page, 'Webhooks')
  await page.getByRole('row').filter({ hasText: url }).getByRole('link', { name: 'Deliveries', exact: true }).click()
  await page.getByRole('heading', { name: `Deliveries to endpoint #${hook.id}`, level: 1 }).waitFor()
  await page.getByRole('cell', { name: /Subscription created/ }).waitFor()
  await checkAccessibility(page, 'deliveries')
  await page.getByRole('button', { name: 'Send again' }).click()
  await notice(page).filter({ hasText: 'Sent again: 204.' }).waitFor()
  await page.getByText('Attempts (1)').click()
  await page.getByText(/Status 204/).waitFor()
  const delivery = (await admin(h.server, 'GET', `/webhook_endpoints/${hook.id}/deliveries`)).deliveries[0]
  assert.deepEqual([delivery.state, delivery.attempts.length, received], ['delivered', 1, [String(delivery.event_id)]])

  // The endpoint now refuses: the page says the sending failed, as an alert, not a notice.
  status = 503
  await page.getByRole('button', { name: 'Send again' }).click()
  await failure(page).filter({ hasText: 'Sending again failed: 503.' }).waitFor()
  assert.equal(await notice(page).count(), 0)
  await checkAccessibility(page, 'failed redelivery')
  assert.deepEqual(problems, [])
})
