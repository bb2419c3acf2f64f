import { renderLineItem } from '../../domain/representation.ts'
import type { Transition } from '../../domain/lifecycle.ts'
import type { LineItemChange, Lookups } from '../../domain/subscription-input.ts'
import type { LineItem, Subscription } from '../../domain/types.ts'
import { notFound } from '../../http/http-error.ts'
import type { App } from './app.ts'

// The writes both route tables share. Each runs inside a unit (`call.commit`) and writes the
// C10 event of the change it makes, holding the representation after the change.

/**
 * The subscription's C3 body as JSON text, rendered by SQLite as it stands now (inside a unit:
 * with the unit's own writes). Every answer and event that holds a subscription is this text,
 * so the body is built once and never stringified (issue 6). `keepLineItems`: the write changed
 * an existing subscription, which its customer is likely to change again (a lifecycle step, an
 * update): its line items are kept rendered for the next write (body-cache.ts).
 */
export function presentJson(app: App, subscriptionId: number, options: { keepLineItems?: boolean } = {}): string {
  const found = app.store.subscriptions.renderJson(subscriptionId, options.keepLineItems === true)
  if (!found) throw new Error(`subscription ${subscriptionId} vanished inside its own unit of writes`)
  return found.body
}

export function lookups(app: App): Lookups {
  return {
    paymentIsValid: (m, s, u) => app.store.catalog.paymentIsValid(m, s, u),
    isSubscribable: (id) => app.store.catalog.isSubscribable(id),
  }
}

/** Hooks other parts of the service add to transitions (processing abandons open installments on cancel). */
export interface TransitionHooks {
  /** Runs inside the cancel's unit, after the subscription is written canceled. */
  onCanceled?: (app: App, sub: Subscription) => unknown
}
export const transitionHooks: TransitionHooks = {}

/** Applies a lifecycle transition (or nothing, for a no-op) and answers the representation as JSON text. */
export function applyTransition(app: App, sub: Subscription, transition: Transition | null): string {
  if (!transition) return presentJson(app, sub.id)
  const updated = app.store.subscriptions.update(sub, transition.patch)
  if (updated.state === 'canceled') transitionHooks.onCanceled?.(app, updated)
  const json = presentJson(app, sub.id, { keepLineItems: true })
  app.store.events.recordJson(transition.event, sub.id, json)
  return json
}

/** Records a line item's event and answers the item as JSON text: the event and the answer are one stringify. */
export function recordLineItemEvent(app: App, type: string, item: LineItem): string {
  const json = JSON.stringify(renderLineItem(item))
  app.store.events.recordJson(type, item.subscription_id, json)
  return json
}

/** Nested `line_items_attributes` of an update (C7): ids must belong to this subscription (else 404). */
export function applyLineItemChanges(app: App, subscriptionId: number, changes: readonly LineItemChange[]): boolean {
  const s = app.store.subscriptions
  let touched = false
  for (const change of changes) {
    if (change.op === 'add') {
      recordLineItemEvent(app, 'line_item.created', s.addLineItem(subscriptionId, change.subscribable_id, change.quantity))
      touched = true
      continue
    }
    const item = s.lineItemById(change.id)
    if (!item || item.subscription_id !== subscriptionId) throw notFound()
    if (change.op === 'destroy') {
      s.deleteLineItem(item.id)
      recordLineItemEvent(app, 'line_item.deleted', item)
      touched = true
    } else if (change.quantity !== undefined || change.subscribable_id !== undefined) {
      const quantity = change.quantity ?? item.quantity
      const subscribable = change.subscribable_id ?? item.subscribable_id
      if (quantity !== item.quantity || subscribable !== item.subscribable_id) {
        recordLineItemEvent(app, 'line_item.updated', s.updateLineItem(item, subscribable, quantity))
        touched = true
      }
    }
  }
  return touched
}
