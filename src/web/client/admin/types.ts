/** The admin API's bodies as the dashboard reads them (CONTRACT C3, C11, C13, C16–C18). */
export interface LineItem {
  id: number; subscription_id: number; subscribable_id: number; quantity: number
  /** C16: the catalog's unit price in the subscription's currency (null: none), the item's discount, the line's total. */
  price?: string | null; discount_percent?: string; total?: string | null
  /** C17: rides on the next delivery only. */
  one_time?: boolean
}

export const ADDRESS_FIELDS = ['firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone'] as const
export type Address = Record<(typeof ADDRESS_FIELDS)[number], string | null>

export interface Subscription {
  id: number
  user_id: number
  state: string
  paused: boolean
  interval_length: number
  interval_units: string
  actionable_date: string | null
  end_date: string | null
  skip_count: number
  successive_skip_count: number
  payment_method_id: number | null
  payment_source_id: number | null
  currency: string
  subtotal?: string | null
  discount_total?: string | null
  total?: string | null
  processing_state: string
  shipping_address: Address | null
  billing_address: Address | null
  line_items: LineItem[]
  created_at: string
  updated_at: string
}

export interface User {
  id: number; email: string | null; external_id: string | null; created_at: string; updated_at?: string
  /** C17 (when the API has them): the customer's language for mail and whether they get any. */
  locale?: string; email_notifications?: boolean
}

export interface ApiKey { id: number; user_id: number; prefix: string; created_at: string; last_used_at?: string | null; revoked_at?: string | null; key?: string }

export interface Attempt { result: string; order_reference: string | null; message: string | null; created_at: string }

export interface InstallmentLine {
  subscribable_id: number; sku: string; name: string; quantity: number
  price?: string | null; discount_percent?: string; total?: string | null
}

export interface Installment {
  id: number
  subscription_id: number
  user: { id: number; email: string | null; external_id: string | null }
  due_date: string
  state: string
  retry_at: string | null
  currency?: string
  subtotal?: string | null
  discount_total?: string | null
  total?: string | null
  line_items: InstallmentLine[]
  attempts: Attempt[]
  created_at?: string
  updated_at?: string
}

/** C18: who made a change; null on events written before it. */
export interface Actor { type: 'customer' | 'staff' | 'portal' | 'processor' | 'system'; id: number | null }

export interface EventRecord {
  id: number; type: string; created_at: string; subscription_id: number | null
  actor?: Actor | null; request_id?: string | null
  data?: { object: unknown }
}

export interface Subscribable {
  id: number; sku: string; name: string; subscribable: boolean
  /** C16: amount per currency code, and the subscribe-and-save discount in percent. */
  prices?: Record<string, string>; discount_percent?: string
}
export interface PaymentMethod { id: number; name: string; active: boolean }
export interface PaymentSource {
  id: number; user_id: number; payment_method_id: number; kind: string | null; brand: string | null
  last_digits: string | null; month: number | null; year: number | null; gateway_reference?: string | null
}

export interface WebhookEndpoint {
  id: number; url: string; events: string[]; description: string | null; created_at: string; secret?: string
  /** C18: a disabled endpoint gets no new deliveries and sends none. */
  disabled?: boolean
}

export interface DeliveryAttempt {
  created_at: string; status_code: number | null; duration_ms: number; error: string | null; redelivery: boolean
  /** C18: the first 1 KiB of what the endpoint answered. */
  response_body?: string | null
}
export interface Delivery {
  id: number; webhook_endpoint_id: number; event_id: number; event_type: string; state: string
  attempt_count: number; next_attempt_at: string | null; created_at: string; attempts: DeliveryAttempt[]
}

export interface AdminToken { id: number; label: string | null; scope: string; prefix: string; created_at: string; last_used_at: string | null; token?: string }

/** C17's mail log. */
export interface Email {
  id: number; user_id: number; kind: string; event_id: number | null; to: string | null; subject: string | null
  state: string; attempts: { smtp_reply: string | null; error: string | null; created_at: string }[]; created_at: string; updated_at: string
}
