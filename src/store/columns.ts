import type { Actor, ActorType, SubscriptionPatch } from '../domain/types.ts'

/**
 * Facts of the schema both backends share (sqlite/migrations.ts, postgres/migrations.ts): the
 * columns a subscription or line item read selects, in the order the row mappers read them, and
 * the column each field of a subscription patch is written to.
 */
export const SUBSCRIPTION_COLUMNS = [
  'id', 'user_id', 'state', 'paused', 'interval_length', 'interval_units', 'actionable_date', 'anchor_day', 'end_date',
  'skip_count', 'successive_skip_count', 'payment_method_id', 'payment_source_id', 'currency', 'processing_state',
  'shipping_address', 'billing_address', 'created_on', 'created_at', 'updated_at',
] as const

export const LINE_ITEM_COLUMNS = ['id', 'subscription_id', 'subscribable_id', 'quantity', 'created_at', 'updated_at'] as const

export const COLUMN_OF: Record<keyof SubscriptionPatch, string> = {
  state: 'state', paused: 'paused', interval_length: 'interval_length', interval_units: 'interval_units',
  actionable_date: 'actionable_date', anchor_day: 'anchor_day', end_date: 'end_date', skip_count: 'skip_count',
  successive_skip_count: 'successive_skip_count', payment_method_id: 'payment_method_id',
  payment_source_id: 'payment_source_id', currency: 'currency', processing_state: 'processing_state',
  shipping_address: 'shipping_address', billing_address: 'billing_address',
}

/** The columns every events read selects, in the order the row mappers read them. */
export const EVENT_COLUMNS = ['id', 'type', 'created_at', 'subscription_id', 'actor_type', 'actor_id', 'request_id', 'data'] as const

/** An event's actor columns as C18's `actor`: null for an event written before them (migration 14). */
export const storedActor = (type: string | null, id: number | null): Actor | null => (type === null ? null : { type: type as ActorType, id })
