/**
 * What each field of the admin API is called on the page. A 422 names fields by their API keys
 * (`shipping_address.zipcode`, `prices.USD`, `successive_skip_count`): people read their labels,
 * in the page's language, never the keys. History entries name what changed the same way.
 */
import { t, type Key } from './strings.ts'

/** Fields of the API with a label of their own (`admin.field.<name>`). */
const OWN = new Set([
  'interval_length', 'interval_units', 'actionable_date', 'end_date', 'currency', 'quantity', 'subscribable', 'subscribable_id',
  'line_items', 'shipping_address', 'billing_address', 'payment_source_type', 'payment_method_id', 'payment_source_id', 'paused',
  'state', 'skip_count', 'successive_skip_count', 'user_id', 'one_time', 'email', 'external_id', 'locale', 'email_notifications', 'key',
  'sku', 'name', 'prices', 'discount_percent', 'active', 'kind', 'brand', 'last_digits', 'month', 'year', 'gateway_reference',
  'result', 'order_reference', 'message', 'url', 'events', 'description', 'disabled', 'scope', 'label', 'return_url',
  'after', 'limit', 'actionable_before', 'due_before', 'due_after', 'subscription_id', 'q', 'from', 'to', 'type', 'price', 'total',
  'subtotal', 'discount_total', 'processing_state', 'confirmation', 'retry_at', 'country_iso',
])

/** Address fields: the shared catalogue's words (lib/i18n.ts `field.*`); the country is the dashboard's own, a picker of names. */
const ADDRESS = new Set(['firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone'])

function one(name: string): string {
  if (OWN.has(name)) return t(`admin.field.${name}` as Key)
  if (ADDRESS.has(name)) return t(`field.${name}` as Key)
  // A field this page does not know yet (a newer API): readable words rather than a key.
  return name.replaceAll('_', ' ')
}

/** `line_items.quantity` → "Items: Quantity"; `prices.EUR` → "Price in EUR". */
export function fieldLabel(name: string): string {
  const [head = '', ...rest] = name.split('.')
  if (rest.length === 0) return one(head)
  if (head === 'prices' && rest.length === 1) return t('admin.field.priceIn', { currency: rest[0] ?? '' })
  return `${one(head)}: ${rest.map(one).join(': ')}`
}
