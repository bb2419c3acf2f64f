import { notFound } from '../http/http-error.ts'
import { FieldErrors, readId } from '../domain/field-errors.ts'
import type { App } from '../api/shared/app.ts'
import { authenticateAdmin } from '../api/shared/auth.ts'
import { ok, type ApiHandler } from '../api/shared/endpoint.ts'
import { cursorBody, parseId, readCursor, rootObject } from '../api/shared/params.ts'
import { presentJson, recordLineItemEvent } from '../api/shared/subscription-actions.ts'
import { check, optionalBoolean, optionalInteger, optionalString, requiredId, requiredString } from './input.ts'

// ---- payment methods ----------------------------------------------------------------------------

export const createPaymentMethod = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'payment_method')
  return call.commit(() => {
    const errors = new FieldErrors()
    const name = requiredString(attrs, 'name', errors)
    const active = optionalBoolean(attrs, 'active', true, errors)
    check(errors)
    return ok(app.store.catalog.createPaymentMethod(name as string, active), 201)
  })
}

export const listPaymentMethods = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const { after, limit } = readCursor(ctx.query)
  return ok(cursorBody('payment_methods', app.store.catalog.listPaymentMethods(after, limit + 1), limit, (m) => m))
}

export const showPaymentMethod = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const method = app.store.catalog.findPaymentMethod(parseId(ctx.params['id']))
  if (!method) throw notFound()
  return ok(method)
}

export const updatePaymentMethod = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const method = app.store.catalog.findPaymentMethod(parseId(ctx.params['id']))
  if (!method) throw notFound()
  const attrs = rootObject(ctx, 'payment_method')
  return call.commit(() => {
    const errors = new FieldErrors()
    const name = attrs['name'] === undefined ? method.name : requiredString(attrs, 'name', errors)
    const active = optionalBoolean(attrs, 'active', method.active, errors)
    check(errors)
    return ok(app.store.catalog.updatePaymentMethod(method.id, name as string, active))
  })
}

// ---- payment sources ----------------------------------------------------------------------------

export const createPaymentSource = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'payment_source')
  return call.commit(() => {
    const errors = new FieldErrors()
    const userId = requiredId(attrs, 'user_id', errors)
    if (userId !== undefined && !app.store.accounts.findUser(userId)) errors.add('user_id', 'invalid')
    const methodId = requiredId(attrs, 'payment_method_id', errors)
    if (methodId !== undefined && !app.store.catalog.findPaymentMethod(methodId)) errors.add('payment_method_id', 'invalid')
    const fields = {
      kind: optionalString(attrs, 'kind', errors),
      brand: optionalString(attrs, 'brand', errors),
      last_digits: optionalString(attrs, 'last_digits', errors, 4),
      month: optionalInteger(attrs, 'month', errors),
      year: optionalInteger(attrs, 'year', errors),
      gateway_reference: optionalString(attrs, 'gateway_reference', errors),
    }
    check(errors)
    return ok(app.store.catalog.createPaymentSource({ user_id: userId as number, payment_method_id: methodId as number, ...fields }), 201)
  })
}

export const listPaymentSources = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const { after, limit } = readCursor(ctx.query)
  const userParam = ctx.query.get('user_id')
  const userId = userParam === null ? undefined : (readId(userParam) ?? -1)
  return ok(cursorBody('payment_sources', app.store.catalog.listPaymentSources(userId, after, limit + 1), limit, (p) => p))
}

export const showPaymentSource = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const source = app.store.catalog.findPaymentSource(parseId(ctx.params['id']))
  if (!source) throw notFound()
  return ok(source)
}

/** Deleting a source clears both payment ids from its subscriptions, each with its event (C11). */
export const deletePaymentSource = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const source = app.store.catalog.findPaymentSource(parseId(ctx.params['id']))
  if (!source) throw notFound()
  return call.commit(() => {
    const ids = app.store.subscriptions.idsWithPaymentSource(source.id)
    app.store.subscriptions.clearPaymentSource(source.id)
    for (const id of ids) app.store.events.recordJson('subscription.payment_method_changed', id, presentJson(app, id))
    app.store.catalog.deletePaymentSource(source.id)
    return ok(source)
  })
}

// ---- subscribables (the catalog) ----------------------------------------------------------------

export const createSubscribable = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'subscribable')
  return call.commit(() => {
    const errors = new FieldErrors()
    const sku = requiredString(attrs, 'sku', errors)
    if (sku !== undefined && app.store.catalog.subscribableIdForSku(sku) !== undefined) errors.add('sku', 'taken')
    const name = requiredString(attrs, 'name', errors)
    const subscribable = optionalBoolean(attrs, 'subscribable', true, errors)
    check(errors)
    return ok(app.store.catalog.createSubscribable(sku as string, name as string, subscribable), 201)
  })
}

export const listSubscribables = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const { after, limit } = readCursor(ctx.query)
  return ok(cursorBody('subscribables', app.store.catalog.listSubscribables(after, limit + 1), limit, (s) => s))
}

export const showSubscribable = (app: App): ApiHandler => (ctx) => {
  authenticateAdmin(app, ctx)
  const item = app.store.catalog.findSubscribable(parseId(ctx.params['id']))
  if (!item) throw notFound()
  return ok(item)
}

export const updateSubscribable = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const item = app.store.catalog.findSubscribable(parseId(ctx.params['id']))
  if (!item) throw notFound()
  const attrs = rootObject(ctx, 'subscribable')
  return call.commit(() => {
    const errors = new FieldErrors()
    const sku = attrs['sku'] === undefined ? item.sku : requiredString(attrs, 'sku', errors)
    if (sku !== undefined && sku !== item.sku && app.store.catalog.subscribableIdForSku(sku) !== undefined) errors.add('sku', 'taken')
    const name = attrs['name'] === undefined ? item.name : requiredString(attrs, 'name', errors)
    const subscribable = optionalBoolean(attrs, 'subscribable', item.subscribable, errors)
    check(errors)
    return ok(app.store.catalog.updateSubscribable(item.id, sku as string, name as string, subscribable))
  })
}

/** Deleting a catalog item removes its line items, each with a `line_item.deleted` event (C11). */
export const deleteSubscribable = (app: App): ApiHandler => (ctx, call) => {
  authenticateAdmin(app, ctx)
  const item = app.store.catalog.findSubscribable(parseId(ctx.params['id']))
  if (!item) throw notFound()
  return call.commit(() => {
    for (const li of app.store.subscriptions.lineItemsOfSubscribable(item.id)) {
      app.store.subscriptions.deleteLineItem(li.id)
      recordLineItemEvent(app, 'line_item.deleted', li)
    }
    app.store.catalog.deleteSubscribable(item.id)
    return ok(item)
  })
}
