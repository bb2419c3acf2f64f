import { renderLineItem } from '../../domain/representation.ts'
import type { Transition } from '../../domain/lifecycle.ts'
import type { LineItemChange, NewSubscription, SubscriptionUpdate } from '../../domain/subscription-input.ts'
import type { PricedLineItem, Subscription } from '../../domain/types.ts'
import { notFound } from '../../http/http-error.ts'
import type { Tx } from '../../store/api.ts'
import { notAuthorized } from './errors.ts'

// The writes both route tables share. Each runs inside a unit (`call.commit`), through its `tx`,
// and writes the C10 event of the change it makes, holding the representation after the change.

/**
 * C2's find and own inside the unit: the subscription a change is decided from, held by the unit
 * (`tx.subscriptions.lock`) so nothing changes it before the unit commits. 404 before 401.
 * `forBody`: the unit answers the body after changing the row alone (a lifecycle step).
 */
export async function lockOwned(tx: Tx, id: number, userId: number | undefined, forBody = false): Promise<Subscription> {
  const sub = await tx.subscriptions.lock(id, forBody)
  if (!sub) throw notFound()
  if (userId !== undefined && sub.user_id !== userId) throw notAuthorized()
  return sub
}

/**
 * The subscription's C3 body as JSON text as it stands inside the unit, with the unit's own
 * writes. Every answer and event that holds a subscription is this text, so the body is built
 * once and never stringified (issue 6). `keepLineItems`: the write changed an existing
 * subscription, which its customer is likely to change again (a lifecycle step, an update): the
 * SQLite store keeps its line items rendered for the next write (body-cache.ts).
 */
export async function presentJson(tx: Tx, subscriptionId: number, options: { keepLineItems?: boolean } = {}): Promise<string> {
  const found = await tx.subscriptions.renderJson(subscriptionId, options.keepLineItems === true)
  if (!found) throw new Error(`subscription ${subscriptionId} vanished inside its own unit of writes`)
  return found.body
}

/** A validated create (C6, or the shop's C13): the subscription, its `subscription.created` event; answers its body. */
export async function createValidated(tx: Tx, userId: number, input: NewSubscription, today: string): Promise<string> {
  const id = await tx.subscriptions.create(userId, input, today)
  const json = await presentJson(tx, id)
  await tx.events.append('subscription.created', id, json)
  return json
}

/** A validated update (C7, or the shop's C13): line items, then columns, then one event per kind of change; answers the body. */
export async function applyValidatedUpdate(tx: Tx, sub: Subscription, update: SubscriptionUpdate): Promise<string> {
  const itemsChanged = await applyLineItemChanges(tx, sub.id, update.lineItems)
  const changed = update.changes.size > 0
  // A change to its line items is a change to the subscription: its updated_at moves too.
  if (itemsChanged && !changed) await tx.subscriptions.touch(sub.id)
  if (changed) await tx.subscriptions.update(sub, update.patch)
  const json = await presentJson(tx, sub.id, { keepLineItems: true })
  const events = tx.events
  if (update.changes.has('frequency')) await events.append('subscription.frequency_changed', sub.id, json)
  if (update.changes.has('payment')) await events.append('subscription.payment_method_changed', sub.id, json)
  if (update.changes.has('shipping')) await events.append('subscription.shipping_address_changed', sub.id, json)
  if (update.changes.has('billing')) await events.append('subscription.billing_address_changed', sub.id, json)
  if (update.changes.has('other')) await events.append('subscription.updated', sub.id, json)
  return json
}

/** Hooks other parts of the service add to transitions (processing abandons open installments on cancel). */
export interface TransitionHooks {
  /** Runs inside the cancel's unit, after the subscription is written canceled. */
  onCanceled?: (tx: Tx, sub: Subscription) => Promise<unknown>
}
export const transitionHooks: TransitionHooks = {}

/** Applies a lifecycle transition (or nothing, for a no-op) and answers the representation as JSON text. */
export async function applyTransition(tx: Tx, sub: Subscription, transition: Transition | null): Promise<string> {
  if (!transition) return presentJson(tx, sub.id)
  const updated = await tx.subscriptions.update(sub, transition.patch)
  if (updated.state === 'canceled') await transitionHooks.onCanceled?.(tx, updated)
  const json = await presentJson(tx, sub.id, { keepLineItems: true })
  await tx.events.append(transition.event, sub.id, json)
  return json
}

/** Records a line item's event and answers the item as JSON text: the event and the answer are one stringify. */
export async function recordLineItemEvent(tx: Tx, type: string, item: PricedLineItem): Promise<string> {
  const json = JSON.stringify(renderLineItem(item))
  await tx.events.append(type, item.subscription_id, json)
  return json
}

/** Nested `line_items_attributes` of an update (C7): ids must belong to this subscription (else 404). */
export async function applyLineItemChanges(tx: Tx, subscriptionId: number, changes: readonly LineItemChange[]): Promise<boolean> {
  const s = tx.subscriptions
  let touched = false
  for (const change of changes) {
    if (change.op === 'add') {
      await recordLineItemEvent(tx, 'line_item.created', await s.addLineItem(subscriptionId, change.subscribable_id, change.quantity, change.one_time))
      touched = true
      continue
    }
    const item = await s.lineItemById(change.id)
    if (!item || item.subscription_id !== subscriptionId) throw notFound()
    if (change.op === 'destroy') {
      await s.deleteLineItem(item.id)
      await recordLineItemEvent(tx, 'line_item.deleted', item)
      touched = true
    } else if (change.quantity !== undefined || change.subscribable_id !== undefined) {
      const quantity = change.quantity ?? item.quantity
      const subscribable = change.subscribable_id ?? item.subscribable_id
      if (quantity !== item.quantity || subscribable !== item.subscribable_id) {
        await recordLineItemEvent(tx, 'line_item.updated', await s.updateLineItem(item, subscribable, quantity))
        touched = true
      }
    }
  }
  return touched
}
