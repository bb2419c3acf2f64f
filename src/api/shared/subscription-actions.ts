import { renderLineItem, renderSubscription } from '../../domain/representation.ts'
import type { Transition } from '../../domain/lifecycle.ts'
import type { LineItemChange, Lookups } from '../../domain/subscription-input.ts'
import type { LineItem, Subscription } from '../../domain/types.ts'
import { notFound } from '../../http/http-error.ts'
import type { App } from './app.ts'

/**
 * The writes both route tables share. Each runs inside a unit (`call.commit`) and writes the
 * C10 event of the change it makes, holding the representation after the change.
 */
export function present(app: App, sub: Subscription): Record<string, unknown> {
  return renderSubscription(sub, app.store.subscriptions.lineItems(sub.id))
}

export function lookups(app: App): Lookups {
  return {
    paymentIsValid: (m, s, u) => app.store.catalog.paymentIsValid(m, s, u),
    isSubscribable: (id) => app.store.catalog.isSubscribable(id),
  }
}

/** Hooks other parts of the service add to transitions (processing abandons open installments on cancel). */
export interface TransitionHooks {
  /** Answers the subscription as it stands after the hook's own writes (its `processing_state` may change). */
  onCanceled?: (app: App, sub: Subscription) => Subscription | void
}
export const transitionHooks: TransitionHooks = {}

/** Applies a lifecycle transition (or nothing, for a no-op) and answers the representation. */
export function applyTransition(app: App, sub: Subscription, transition: Transition | null): Record<string, unknown> {
  if (!transition) return present(app, sub)
  let updated = app.store.subscriptions.update(sub.id, transition.patch)
  if (updated.state === 'canceled') updated = transitionHooks.onCanceled?.(app, updated) ?? updated
  const body = present(app, updated)
  app.store.events.record(transition.event, updated.id, body)
  return body
}

export function recordLineItemEvent(app: App, type: string, item: LineItem): Record<string, unknown> {
  const body = renderLineItem(item)
  app.store.events.record(type, item.subscription_id, body)
  return body
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
        recordLineItemEvent(app, 'line_item.updated', s.updateLineItem(item.id, subscribable, quantity))
        touched = true
      }
    }
  }
  return touched
}
