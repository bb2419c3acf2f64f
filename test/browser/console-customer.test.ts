/**
 * The staff console changes a customer (issue 28 item 7, C13, C18): email and external id
 * (previewed from a dry run), API keys (made, shown once, revoked), a portal link made and copied
 * (and it opens the portal), payment sources (a SEPA mandate is not listed as a card, a defect),
 * and erasure behind a typed confirmation. At 1280 × 800 and 390 × 844, axe on every new state.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { checkAccessibility, startHarness } from './harness.ts'
import { PHONE, WIDE, admin, noRawNames, notice, overflow, seedShop, signIn, visit } from './console-shop.ts'

for (const viewport of [WIDE, PHONE]) {
  const size = `${viewport.width} px`

  test(`a customer's details, keys, portal link, payment sources and erasure (${size})`, async (t) => {
    const h = await startHarness(t)
    const shop = await seedShop(h.server)
    const { page, context, problems } = await h.newPage({ viewport })
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: h.server.url })
    await signIn(page, h.server.url)
    const route = `customers/${shop.alice.id}`
    const heading = `Customer #${shop.alice.id}`
    await visit(page, h.server.url, route, heading)
    const section = (name: string) => page.locator('section').filter({ has: page.getByRole('heading', { name, exact: true }) })

    // Email and external id: previewed, a refusal in the API's words, then saved.
    await page.getByRole('group', { name: 'Change this customer' }).getByRole('button', { name: 'Edit' }).click()
    const edit = page.getByRole('dialog', { name: `Edit customer #${shop.alice.id}` })
    await edit.getByLabel('Email').fill('bob@example.com')
    await edit.getByRole('button', { name: 'Preview' }).click()
    await edit.getByRole('alert').filter({ hasText: /Email: has already been taken/ }).waitFor()
    assert.equal(await edit.getByLabel('Email').getAttribute('aria-invalid'), 'true')
    await edit.getByLabel('Email').fill('alice.martin@example.com')
    await edit.getByLabel('External id').fill('shop-2001')
    await edit.getByRole('button', { name: 'Preview' }).click()
    await edit.getByRole('status').filter({ hasText: 'alice.martin@example.com' }).waitFor()
    assert.match(await edit.getByRole('status').innerText(), /External id\s*shop-1001\s*→?\s*becomes\s*shop-2001/)
    await checkAccessibility(page, `customer edit preview at ${size}`)
    assert.equal((await admin(h.server, 'GET', `/users/${shop.alice.id}`)).email, 'alice@example.com', 'the preview stored nothing')
    await edit.getByRole('button', { name: 'Save' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    assert.deepEqual(await admin(h.server, 'GET', `/users/${shop.alice.id}`).then((u: any) => [u.email, u.external_id]), ['alice.martin@example.com', 'shop-2001'])

    // A portal link, made, shown and copied; it opens the customer's portal.
    await page.getByRole('button', { name: 'Make portal link' }).click()
    const link = page.getByLabel('Portal link')
    await link.waitFor()
    const url = await link.inputValue()
    assert.match(url, /\/portal\/sessions\/rplp_/)
    await page.getByRole('button', { name: 'Copy' }).click()
    await page.getByText('Copied.').waitFor()
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), url)
    await checkAccessibility(page, `portal link at ${size}`)
    const { page: portal } = await h.newPage({ viewport })
    await portal.goto(url)
    await portal.getByRole('heading', { name: 'Your subscriptions', level: 1 }).waitFor()

    // An API key: made and shown once, then revoked.
    await section('API keys').getByRole('button', { name: 'Make an API key' }).click()
    await page.getByRole('dialog', { name: 'Make an API key' }).getByRole('button', { name: 'Create' }).click()
    const key = await page.getByLabel('API key', { exact: true }).inputValue()
    assert.match(key, /^rpl_/)
    assert.equal((await h.server.request('GET', '/api/v1/subscriptions', { key })).status, 200)
    const made = (await admin(h.server, 'GET', `/users/${shop.alice.id}/api_keys`)).api_keys.find((k: any) => key.startsWith(k.prefix))
    await section('API keys').getByRole('row').filter({ hasText: made.prefix }).getByRole('button', { name: 'Revoke' }).click()
    await page.getByRole('dialog', { name: 'Revoke API key' }).getByRole('button', { name: 'Revoke' }).click()
    await notice(page).filter({ hasText: 'API key revoked.' }).waitFor()
    assert.equal((await h.server.request('GET', '/api/v1/subscriptions', { key })).status, 401)
    assert.equal(await page.getByLabel('API key', { exact: true }).count(), 0, 'shown once')

    // A SEPA mandate is listed as one, not as a card.
    const sepa = await admin(h.server, 'POST', '/payment_methods', { payment_method: { name: 'SEPA' } })
    await page.reload()
    await page.getByRole('heading', { name: heading, level: 1 }).waitFor()
    const form = page.getByRole('form', { name: 'New payment source' })
    await form.getByLabel('Method').selectOption(String(sepa.id))
    await form.getByLabel('Type').selectOption('sepa_debit')
    await form.getByLabel('Last 4 digits').fill('3000')
    await form.getByRole('button', { name: 'Create' }).click()
    await notice(page).filter({ hasText: 'Saved.' }).waitFor()
    const sources = section('Payment sources')
    await sources.getByRole('row').filter({ hasText: 'SEPA Direct Debit •••• 3000' }).waitFor()
    assert.equal(await sources.getByRole('row').filter({ hasText: 'SEPA Direct Debit' }).filter({ hasText: /Card/ }).count(), 0)
    await noRawNames(page, `customer at ${size}`)
    // Deleting the card the subscription pays with says so first.
    await sources.getByRole('row').filter({ hasText: '4242' }).getByRole('button', { name: 'Delete' }).click()
    const remove = page.getByRole('dialog', { name: 'Delete' })
    await remove.getByText(`Subscriptions #${shop.main.id} will have no payment details.`).waitFor()
    await page.keyboard.press('Escape')

    // Erasure: the customer's email must be typed; anything else erases nothing.
    await page.getByRole('button', { name: 'Erase customer' }).click()
    const erase = page.getByRole('dialog', { name: 'Erase customer' })
    await erase.getByText('cancels their running subscriptions (1)').waitFor()
    await erase.getByLabel('Type alice.martin@example.com to confirm').fill('alice')
    await erase.getByRole('button', { name: 'Erase customer' }).click()
    await erase.getByRole('alert').filter({ hasText: 'Confirmation: The text typed is not the customer’s email: nothing was erased.' }).waitFor()
    assert.equal(await erase.getByLabel('Type alice.martin@example.com to confirm').getAttribute('aria-invalid'), 'true')
    await checkAccessibility(page, `erase refused at ${size}`)
    assert.equal((await admin(h.server, 'GET', `/users/${shop.alice.id}`)).email, 'alice.martin@example.com')
    await erase.getByLabel('Type alice.martin@example.com to confirm').fill('alice.martin@example.com')
    await erase.getByRole('button', { name: 'Erase customer' }).click()
    await notice(page).filter({ hasText: 'The customer was erased.' }).waitFor()
    assert.equal((await admin(h.server, 'GET', `/users/${shop.alice.id}`)).email, null)
    assert.equal((await admin(h.server, 'GET', `/subscriptions/${shop.main.id}`)).state, 'canceled')
    // Erased: nothing more to change.
    assert.equal(await page.getByRole('group', { name: 'Change this customer' }).count(), 0)
    assert.ok(await overflow(page) <= 0, 'nothing wider than the screen')
    assert.deepEqual(problems, [])
  })
}
