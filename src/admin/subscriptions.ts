import { EVENT_TYPES } from '../domain/events.ts'
import type { Ctx } from '../http/types.ts'
import { notFound } from '../http/http-error.ts'
import { activate, cancel, pause, resume, skip, type Transition } from '../domain/lifecycle.ts'
import { renderSubscription } from '../domain/representation.ts'
import { STATES, type Subscription } from '../domain/types.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, okJson, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, optionalRoot, parseId } from '../api/kit/params.ts'
import { applyTransition } from '../api/kit/subscription-actions.ts'
import { changeFound } from './change-found.ts'
import { BOOLEAN_PARAM, DATE_PARAM, ID_PARAM, oneOf, readListQuery, type ListQuery } from './input.ts'
import type { AdminSubscriptionFilter } from '../store/api.ts'

/** The filters of `GET /subscriptions` and of its export (C11, C18). */
export const SUBSCRIPTION_FILTERS = { state: oneOf(STATES), user_id: ID_PARAM, actionable_before: DATE_PARAM, paused: BOOLEAN_PARAM }

/** The store's filter for a query read with SUBSCRIPTION_FILTERS. */
export function subscriptionFilter(q: Omit<ListQuery<typeof SUBSCRIPTION_FILTERS>, 'limit'>, limit: number): AdminSubscriptionFilter {
  return { after: q.after, limit, state: q.state, userId: q.user_id, actionableBefore: q.actionable_before, paused: q.paused }
}

export const listSubscriptions = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readListQuery(ctx.query, SUBSCRIPTION_FILTERS)
  const subs = await app.store.subscriptions.adminList(subscriptionFilter(q, q.limit + 1))
  const shown = subs.slice(0, q.limit)
  const items = await app.store.subscriptions.lineItemsOfMany(shown.map((s) => s.id))
  return ok(cursorBody('subscriptions', subs, q.limit, (s) => renderSubscription(s, items.get(s.id) ?? [])))
}

/** The same body as the customer's GET (C3), from the same cache. */
export const showSubscription = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const found = await app.store.subscriptions.findJson(parseId(ctx.params['id']))
  if (!found) throw notFound()
  return okJson(found.body)
}

/**
 * The shop acts as C8 says, without the customer's skip limits or cancellation notice (C11): the
 * subscription is found and held (`lock`) inside the unit; any owner's, the shop owns them all.
 */
function transitionRoute(app: App, decide: (sub: Subscription, ctx: Ctx) => Transition | null): ApiHandler {
  return changeFound(app, (tx, id) => tx.subscriptions.lock(id, true), async (tx, sub, ctx) => okJson(await applyTransition(tx, sub, decide(sub, ctx))))
}
const dateParam = (ctx: Ctx): unknown => optionalRoot(ctx, 'subscription')['actionable_date']
const NO_LIMITS = { maxSuccessiveSkips: undefined, maxTotalSkips: undefined }

export const cancelSubscription = (app: App): ApiHandler => transitionRoute(app, (s) => cancel(s, app.clock.today(), 0))
export const skipSubscription = (app: App): ApiHandler => transitionRoute(app, (s) => skip(s, app.clock.today(), NO_LIMITS))
export const pauseSubscription = (app: App): ApiHandler => transitionRoute(app, (s, ctx) => pause(s, dateParam(ctx), app.clock.today()))
export const resumeSubscription = (app: App): ApiHandler => transitionRoute(app, (s, ctx) => resume(s, dateParam(ctx), app.clock.today()))
export const activateSubscription = (app: App): ApiHandler => transitionRoute(app, (s) => activate(s, app.clock.today()))

/** GET /events?after=&limit=&type=: the cursor feed for shops that poll (C10). */
export const eventFeed = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  // A type C10 does not list is a 422, as every admin filter's unknown value is (C13), not an empty page.
  const { after, limit, type } = readListQuery(ctx.query, { type: oneOf(EVENT_TYPES) })
  return ok(cursorBody('events', await app.store.events.feed(after, limit + 1, type), limit, (e) => e))
}
