/** The admin API's bodies as the dashboard reads them (CONTRACT C3, C11, C13). */
export interface LineItem { id: number; subscription_id: number; subscribable_id: number; quantity: number }

export type Address = Record<'firstname' | 'lastname' | 'company' | 'address1' | 'address2' | 'city' | 'zipcode' | 'state_name' | 'country_iso' | 'phone', string | null>

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
  processing_state: string
  shipping_address: Address | null
  billing_address: Address | null
  line_items: LineItem[]
  created_at: string
  updated_at: string
}

export interface User { id: number; email: string | null; external_id: string | null; created_at: string }

export interface Attempt { result: string; order_reference: string | null; message: string | null; created_at: string }

export interface Installment {
  id: number
  subscription_id: number
  user: { id: number; email: string | null; external_id: string | null }
  due_date: string
  state: string
  retry_at: string | null
  line_items: { subscribable_id: number; sku: string; name: string; quantity: number }[]
  attempts: Attempt[]
}

export interface EventRecord { id: number; type: string; created_at: string; subscription_id: number | null }

export interface Subscribable { id: number; sku: string; name: string; subscribable: boolean }
export interface PaymentMethod { id: number; name: string; active: boolean }
export interface PaymentSource {
  id: number; user_id: number; payment_method_id: number; kind: string | null; brand: string | null
  last_digits: string | null; month: number | null; year: number | null
}

export interface WebhookEndpoint { id: number; url: string; events: string[]; description: string | null; created_at: string; secret?: string }

export interface DeliveryAttempt { created_at: string; status_code: number | null; duration_ms: number; error: string | null; redelivery: boolean }
export interface Delivery {
  id: number; webhook_endpoint_id: number; event_id: number; event_type: string; state: string
  attempt_count: number; next_attempt_at: string | null; created_at: string; attempts: DeliveryAttempt[]
}

export interface AdminToken { id: number; label: string | null; scope: string; prefix: string; created_at: string; last_used_at: string | null; token?: string }
