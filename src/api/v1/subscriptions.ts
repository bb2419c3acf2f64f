import type { Ctx } from '../../http/types.ts'
import { notAuthorized } from '../kit/errors.ts'
import { notFound } from '../../http/http-error.ts'
import { validateCreate, validateUpdate } from '../../domain/subscription-input.ts'
import { activate, cancel, pause, resume, skip, type Transition } from '../../domain/lifecycle.ts'
import { STATES, type State, type Subscription } from '../../domain/types.ts'
import type { App } from '../kit/app.ts'
import { authenticate, authenticatedRead } from '../kit/auth.ts'
import { ok, okJson, type ApiHandler } from '../kit/endpoint.ts'
import { withLookups } from '../kit/lookups.ts'
import { optionalRoot, pageBody, pageJson, parseId, readPage, rootObject } from '../kit/params.ts'
import { applyTransition, applyValidatedUpdate, createValidated, lockOwned } from '../kit/subscription-actions.ts'

/** authenticate → find (404) → own (401), the order of C2, for the reads of a subscription's records. */
export async function ownSubscription(app: App, ctx: Ctx): Promise<Subscription> {
  const userId = await authenticate(app, ctx)
  const sub = await app.store.subscriptions.find(parseId(ctx.params['id']))
  if (!sub) throw notFound()
  if (sub.user_id !== userId) throw notAuthorized()
  return sub
}

export const createSubscription = (app: App): ApiHandler => async (ctx, call) => {
  const userId = await authenticate(app, ctx)
  const attrs = rootObject(ctx, 'subscription')
  const today = app.clock.today()
  return call.commit(async (tx) => {
    const input = await withLookups(tx, (lookups) => validateCreate(attrs, { today, userId, lookups }, app.config.currency))
    return okJson(await createValidated(tx, userId, input, today))
  })
}

export const listSubscriptions = (app: App): ApiHandler => async (ctx) => {
  const stateParam = ctx.query.get('state')
  const state = stateParam !== null && stateParam !== '' ? (stateParam as State) : undefined
  const page = readPage(ctx.query)
  if (state !== undefined && !(STATES as readonly string[]).includes(state)) {
    await authenticate(app, ctx)
    return ok(pageBody('subscriptions', [], page, 0))
  }
  // Each subscription is its GET body (C3), from the body cache where it is; on PostgreSQL the
  // page, its count and the key's check are one statement.
  const { found } = await authenticatedRead(app, ctx, (withGeneration, userId) =>
    app.store.subscriptions.pageOfUser(userId, state, page.offset, page.perPage, withGeneration))
  if (found === undefined) throw new Error('a page of subscriptions was read as nothing')
  return okJson(pageJson('subscriptions', found.bodies, page, found.total))
}

export const showSubscription = (app: App): ApiHandler => async (ctx) => {
  const { userId, found } = await authenticatedRead(app, ctx, (withGeneration) => app.store.subscriptions.findJson(parseId(ctx.params['id']), withGeneration))
  if (!found) throw notFound()
  if (found.user_id !== userId) throw notAuthorized()
  return { status: 200, body: undefined, raw: found.body }
}

export const updateSubscription = (app: App): ApiHandler => async (ctx, call) => {
  const userId = await authenticate(app, ctx)
  const id = parseId(ctx.params['id'])
  const today = app.clock.today()
  return call.commit(async (tx) => {
    const sub = await lockOwned(tx, id, userId)
    const attrs = rootObject(ctx, 'subscription')
    const lastDue = await tx.subscriptions.lastDueDate(sub.id)
    const update = await withLookups(tx, (lookups) => validateUpdate(sub, attrs, { today, userId: sub.user_id, lookups }, lastDue))
    return okJson(await applyValidatedUpdate(tx, sub, update))
  })
}

/** The lifecycle routes: find and own inside the unit, then one transition. */
function transitionRoute(app: App, decide: (sub: Subscription, ctx: Ctx) => Transition | null): ApiHandler {
  return async (ctx, call) => {
    const userId = await authenticate(app, ctx)
    const id = parseId(ctx.params['id'])
    return call.commit(async (tx) => {
      const sub = await lockOwned(tx, id, userId, true)
      return okJson(await applyTransition(tx, sub, decide(sub, ctx)))
    })
  }
}

const dateParam = (ctx: Ctx): unknown => optionalRoot(ctx, 'subscription')['actionable_date']

export const skipSubscription = (app: App): ApiHandler =>
  transitionRoute(app, (sub) => skip(sub, app.clock.today(), app.config))
export const cancelSubscription = (app: App): ApiHandler =>
  transitionRoute(app, (sub) => cancel(sub, app.clock.today(), app.config.cancellationNoticeDays))
export const pauseSubscription = (app: App): ApiHandler =>
  transitionRoute(app, (sub, ctx) => pause(sub, dateParam(ctx), app.clock.today()))
export const resumeSubscription = (app: App): ApiHandler =>
  transitionRoute(app, (sub, ctx) => resume(sub, dateParam(ctx), app.clock.today()))
export const activateSubscription = (app: App): ApiHandler =>
  transitionRoute(app, (sub) => activate(sub, app.clock.today()))

export const listEvents = (app: App): ApiHandler => async (ctx) => {
  const sub = await ownSubscription(app, ctx)
  const page = readPage(ctx.query)
  const events = await app.store.events.ofSubscription(sub.id, page.offset, page.perPage)
  return ok(pageBody('events', events, page, await app.store.events.countOfSubscription(sub.id)))
}
