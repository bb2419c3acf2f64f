/**
 * The catalogue of event types (C10), once: what the services record, what a webhook endpoint
 * may subscribe to (`*` for all of them), and what docs/webhooks.md lists.
 */
export const EVENT_TYPES = [
  'subscription.created',
  'subscription.updated',
  'subscription.frequency_changed',
  'subscription.payment_method_changed',
  'subscription.shipping_address_changed',
  'subscription.billing_address_changed',
  'subscription.skipped',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'subscription.cancellation_pending',
  'subscription.activated',
  'subscription.ended',
  'subscription.upcoming',
  'line_item.created',
  'line_item.updated',
  'line_item.deleted',
  'installment.created',
  'installment.fulfilled',
  'installment.failed',
  'installment.retry_scheduled',
  'installment.retry_due',
  'installment.abandoned',
  // C18: sent on request to one endpoint (POST /webhook_endpoints/:id/test), never fanned out.
  'webhook.test',
] as const

export type EventType = (typeof EVENT_TYPES)[number]

/** The event a staff member sends to check an endpoint (C18); `data.object` is `{webhook_endpoint_id}`. */
export const TEST_EVENT = 'webhook.test' satisfies EventType

/** An endpoint's subscription to every type, present and future. */
export const ALL_EVENTS = '*'

const KNOWN: ReadonlySet<string> = new Set<string>(EVENT_TYPES)

export function isEventType(value: unknown): value is EventType {
  return typeof value === 'string' && KNOWN.has(value)
}
