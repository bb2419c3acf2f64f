import { notFound } from '../http/http-error.ts'
import { FieldErrors } from '../domain/field-errors.ts'
import { readDiscount, readPrices } from '../domain/catalog-input.ts'
import { basisPointsOf } from '../domain/money.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId, rootObject } from '../api/kit/params.ts'
import { presentJson, recordLineItemEvent } from '../api/kit/subscription-actions.ts'
import { changeFound } from './change-found.ts'
import { ID_PARAM, check, optionalBoolean, optionalInteger, optionalString, readListQuery, requiredId, requiredString } from './input.ts'

// ---- payment methods ----------------------------------------------------------------------------

export const createPaymentMethod = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'payment_method')
  return call.commit(async (tx) => {
    const errors = new FieldErrors()
    const name = requiredString(attrs, 'name', errors)
    const active = optionalBoolean(attrs, 'active', true, errors)
    check(errors)
    return ok(await tx.catalog.createPaymentMethod(name as string, active), 201)
  })
}

export const listPaymentMethods = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const { after, limit } = readListQuery(ctx.query, {})
  return ok(cursorBody('payment_methods', await app.store.catalog.listPaymentMethods(after, limit + 1), limit, (m) => m))
}

export const showPaymentMethod = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const method = await app.store.catalog.findPaymentMethod(parseId(ctx.params['id']))
  if (!method) throw notFound()
  return ok(method)
}

export const updatePaymentMethod = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.catalog.findPaymentMethod(id), async (tx, method, ctx) => {
    const attrs = rootObject(ctx, 'payment_method')
    const errors = new FieldErrors()
    const name = attrs['name'] === undefined ? method.name : requiredString(attrs, 'name', errors)
    const active = optionalBoolean(attrs, 'active', method.active, errors)
    check(errors)
    return ok(await tx.catalog.updatePaymentMethod(method.id, name as string, active))
  })

// ---- payment sources ----------------------------------------------------------------------------

export const createPaymentSource = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'payment_source')
  return call.commit(async (tx) => {
    const errors = new FieldErrors()
    // One field after the other: the 422 body lists the fields in this order.
    const userId = requiredId(attrs, 'user_id', errors)
    if (userId !== undefined && !(await tx.accounts.findUser(userId))) errors.add('user_id', 'invalid')
    const methodId = requiredId(attrs, 'payment_method_id', errors)
    if (methodId !== undefined && !(await tx.catalog.findPaymentMethod(methodId))) errors.add('payment_method_id', 'invalid')
    const fields = {
      kind: optionalString(attrs, 'kind', errors),
      brand: optionalString(attrs, 'brand', errors),
      last_digits: optionalString(attrs, 'last_digits', errors, 4),
      month: optionalInteger(attrs, 'month', errors),
      year: optionalInteger(attrs, 'year', errors),
      gateway_reference: optionalString(attrs, 'gateway_reference', errors),
    }
    check(errors)
    return ok(await tx.catalog.createPaymentSource({ user_id: userId as number, payment_method_id: methodId as number, ...fields }), 201)
  })
}

export const listPaymentSources = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const { after, limit, user_id } = readListQuery(ctx.query, { user_id: ID_PARAM })
  return ok(cursorBody('payment_sources', await app.store.catalog.listPaymentSources(user_id, after, limit + 1), limit, (p) => p))
}

export const showPaymentSource = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const source = await app.store.catalog.findPaymentSource(parseId(ctx.params['id']))
  if (!source) throw notFound()
  return ok(source)
}

/** Deleting a source clears both payment ids from its subscriptions, each with its event (C11). */
export const deletePaymentSource = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.catalog.findPaymentSource(id), async (tx, source) => {
    const ids = await tx.subscriptions.idsWithPaymentSource(source.id)
    await tx.subscriptions.clearPaymentSource(source.id)
    for (const subscriptionId of ids) {
      await tx.events.recordJson('subscription.payment_method_changed', subscriptionId, await presentJson(tx, subscriptionId))
    }
    await tx.catalog.deletePaymentSource(source.id)
    return ok(source)
  })

// ---- subscribables (the catalog) ----------------------------------------------------------------

export const createSubscribable = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'subscribable')
  return call.commit(async (tx) => {
    const errors = new FieldErrors()
    const sku = requiredString(attrs, 'sku', errors)
    if (sku !== undefined && (await tx.catalog.subscribableIdForSku(sku)) !== undefined) errors.add('sku', 'taken')
    const name = requiredString(attrs, 'name', errors)
    const subscribable = optionalBoolean(attrs, 'subscribable', true, errors)
    const prices = readPrices(attrs['prices'], {}, errors)
    const discount_bp = readDiscount(attrs['discount_percent'], 0, errors)
    check(errors)
    return ok(await tx.catalog.createSubscribable({ sku: sku as string, name: name as string, subscribable, discount_bp, prices }), 201)
  })
}

export const listSubscribables = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const { after, limit } = readListQuery(ctx.query, {})
  return ok(cursorBody('subscribables', await app.store.catalog.listSubscribables(after, limit + 1), limit, (s) => s))
}

export const showSubscribable = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const item = await app.store.catalog.findSubscribable(parseId(ctx.params['id']))
  if (!item) throw notFound()
  return ok(item)
}

export const updateSubscribable = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.catalog.findSubscribable(id), async (tx, item, ctx) => {
    const attrs = rootObject(ctx, 'subscribable')
    const errors = new FieldErrors()
    const sku = attrs['sku'] === undefined ? item.sku : requiredString(attrs, 'sku', errors)
    if (sku !== undefined && sku !== item.sku && (await tx.catalog.subscribableIdForSku(sku)) !== undefined) errors.add('sku', 'taken')
    const name = attrs['name'] === undefined ? item.name : requiredString(attrs, 'name', errors)
    const subscribable = optionalBoolean(attrs, 'subscribable', item.subscribable, errors)
    // C16: prices merge by currency (null removes one); a price change shows at once on every
    // subscription that holds the item (their bodies follow the catalog: no copy to rewrite).
    const prices = readPrices(attrs['prices'], item.prices, errors)
    const discount_bp = readDiscount(attrs['discount_percent'], basisPointsOf(item.discount_percent), errors)
    check(errors)
    return ok(await tx.catalog.updateSubscribable(item.id, { sku: sku as string, name: name as string, subscribable, discount_bp, prices }))
  })

/** Deleting a catalog item removes its line items, each with a `line_item.deleted` event (C11). */
export const deleteSubscribable = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.catalog.findSubscribable(id), async (tx, item) => {
    for (const li of await tx.subscriptions.lineItemsOfSubscribable(item.id)) {
      await tx.subscriptions.deleteLineItem(li.id)
      await recordLineItemEvent(tx, 'line_item.deleted', li)
    }
    await tx.catalog.deleteSubscribable(item.id)
    return ok(item)
  })
