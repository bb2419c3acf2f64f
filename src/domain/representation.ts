import type { Language } from './messages.ts'
import { costOf, lineMoney, totalsOf } from './money.ts'
import type { PricedLineItem, Subscription, User } from './types.ts'

/**
 * C3's subscription object: every field a client sees, in the documented order, with C16's money:
 * the next delivery's `subtotal`, `discount_total` and `total` after `currency`, from the line
 * items as the catalog prices them now. SQLite renders the same text in SQL
 * (sqlite/subscriptions-store.ts): a change here is made there too (test/store/subscription-json).
 */
export function renderSubscription(s: Subscription, lineItems: readonly PricedLineItem[]): Record<string, unknown> {
  const totals = totalsOf(lineItems.map((li) => costOf(li.quantity, li.unit_price, li.discount_bp)), s.currency)
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
    subtotal: totals.subtotal,
    discount_total: totals.discount_total,
    total: totals.total,
    processing_state: s.processing_state,
    shipping_address: s.shipping_address,
    billing_address: s.billing_address,
    line_items: lineItems.map(renderLineItem),
    created_at: s.created_at,
    updated_at: s.updated_at,
  }
}

/** C3's line item with C16's `price`, `discount_percent` and `total` after its quantity. */
export function renderLineItem(li: PricedLineItem): Record<string, unknown> {
  const money = lineMoney(li.quantity, li.unit_price, li.discount_bp, li.currency)
  return {
    id: li.id,
    subscription_id: li.subscription_id,
    subscribable_id: li.subscribable_id,
    quantity: li.quantity,
    one_time: li.one_time,
    price: money.price,
    discount_percent: money.discount_percent,
    total: money.total,
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
