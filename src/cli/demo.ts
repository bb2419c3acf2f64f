import { sha256 } from '../api/shared/auth.ts'
import { newAdminToken, newApiKey } from '../admin/users.ts'
import type { Store } from '../store/store.ts'

/**
 * `serve --demo` (what `npm start` runs): an empty database gets a demo customer with an API key,
 * a stored admin token, a payment method and source and two catalog items, so the README's
 * walk-through runs at once, with no restart and no REPLENISH_ADMIN_TOKEN.
 * Returns the lines to print (on stderr: they hold the two secrets, shown only this once), or
 * nothing when the database already has users.
 */
export async function seedDemo(store: Store, baseUrl: string): Promise<string[]> {
  if (store.accounts.listUsers(0, 1).length > 0) return []
  const key = newApiKey()
  const adminToken = newAdminToken()
  const ids = await store.write(() => {
    const user = store.accounts.createUser('demo@example.com', 'demo')
    store.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8))
    store.accounts.createAdminToken(sha256(adminToken), adminToken.slice(0, 10))
    const method = store.catalog.createPaymentMethod('Credit card', true)
    const source = store.catalog.createPaymentSource({
      user_id: user.id, payment_method_id: method.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 12, year: 2030, gateway_reference: 'demo',
    })
    const coffee = store.catalog.createSubscribable('COFFEE-1KG', 'Coffee beans, 1 kg', true)
    const tea = store.catalog.createSubscribable('TEA-250G', 'Green tea, 250 g', true)
    return { user: user.id, method: method.id, source: source.id, coffee: coffee.id, tea: tea.id }
  })
  return [
    `demo data seeded: user ${ids.user} (demo@example.com), payment_method_id ${ids.method}, payment_source_id ${ids.source}, ` +
      `subscribable_id ${ids.coffee} (coffee) and ${ids.tea} (tea)`,
    `demo API key (customer API, $KEY): ${key}`,
    `demo admin token (admin API and /metrics, $ADMIN): ${adminToken}`,
    `try: curl -s -X POST ${baseUrl}/api/v1/subscriptions -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' ` +
      `-d '{"subscription":{"interval_length":1,"interval_units":"month","line_items_attributes":[{"subscribable_id":${ids.coffee},"quantity":2}]}}'`,
  ]
}
