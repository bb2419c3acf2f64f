import { notFound } from '../../http/http-error.ts'
import type { Ctx } from '../../http/types.ts'
import { FieldErrors, ValidationFailed } from '../../domain/field-errors.ts'
import { readLineItemFields, readOneTime, type Lookups } from '../../domain/subscription-input.ts'
import { renderLineItem } from '../../domain/representation.ts'
import type { PricedLineItem } from '../../domain/types.ts'
import type { Tx } from '../../store/api.ts'
import type { App } from '../kit/app.ts'
import { authenticate } from '../kit/auth.ts'
import { ok, okJson, type ApiHandler } from '../kit/endpoint.ts'
import { withLookups } from '../kit/lookups.ts'
import { parseId, rootObject } from '../kit/params.ts'
import { lockOwned, recordLineItemEvent } from '../kit/subscription-actions.ts'
import { notAuthorized } from '../kit/errors.ts'

/** A line item is owned through its subscription (C2): 404, then 401. */
function owned(item: (PricedLineItem & { owner_id: number }) | undefined, userId: number): PricedLineItem {
  if (!item) throw notFound()
  if (item.owner_id !== userId) throw notAuthorized()
  const { owner_id: _owner, ...lineItem } = item
  return lineItem
}

type Fields = { quantity?: number; subscribable_id?: number; one_time?: boolean }

/** `required`: an add, which also reads C17's `one_time` (an update ignores it). */
function readFields(lookups: Lookups, attrs: Record<string, unknown>, required: boolean): Fields {
  const errors = new FieldErrors()
  const fields: Fields = readLineItemFields(attrs, '', lookups, errors, { quantity: required, subscribable: required })
  if (required) fields.one_time = readOneTime(attrs, '', errors)
  if (!errors.empty) throw new ValidationFailed(errors)
  return fields
}

const validFields = (tx: Tx, attrs: Record<string, unknown>, required: boolean): Fields | Promise<Fields> =>
  withLookups(tx, (lookups) => readFields(lookups, attrs, required))

export const addLineItem = (app: App): ApiHandler => async (ctx, call) => {
  const userId = await authenticate(app, ctx)
  const id = parseId(ctx.params['id'])
  return call.commit(async (tx) => {
    const sub = await lockOwned(tx, id, userId)
    const fields = await validFields(tx, rootObject(ctx, 'subscription_line_item'), true)
    const item = await tx.subscriptions.addLineItem(sub.id, fields.subscribable_id as number, fields.quantity as number, fields.one_time === true)
    await tx.subscriptions.touch(sub.id)
    return okJson(await recordLineItemEvent(tx, 'line_item.created', item))
  })
}

export const showLineItem = (app: App): ApiHandler => async (ctx) => {
  const userId = await authenticate(app, ctx)
  return ok(renderLineItem(owned(await app.store.subscriptions.findLineItem(parseId(ctx.params['id'])), userId)))
}

export const updateLineItem = (app: App): ApiHandler => async (ctx, call) => {
  const userId = await authenticate(app, ctx)
  const id = parseId(ctx.params['id'])
  return call.commit(async (tx) => {
    const item = owned(await tx.subscriptions.lockLineItem(id), userId)
    const fields = await validFields(tx, rootObject(ctx, 'subscription_line_item'), false)
    const quantity = fields.quantity ?? item.quantity
    const subscribable = fields.subscribable_id ?? item.subscribable_id
    if (quantity === item.quantity && subscribable === item.subscribable_id) return ok(renderLineItem(item))
    const updated = await tx.subscriptions.updateLineItem(item, subscribable, quantity)
    await tx.subscriptions.touch(item.subscription_id)
    return okJson(await recordLineItemEvent(tx, 'line_item.updated', updated))
  })
}

export const deleteLineItem = (app: App): ApiHandler => async (ctx, call) => {
  const userId = await authenticate(app, ctx)
  const id = parseId(ctx.params['id'])
  return call.commit(async (tx) => {
    const item = owned(await tx.subscriptions.lockLineItem(id), userId)
    await tx.subscriptions.deleteLineItem(item.id)
    await tx.subscriptions.touch(item.subscription_id)
    return okJson(await recordLineItemEvent(tx, 'line_item.deleted', item))
  })
}
