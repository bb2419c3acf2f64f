import { notFound } from '../../http/http-error.ts'
import type { Ctx } from '../../http/types.ts'
import { FieldErrors, ValidationFailed } from '../../domain/field-errors.ts'
import { readLineItemFields } from '../../domain/subscription-input.ts'
import { renderLineItem } from '../../domain/representation.ts'
import type { LineItem } from '../../domain/types.ts'
import type { App } from '../shared/app.ts'
import { authenticate } from '../shared/auth.ts'
import { ok, okJson, type ApiHandler } from '../shared/endpoint.ts'
import { parseId, rootObject } from '../shared/params.ts'
import { lookups, recordLineItemEvent } from '../shared/subscription-actions.ts'
import { notAuthorized } from './errors.ts'
import { ownSubscription } from './subscriptions.ts'

/** A line item is owned through its subscription (C2). */
function ownLineItem(app: App, ctx: Ctx): LineItem {
  const userId = authenticate(app, ctx)
  const item = app.store.subscriptions.findLineItem(parseId(ctx.params['id']))
  if (!item) throw notFound()
  if (item.owner_id !== userId) throw notAuthorized()
  const { owner_id: _owner, ...lineItem } = item
  return lineItem
}

function readFields(app: App, attrs: Record<string, unknown>, required: boolean): { quantity?: number; subscribable_id?: number } {
  const errors = new FieldErrors()
  const fields = readLineItemFields(attrs, '', lookups(app), errors, { quantity: required, subscribable: required })
  if (!errors.empty) throw new ValidationFailed(errors)
  return fields
}

export const addLineItem = (app: App): ApiHandler => (ctx, call) => {
  const sub = ownSubscription(app, ctx)
  const attrs = rootObject(ctx, 'subscription_line_item')
  return call.commit(() => {
    const fields = readFields(app, attrs, true)
    const item = app.store.subscriptions.addLineItem(sub.id, fields.subscribable_id as number, fields.quantity as number)
    app.store.subscriptions.touch(sub.id)
    return okJson(recordLineItemEvent(app, 'line_item.created', item))
  })
}

export const showLineItem = (app: App): ApiHandler => (ctx) => ok(renderLineItem(ownLineItem(app, ctx)))

export const updateLineItem = (app: App): ApiHandler => (ctx, call) => {
  const item = ownLineItem(app, ctx)
  const attrs = rootObject(ctx, 'subscription_line_item')
  return call.commit(() => {
    const fields = readFields(app, attrs, false)
    const quantity = fields.quantity ?? item.quantity
    const subscribable = fields.subscribable_id ?? item.subscribable_id
    if (quantity === item.quantity && subscribable === item.subscribable_id) return ok(renderLineItem(item))
    const updated = app.store.subscriptions.updateLineItem(item, subscribable, quantity)
    app.store.subscriptions.touch(item.subscription_id)
    return okJson(recordLineItemEvent(app, 'line_item.updated', updated))
  })
}

export const deleteLineItem = (app: App): ApiHandler => (ctx, call) => {
  const item = ownLineItem(app, ctx)
  return call.commit(() => {
    app.store.subscriptions.deleteLineItem(item.id)
    app.store.subscriptions.touch(item.subscription_id)
    return okJson(recordLineItemEvent(app, 'line_item.deleted', item))
  })
}
