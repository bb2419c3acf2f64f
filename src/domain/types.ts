import type { IntervalUnit } from './dates.ts'
import type { Language } from './messages.ts'

export const STATES = ['active', 'pending_cancellation', 'canceled', 'inactive'] as const // paused is a flag (C8)
export type State = (typeof STATES)[number]
export type ProcessingState = 'pending' | 'success' | 'failed'

export const ADDRESS_FIELDS = [
  'firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone',
] as const
export type AddressField = (typeof ADDRESS_FIELDS)[number]
export type Address = Record<AddressField, string | null>

/** A subscription as stored; field names follow the C3 representation. */
export interface Subscription {
  readonly id: number
  readonly user_id: number
  readonly state: State
  readonly paused: boolean
  readonly interval_length: number
  readonly interval_units: IntervalUnit
  readonly actionable_date: string | null
  /** Day of month that month/year intervals come back to (C8); not shown to clients. */
  readonly anchor_day: number | null
  readonly end_date: string | null
  readonly skip_count: number
  readonly successive_skip_count: number
  readonly payment_method_id: number | null
  readonly payment_source_id: number | null
  readonly currency: string
  readonly processing_state: ProcessingState
  readonly shipping_address: Address | null
  readonly billing_address: Address | null
  /** The service clock's date at creation: the base of C7's interval change rule. */
  readonly created_on: string
  readonly created_at: string
  readonly updated_at: string
}

export interface LineItem {
  readonly id: number
  readonly subscription_id: number
  readonly subscribable_id: number
  readonly quantity: number
  /** C17: delivered once, by the next installment, which deletes it. */
  readonly one_time: boolean
  readonly created_at: string
  readonly updated_at: string
}

/**
 * A line item with what the catalog says of it now (C16): its subscription's currency, the unit
 * price there in minor units (null when the catalog has none) and the item's discount in basis
 * points. Its representation's `price`, `discount_percent` and `total` come from these.
 */
export interface PricedLineItem extends LineItem {
  readonly currency: string
  readonly unit_price: number | null
  readonly discount_bp: number
}

/** The fields a change may set; the store fills ids and timestamps. */
export type SubscriptionPatch = Partial<Omit<Subscription, 'id' | 'user_id' | 'created_on' | 'created_at' | 'updated_at'>>

export interface User {
  readonly id: number
  /** null once the user is erased (C13): the row and its id stay. */
  readonly email: string | null
  readonly external_id: string | null
  /** The language of their mails (C17); null: the service's default (REPLENISH_DEFAULT_LOCALE). */
  readonly locale: Language | null
  /** false: no mail at all (C17). */
  readonly email_notifications: boolean
  readonly created_at: string
  readonly updated_at: string
}

export interface PaymentMethod {
  readonly id: number
  readonly name: string
  readonly active: boolean
  readonly created_at: string
  readonly updated_at: string
}

export interface PaymentSource {
  readonly id: number
  readonly user_id: number
  readonly payment_method_id: number
  readonly kind: string | null
  readonly brand: string | null
  readonly last_digits: string | null
  readonly month: number | null
  readonly year: number | null
  readonly gateway_reference: string | null
  readonly created_at: string
  readonly updated_at: string
}

/** A catalog item as the admin API shows it (C11, C16). */
export interface Subscribable {
  readonly id: number
  readonly sku: string
  readonly name: string
  readonly subscribable: boolean
  /** Currency code → amount (C16's strings), codes in alphabetical order. */
  readonly prices: Readonly<Record<string, string>>
  /** Subscribe-and-save on this item: "0"…"100" (formatPercent). */
  readonly discount_percent: string
  readonly created_at: string
  readonly updated_at: string
}

/**
 * C18: who made a change. `customer`: an API key (its id); `staff`: an admin token (its id; null
 * for REPLENISH_ADMIN_TOKEN, which is not stored); `portal`: a customer in the portal (their user
 * id); `processor` and `system` (imports, retention, the CLI): no id.
 */
export const ACTOR_TYPES = ['customer', 'staff', 'portal', 'processor', 'system'] as const
export type ActorType = (typeof ACTOR_TYPES)[number]

export interface Actor {
  readonly type: ActorType
  readonly id: number | null
}

/** What a create or a change writes to a catalog item: prices by currency in minor units, `null` removing one. */
export interface SubscribableFields {
  readonly sku: string
  readonly name: string
  readonly subscribable: boolean
  readonly discount_bp: number
  readonly prices: ReadonlyMap<string, bigint | null>
}

export interface EventRecord {
  readonly id: number
  readonly type: string
  readonly created_at: string
  readonly subscription_id: number | null
  /** Null for events written before C18 (migration 14). */
  readonly actor: Actor | null
  /** The X-Request-Id of the request that made the change; null for work no request made. */
  readonly request_id: string | null
  readonly data: { readonly object: unknown }
}
