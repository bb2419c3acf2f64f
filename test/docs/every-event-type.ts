import assert from 'node:assert/strict'
import { addDays } from '../../src/domain/dates.ts'
import { ADMIN_TOKEN, type TestResponse, type TestServer } from '../helpers/server.ts'
import { processAsOf } from '../processing/helpers.ts'

/**
 * A shop's first weeks, driven through the APIs exactly as a shop and its customers would drive
 * them, so that the service writes every event type of C10 at least once. docs/webhooks.md's
 * example bodies are this run's output (docs/tools/event-examples.ts prints them), and
 * test/docs/webhooks-doc.test.ts runs it again to hold those examples to the product.
 *
 * The server must have been started with `REPLENISH_TODAY: today` and
 * `REPLENISH_CANCELLATION_NOTICE_DAYS: '7'` (`lifecycleEnv`), so that one cancel is too late
 * and becomes `subscription.cancellation_pending`.
 */
export const lifecycleEnv = (today: string): Record<string, string> => ({ REPLENISH_TODAY: today, REPLENISH_CANCELLATION_NOTICE_DAYS: '7' })

const SHIPPING = {
  firstname: 'Ada', lastname: 'Lovelace', company: null, address1: '12 Market Street', address2: 'Apt 4', city: 'Portland',
  zipcode: '97205', state_name: 'OR', country_iso: 'US', phone: '+1 503 555 0100',
}

export async function writeEveryEventType(server: TestServer, today: string): Promise<void> {
  const call = async (method: string, path: string, key: string, json?: unknown): Promise<any> => {
    const res: TestResponse = await server.request(method, path, { key, ...(json === undefined ? {} : { json }) })
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path} → ${res.status} ${res.text}`)
    return res.body
  }
  const admin = (method: string, path: string, json?: unknown) => call(method, `/admin/api/v1${path}`, ADMIN_TOKEN, json)

  // The shop's side: a customer with an API key, the catalog, a card.
  const user = await admin('POST', '/users', { user: { email: 'ada@example.com', external_id: 'cus_1001' } })
  const key: string = (await admin('POST', `/users/${user.id}/api_keys`)).key
  const coffee = await admin('POST', '/subscribables', { subscribable: { sku: 'COFFEE-1KG', name: 'House blend coffee, 1 kg', prices: { USD: '24.00', EUR: '22.00' }, discount_percent: '10' } })
  const filters = await admin('POST', '/subscribables', { subscribable: { sku: 'FILTERS-100', name: 'Paper filters, pack of 100', prices: { USD: '4.50' } } })
  const card = await admin('POST', '/payment_methods', { payment_method: { name: 'Credit card' } })
  const source = await admin('POST', '/payment_sources', {
    payment_source: { user_id: user.id, payment_method_id: card.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 12, year: 2029, gateway_reference: 'pm_1Q2w3E' },
  })
  const customer = (method: string, path: string, json?: unknown) => call(method, `/api/v1${path}`, key, json)
  const subscribe = (attrs: Record<string, unknown>) => customer('POST', '/subscriptions', { subscription: { interval_length: 1, interval_units: 'month', ...attrs } })
  const patch = (id: number, attrs: Record<string, unknown>) => customer('PATCH', `/subscriptions/${id}`, { subscription: attrs })
  const outcome = (id: number, outcome: { result: string; order_reference?: string; message?: string }) =>
    admin('POST', `/installments/${id}/outcome`, { outcome })
  const installmentOf = async (subscriptionId: number): Promise<any> => (await admin('GET', `/installments?subscription_id=${subscriptionId}`)).installments[0]

  // The main subscription: created, then changed one field at a time.
  const main = await subscribe({ actionable_date: today, line_items_attributes: [{ subscribable_id: coffee.id, quantity: 2 }] })
  await patch(main.id, { payment_method_id: card.id, payment_source_id: source.id })
  await patch(main.id, { shipping_address_attributes: SHIPPING })
  await patch(main.id, { billing_address_attributes: { ...SHIPPING, address2: null } })
  await patch(main.id, { end_date: addDays(today, 365) })
  const line = await customer('POST', `/subscriptions/${main.id}/line_items`, { subscription_line_item: { subscribable_id: filters.id, quantity: 1 } })
  await customer('PATCH', `/line_items/${line.id}`, { subscription_line_item: { quantity: 2 } })
  await customer('DELETE', `/line_items/${line.id}`)

  // One that will fail and be canceled while its installment waits for a retry, and one whose
  // end date comes with its first installment.
  const doomed = await subscribe({ actionable_date: today, line_items_attributes: [{ subscribable_id: filters.id, quantity: 1 }] })
  await subscribe({ actionable_date: today, end_date: addDays(today, 10), line_items_attributes: [{ subscribable_id: coffee.id, quantity: 1 }] })

  // Processing: an installment for each; the last subscription ends.
  await processAsOf(server, today)
  const first = await installmentOf(main.id)
  await outcome(first.id, { result: 'payment_failed', message: 'Card declined' })
  await processAsOf(server, addDays(today, 2))
  await outcome(first.id, { result: 'fulfilled', order_reference: 'R123456789' })

  // The customer's own actions on the main subscription (a new interval moves its next date, so
  // it comes after the first installment).
  await patch(main.id, { interval_length: 2 })
  await customer('POST', `/subscriptions/${main.id}/skip`)
  await customer('POST', `/subscriptions/${main.id}/pause`)
  await customer('POST', `/subscriptions/${main.id}/resume`, { subscription: { actionable_date: addDays(today, 30) } })
  await customer('POST', `/subscriptions/${main.id}/cancel`)
  await customer('POST', `/subscriptions/${main.id}/activate`)

  // Canceling abandons the installment that waits for its retry.
  await outcome((await installmentOf(doomed.id)).id, { result: 'out_of_stock', message: 'Filters back in stock next week' })
  await customer('POST', `/subscriptions/${doomed.id}/cancel`)

  // Canceled five days before its next delivery, inside the 7-day notice: that delivery still comes.
  const late = await subscribe({ actionable_date: addDays(today, 5), line_items_attributes: [{ subscribable_id: coffee.id, quantity: 1 }] })
  await customer('POST', `/subscriptions/${late.id}/cancel`)

  // Due in two days: the next run tells of it (C17: REPLENISH_UPCOMING_DAYS, default 3).
  await subscribe({ actionable_date: addDays(today, 2), line_items_attributes: [{ subscribable_id: coffee.id, quantity: 3 }] })
  await processAsOf(server, today)
  // Staff check a webhook endpoint (C18): a webhook.test event. Nothing listens on port 9, so
  // its one attempt fails at once; the event is written all the same.
  const endpoint = await admin('POST', '/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hooks', events: ['installment.created'] } })
  await admin('POST', `/webhook_endpoints/${endpoint.id}/test`)
}

/** Every event the service recorded, oldest first, read through the feed a polling shop reads. */
export async function allEvents(server: TestServer): Promise<any[]> {
  const events: any[] = []
  let after = 0
  for (;;) {
    const res = await server.request('GET', `/admin/api/v1/events?after=${after}&limit=100`, { key: ADMIN_TOKEN })
    assert.equal(res.status, 200, res.text)
    events.push(...res.body.events)
    if (res.body.next_after === null) return events
    after = res.body.next_after
  }
}
