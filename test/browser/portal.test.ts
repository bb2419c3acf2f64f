/**
 * The customer portal in a real browser (issue 19, C14, docs/console.md): a customer opens a
 * one-time link and manages a subscription while the API shows each change and its event; used
 * and expired links are refused; another customer's subscription typed into the URL shows
 * nothing; a cross-site form post is refused for want of the CSRF token; axe finds nothing
 * serious on any page; screenshots docs/console/portal-list.png, portal-after-skip.png,
 * portal-preview.png and portal-narrow.png.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { TODAY, portalLink, screenshot, startHarness, startOtherOrigin, type TestServer } from './harness.ts'
import { admin, apiView, axe, customer, notice, screenshotOf, seedCatalog } from './portal-shop.ts'
import { createSubscription } from '../helpers/server.ts'
import { sqliteOf } from '../helpers/store.ts'
import { sha256 } from '../../src/api/kit/auth.ts'

/** Alice (two items, a monthly plan due 2026-12-10) and Bob (one item only he has). */
async function seedShop(server: TestServer) {
  const { coffee, filters, tea } = await seedCatalog(server)
  const alice = await customer(server, 'alice@example.com')
  const bob = await customer(server, 'bob@example.com')
  const sub = await createSubscription(server, alice.key, {
    actionable_date: '2026-12-10', interval_units: 'month',
    line_items_attributes: [{ subscribable_id: coffee.id, quantity: 2 }, { subscribable_id: filters.id, quantity: 1 }],
  })
  const bobs = await createSubscription(server, bob.key, { actionable_date: '2027-03-03', line_items_attributes: [{ subscribable_id: tea.id, quantity: 7 }] })
  return { alice, bob, sub, bobs, coffee, filters, tea }
}

test('a customer opens a portal link, skips, pauses until a date, resumes, changes a quantity and cancels, each confirmed after a dry run shows what it will do; the API shows each change and its event', async (t) => {
  const h = await startHarness(t)
  const { alice, sub } = await seedShop(h.server)
  const { page, problems } = await h.newPage()

  await page.goto(await portalLink(h.server, alice.id, 'https://shop.example/account'))
  assert.equal(new URL(page.url()).pathname, '/portal/')
  await page.getByRole('heading', { name: 'Your subscriptions' }).waitFor()
  await page.getByText('Coffee beans 1 kg × 2, Paper filters × 1').waitFor()
  assert.equal(await page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href'), 'https://shop.example/account')
  await screenshot(page, 'portal-list')
  await axe(t, page, 'portal list')

  await page.getByRole('link', { name: `Manage subscription #${sub.id}` }).click()
  await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
  assert.equal(await page.locator('#next-delivery').textContent(), 'December 10, 2026')
  await axe(t, page, 'portal subscription')

  // Every change is previewed by a dry run (C18) and confirmed; the preview changes nothing.
  await page.getByRole('button', { name: 'Skip next delivery' }).click()
  const skipDialog = page.getByRole('dialog', { name: 'Skip the next delivery?' })
  await skipDialog.getByText('January 10, 2027').waitFor()
  assert.deepEqual((await apiView(h.server, alice.key, sub.id)).events, ['subscription.created'])
  await skipDialog.getByRole('button', { name: 'Yes, skip it' }).click()
  await notice(page, 'The next delivery was skipped.')
  let api = await apiView(h.server, alice.key, sub.id)
  assert.equal(api.sub.actionable_date, '2027-01-10')
  assert.equal(api.sub.skip_count, 1)
  assert.equal(api.events.at(-1), 'subscription.skipped')
  assert.equal(await page.locator('#next-delivery').textContent(), 'January 10, 2027')
  await page.getByRole('listitem').filter({ hasText: 'Delivery skipped' }).waitFor()
  await screenshot(page, 'portal-after-skip')

  await page.getByLabel('Pause until').fill('2027-02-14')
  await page.getByRole('button', { name: 'Pause', exact: true }).click()
  const pauseDialog = page.getByRole('dialog', { name: 'Pause this subscription?' })
  await pauseDialog.getByText('Paused until February 14, 2027').waitFor()
  await pauseDialog.getByRole('button', { name: 'Yes, pause it' }).click()
  await notice(page, 'The subscription is paused.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.equal(api.sub.paused, true)
  assert.equal(api.sub.actionable_date, '2027-02-14')
  assert.equal(api.events.at(-1), 'subscription.paused')
  assert.equal(await page.locator('#next-delivery').textContent(), 'Paused until February 14, 2027')
  await axe(t, page, 'portal subscription, paused')

  // "Resume now: next delivery on 26 November", before anything changes.
  await page.getByRole('button', { name: 'Resume now' }).click()
  const resumeDialog = page.getByRole('dialog', { name: 'Resume this subscription now?' })
  await resumeDialog.getByRole('definition').filter({ hasText: 'November 26, 2026' }).waitFor()
  await axe(t, page, 'portal resume preview')
  await screenshotOf(page, 'portal-preview')
  api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual([api.sub.paused, api.events.at(-1)], [true, 'subscription.paused'])
  await resumeDialog.getByRole('button', { name: 'Yes, resume it' }).click()
  await notice(page, 'The subscription is active again.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.equal(api.sub.paused, false)
  assert.equal(api.sub.actionable_date, '2026-11-26') // C8: resume without a date is tomorrow
  assert.equal(api.events.at(-1), 'subscription.resumed')

  await page.getByLabel('Quantity of Coffee beans 1 kg', { exact: true }).fill('5')
  await page.getByRole('button', { name: 'Update quantity of Coffee beans 1 kg' }).click()
  await notice(page, 'The quantity was changed.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual(api.sub.line_items.map((li: any) => li.quantity), [5, 1])
  assert.equal(api.events.at(-1), 'line_item.updated')

  // Cancel asks first; the dialog is keyboard-usable: Escape keeps the subscription, focus returns.
  const cancel = page.getByRole('button', { name: 'Cancel subscription' })
  await cancel.focus()
  await page.keyboard.press('Enter')
  const dialog = page.getByRole('dialog', { name: 'Cancel this subscription?' })
  await dialog.waitFor()
  assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement.textContent), 'Keep my subscription')
  await axe(t, page, 'portal cancel dialog')
  await page.keyboard.press('Escape')
  await dialog.waitFor({ state: 'detached' })
  assert.equal(await page.evaluate(() => (globalThis as any).document.activeElement.id), 'cancel')
  assert.equal((await apiView(h.server, alice.key, sub.id)).sub.state, 'active')

  await cancel.click()
  await dialog.getByText('No further deliveries will be sent.').waitFor()
  await dialog.getByRole('button', { name: 'Yes, cancel it' }).click()
  await notice(page, 'The subscription was canceled.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.equal(api.sub.state, 'canceled')
  assert.equal(api.sub.actionable_date, null)
  assert.deepEqual(api.events, ['subscription.created', 'subscription.skipped', 'subscription.paused', 'subscription.resumed', 'line_item.updated', 'subscription.canceled'])
  await page.getByRole('listitem').filter({ hasText: 'Canceled' }).waitFor()
  // Only what a canceled subscription allows: reactivate, and no date to set.
  assert.equal(await page.getByRole('button', { name: 'Skip next delivery' }).count(), 0)
  assert.equal(await page.getByRole('button', { name: 'Set next delivery' }).count(), 0)
  await page.getByRole('button', { name: 'Reactivate subscription' }).waitFor()
  assert.deepEqual(problems, [])
})

test('in Spanish: add and remove an item, change the frequency, the next date and the address; a refusal shows the API\'s own Spanish message', async (t) => {
  const h = await startHarness(t)
  const { alice, sub, coffee, filters, tea } = await seedShop(h.server)
  const { page, problems } = await h.newPage({ locale: 'es-ES' })
  await page.goto(await portalLink(h.server, alice.id))
  await page.getByRole('link', { name: `Gestionar la suscripción n.º ${sub.id}` }).click()
  await page.getByRole('heading', { name: `Suscripción n.º ${sub.id}` }).waitFor()

  await page.getByLabel('Cantidad de Paper filters', { exact: true }).fill('0')
  await page.getByRole('button', { name: 'Actualizar la cantidad de Paper filters' }).click()
  const alert = page.getByRole('alert')
  await alert.filter({ hasText: 'Cantidad: debe ser mayor que 0' }).waitFor()
  assert.deepEqual((await apiView(h.server, alice.key, sub.id)).sub.line_items.map((li: any) => li.quantity), [2, 1])

  await page.getByLabel('Añadir un artículo').selectOption({ label: 'Secret Oolong' })
  await page.getByLabel('Cantidad', { exact: true }).fill('3')
  await page.getByRole('button', { name: 'Añadir', exact: true }).click()
  await notice(page, 'Se añadió el artículo.')
  let api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual(api.sub.line_items.map((li: any) => [li.subscribable_id, li.quantity]).at(-1), [tea.id, 3])
  assert.equal(api.events.at(-1), 'line_item.created')

  await page.getByRole('button', { name: 'Eliminar Paper filters' }).click()
  const removeDialog = page.getByRole('dialog', { name: '¿Eliminar Paper filters?' })
  await removeDialog.getByText('Coffee beans 1 kg × 2, Secret Oolong × 3').waitFor()
  await removeDialog.getByRole('button', { name: 'Eliminarlo' }).click()
  await notice(page, 'Se eliminó el artículo.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.equal(api.sub.line_items.length, 2)
  assert.equal(api.events.at(-1), 'line_item.deleted')

  // C17: "add to my next delivery only" makes a one-time line, marked as such in the list.
  await page.getByLabel('Añadir un artículo').selectOption({ label: 'Paper filters' })
  await page.getByLabel('Cantidad', { exact: true }).fill('2')
  await page.getByLabel('Añadir solo a mi próxima entrega').check()
  await page.getByRole('button', { name: 'Añadir', exact: true }).click()
  await notice(page, 'Se añadió el artículo solo a tu próxima entrega.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual(api.sub.line_items.map((li: any) => [li.subscribable_id, li.quantity, li.one_time]), [[coffee.id, 2, false], [tea.id, 3, false], [filters.id, 2, true]])
  assert.equal(api.events.at(-1), 'line_item.created')
  const itemNamed = (name: string) => page.locator('li.item').filter({ has: page.locator('.item-name', { hasText: name }) })
  await itemNamed('Paper filters').getByText('Solo en la próxima entrega').waitFor()
  assert.equal(await itemNamed('Secret Oolong').getByText('Solo en la próxima entrega').count(), 0)

  await page.getByLabel('Cada', { exact: true }).fill('2')
  await page.getByLabel('Unidad').selectOption('week')
  await page.getByRole('button', { name: 'Cambiar la frecuencia' }).click()
  const frequencyDialog = page.getByRole('dialog', { name: '¿Cambiar la frecuencia de las entregas?' })
  await frequencyDialog.getByText('Cada 2 semanas').waitFor()
  await frequencyDialog.getByRole('button', { name: 'Sí, cambiarla' }).click()
  await notice(page, 'Se cambió la frecuencia.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual([api.sub.interval_length, api.sub.interval_units], [2, 'week'])
  assert.equal(api.events.at(-1), 'subscription.frequency_changed')

  await page.getByLabel('Próxima entrega', { exact: true }).fill('2027-01-05')
  await page.getByRole('button', { name: 'Fijar la próxima entrega' }).click()
  await notice(page, 'Se cambió la fecha de la próxima entrega.')
  assert.equal((await apiView(h.server, alice.key, sub.id)).sub.actionable_date, '2027-01-05')

  // The address: the API's required-field message first, in Spanish, then a good one.
  await page.getByLabel('Nombre').fill('Alicia')
  await page.getByRole('button', { name: 'Guardar la dirección' }).click()
  await alert.filter({ hasText: 'Dirección: no puede estar en blanco' }).waitFor()
  await page.getByLabel('Dirección', { exact: true }).fill('Calle Mayor 1')
  await page.getByLabel('Ciudad').fill('Madrid')
  await page.getByLabel('Código postal').fill('28013')
  await page.getByLabel('Código de país (2 letras)').fill('ES')
  await page.getByRole('button', { name: 'Guardar la dirección' }).click()
  await notice(page, 'Se guardó la dirección de envío.')
  api = await apiView(h.server, alice.key, sub.id)
  assert.deepEqual([api.sub.shipping_address.firstname, api.sub.shipping_address.city, api.sub.shipping_address.country_iso], ['Alicia', 'Madrid', 'ES'])
  assert.equal(api.events.at(-1), 'subscription.shipping_address_changed')
  await page.getByRole('listitem').filter({ hasText: 'Dirección de envío cambiada' }).waitFor()
  await axe(t, page, 'portal subscription (es)')
  assert.deepEqual(problems, [])
})

test('a used link and an expired link are refused with the 410 page, which leads back to the shop (C18)', async (t) => {
  const h = await startHarness(t, { REPLENISH_SHOP_URL: 'https://shop.example/' })
  const { alice } = await seedShop(h.server)
  const link = await portalLink(h.server, alice.id, 'https://shop.example/account')
  const first = await h.newPage()
  await first.page.goto(link)
  await first.page.getByRole('heading', { name: 'Your subscriptions' }).waitFor()

  const second = await h.newPage({ locale: 'fr-FR' })
  const used = await second.page.goto(link)
  assert.equal(used?.status(), 410)
  await second.page.getByRole('heading', { name: 'Ce lien ne peut plus être utilisé' }).waitFor()
  // The spent link's own return_url.
  assert.equal(await second.page.getByRole('link', { name: 'Retour à la boutique' }).getAttribute('href'), 'https://shop.example/account')
  await axe(t, second.page, '410 page (used link)')
  assert.equal((await second.context.cookies()).length, 0)

  const expired = await portalLink(h.server, alice.id)
  sqliteOf(h.server.store).db.prepare("UPDATE portal_links SET expires_at = '2026-01-01T00:00:00.000Z' WHERE token_hash = ?").run(sha256(expired.split('/').pop() as string))
  const third = await h.newPage()
  assert.equal((await third.page.goto(expired))?.status(), 410)
  await third.page.getByRole('heading', { name: 'This link can no longer be used' }).waitFor()
  // A link made without a return_url leads to REPLENISH_SHOP_URL.
  assert.equal(await third.page.getByRole('link', { name: 'Back to the shop' }).getAttribute('href'), 'https://shop.example/')
  await axe(t, third.page, '410 page (expired link)')
  assert.equal(await third.page.getByRole('heading', { name: 'Your subscriptions' }).count(), 0)
  assert.deepEqual([...first.problems, ...second.problems, ...third.problems], [])
})

test("another customer's subscription id typed into the URL shows nothing of it", async (t) => {
  const h = await startHarness(t)
  const { alice, bobs } = await seedShop(h.server)
  const { page, problems } = await h.newPage()
  await page.goto(await portalLink(h.server, alice.id))
  await page.getByRole('heading', { name: 'Your subscriptions' }).waitFor()
  await page.goto(`${h.server.url}/portal/#/subscriptions/${bobs.id}`)
  await page.getByRole('heading', { name: 'This subscription cannot be shown.' }).waitFor()
  const text = await page.locator('body').innerText()
  for (const secret of ['Secret Oolong', 'March 3, 2027', '× 7', 'bob@example.com']) assert.ok(!text.includes(secret), `the page shows ${secret}`)
  assert.equal(await page.getByRole('button').filter({ hasText: /Skip|Pause|Cancel/ }).count(), 0)
  await axe(t, page, 'portal, not found')
  // And none of it changed.
  assert.equal((await apiView(h.server, (await customerKey(h.server, bobs.user_id)), bobs.id)).sub.skip_count, 0)
  assert.deepEqual(problems, [])
})

/** A fresh key of the user's, to read their records through the API. */
async function customerKey(server: TestServer, userId: number): Promise<string> {
  return (await admin(server, 'POST', `/users/${userId}/api_keys`)).key
}

test('a cross-site POST without the CSRF token is refused: a form on another origin cannot cancel, fetch cannot either', async (t) => {
  const h = await startHarness(t)
  const { alice, sub } = await seedShop(h.server)
  const { page, problems } = await h.newPage()
  await page.goto(await portalLink(h.server, alice.id))
  await page.getByRole('heading', { name: 'Your subscriptions' }).waitFor()

  // Another origin (another port of 127.0.0.1: the same *site*, so SameSite=Strict lets the cookie go).
  const target = `${h.server.url}/api/v1/subscriptions/${sub.id}/cancel`
  const other = await startOtherOrigin(t, `<!doctype html><html lang="en"><title>Prize</title><body>
    <form method="post" action="${target}"><input type="hidden" name="subscription[reason]" value="x"><button>Claim your prize</button></form>
    </body></html>`)
  await page.goto(other)
  const [answer] = await Promise.all([page.waitForResponse(target), page.getByRole('button', { name: 'Claim your prize' }).click()])
  assert.equal(answer.status(), 403)
  // 403 for the token, not 401: the browser did send the session cookie along.
  assert.deepEqual(await answer.json(), { error: 'Invalid or missing CSRF token.' })

  // A script on that origin: its request is refused as well, and it cannot read the token.
  await page.goto(other)
  const fetched = await page.evaluate(async (urls) => {
    const tries: string[] = []
    for (const [url, init] of [[urls.target, { method: 'POST', credentials: 'include' }], [urls.session, { credentials: 'include' }]] as const) {
      try {
        const res = await fetch(url, init as RequestInit)
        tries.push(`read ${res.status}`)
      } catch {
        tries.push('unreadable')
      }
    }
    return tries
  }, { target, session: `${h.server.url}/portal/api/session` })
  assert.deepEqual(fetched, ['unreadable', 'unreadable'])
  const { sub: now, events } = await apiView(h.server, alice.key, sub.id)
  assert.equal(now.state, 'active')
  assert.deepEqual(events, ['subscription.created'])
  assert.ok(h.server.log.some((e) => e.method === 'POST' && e.route === '/api/v1/subscriptions/:id/cancel' && e.status === 403))
  assert.deepEqual(problems, [])
})

test('at 360 px wide the subscription page fits without sideways scrolling; signing out ends the session', async (t) => {
  const h = await startHarness(t)
  const { alice, sub } = await seedShop(h.server)
  const { page, problems } = await h.newPage({ viewport: { width: 360, height: 740 } })
  await page.goto(await portalLink(h.server, alice.id))
  await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
  await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
  const widths = await page.evaluate(() => [(globalThis as any).document.documentElement.scrollWidth, (globalThis as any).innerWidth])
  assert.ok(widths[0] <= widths[1], `content ${widths[0]} px wide in a ${widths[1]} px window`)
  await axe(t, page, 'portal subscription at 360 px')
  await screenshot(page, 'portal-narrow')

  await page.getByRole('button', { name: 'Sign out' }).click()
  await page.getByRole('heading', { name: 'You are signed out.' }).waitFor()
  await page.reload()
  await page.getByRole('heading', { name: 'Your session has ended' }).waitFor()
  assert.ok(!(await page.locator('body').innerText()).includes('alice@example.com'))
  await axe(t, page, 'portal, session ended')
  assert.deepEqual(problems, [])
  assert.equal(TODAY, '2026-11-25')
})

test('a view still loading when the customer moves on never draws over the view that replaced it', async (t) => {
  const h = await startHarness(t)
  const { alice, sub } = await seedShop(h.server)
  const { page, problems } = await h.newPage()
  // The list's read is held until the subscription's page is on screen.
  let release = (): void => {}
  const held = new Promise<void>((resolve) => { release = resolve })
  await page.route(/\/api\/v1\/subscriptions\?/, async (route) => {
    await held
    await route.continue()
  })
  await page.goto(await portalLink(h.server, alice.id))
  await page.getByText('Loading…').waitFor()
  await page.goto(`${h.server.url}/portal/#/subscriptions/${sub.id}`)
  await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
  const listAnswered = page.waitForResponse(/\/api\/v1\/subscriptions\?/)
  release()
  await listAnswered
  await page.evaluate(() => new Promise((resolve) => setTimeout(resolve, 50)))
  assert.equal(await page.getByRole('heading', { name: 'Your subscriptions' }).count(), 0)
  await page.getByRole('heading', { name: `Subscription #${sub.id}` }).waitFor()
  assert.deepEqual(problems, [])
})
