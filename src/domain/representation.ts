import type { Language } from './messages.ts'
import type { LineItem, Subscription, User } from './types.ts'

/** C3's subscription object: every field a client sees, in the documented order. */
export function renderSubscription(s: Subscription, lineItems: readonly LineItem[]): Record<string, unknown> {
  return {
    id: s.id,
    user_id: s.user_id,
    state: s.state,
    paused: s.paused,
    interval_length: s.interval_length,
    interval_units: s.interval_units,
    actionable_date: s.actionable_date,
    end_date: s.end_date,
    skip_count: s.skip_count,
    successive_skip_count: s.successive_skip_count,
    payment_method_id: s.payment_method_id,
    payment_source_id: s.payment_source_id,
    currency: s.currency,
    processing_state: s.processing_state,
    shipping_address: s.shipping_address,
    billing_address: s.billing_address,
    line_items: lineItems.map(renderLineItem),
    created_at: s.created_at,
    updated_at: s.updated_at,
  }
}

export function renderLineItem(li: LineItem): Record<string, unknown> {
  return {
    id: li.id,
    subscription_id: li.subscription_id,
    subscribable_id: li.subscribable_id,
    quantity: li.quantity,
    created_at: li.created_at,
    updated_at: li.updated_at,
  }
}

/**
 * C11's user with C17's settings: `locale` is the language their mails are in, the service's
 * default (REPLENISH_DEFAULT_LOCALE) while they have none of their own.
 */
export function renderUser(u: User, defaultLocale: Language): Record<string, unknown> {
  return {
    id: u.id,
    email: u.email,
    external_id: u.external_id,
    locale: u.locale ?? defaultLocale,
    email_notifications: u.email_notifications,
    created_at: u.created_at,
    updated_at: u.updated_at,
  }
}
