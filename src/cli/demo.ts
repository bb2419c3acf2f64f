import { sha256 } from '../api/kit/auth.ts'
import { newAdminToken, newApiKey } from '../admin/users.ts'
import type { Store } from '../store/api.ts'

/**
 * `serve --demo` (what `npm start` runs): an empty database gets a demo customer with an API key,
 * a stored admin token, a payment method and source and two catalog items, so the README's
 * walk-through runs at once, with no restart and no REPLENISH_ADMIN_TOKEN.
 * Returns the lines to print (on stderr: they hold the two secrets, shown only this once), or
 * nothing when the database already has users.
 */
export async function seedDemo(store: Store, baseUrl: string): Promise<string[]> {
  const key = newApiKey()
  const adminToken = newAdminToken()
  // The emptiness check in the unit that seeds: two starts at once seed once.
  const ids = await store.write(async (tx) => {
    if ((await tx.accounts.listUsers(0, 1)).length > 0) return undefined
    const user = await tx.accounts.createUser('demo@example.com', 'demo')
    await tx.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8))
    await tx.accounts.createAdminToken(sha256(adminToken), adminToken.slice(0, 10))
    const method = await tx.catalog.createPaymentMethod('Credit card', true)
    const source = await tx.catalog.createPaymentSource({
      user_id: user.id, payment_method_id: method.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 12, year: 2030, gateway_reference: 'demo',
    })
    // Priced (C16): coffee saves 10 % on subscription, in dollars and euros; tea in dollars only.
    const coffee = await tx.catalog.createSubscribable({
      sku: 'COFFEE-1KG', name: 'Coffee beans, 1 kg', subscribable: true, discount_bp: 1000, prices: new Map([['USD', 2400n], ['EUR', 2200n]]),
    })
    const tea = await tx.catalog.createSubscribable({ sku: 'TEA-250G', name: 'Green tea, 250 g', subscribable: true, discount_bp: 0, prices: new Map([['USD', 850n]]) })
    return { user: user.id, method: method.id, source: source.id, coffee: coffee.id, tea: tea.id }
  })
  if (!ids) return []
  return [
    `demo data seeded: user ${ids.user} (demo@example.com), payment_method_id ${ids.method}, payment_source_id ${ids.source}, ` +
      `subscribable_id ${ids.coffee} (coffee) and ${ids.tea} (tea)`,
    `demo API key (customer API, $KEY): ${key}`,
    `demo admin token (admin API and /metrics, $ADMIN): ${adminToken}`,
    `try: curl -s -X POST ${baseUrl}/api/v1/subscriptions -H 'Authorization: Bearer ${key}' -H 'Content-Type: application/json' ` +
      `-d '{"subscription":{"interval_length":1,"interval_units":"month","line_items_attributes":[{"subscribable_id":${ids.coffee},"quantity":2}]}}'`,
  ]
}
