import { notFound } from '../http/http-error.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId } from '../api/kit/params.ts'
import { readListQuery } from './input.ts'

/**
 * GET /admin/api/v1/subscriptions/:id/events?after=&limit=: one subscription's history (C10) for
 * the dashboard's timeline, newest first as the customer's GET /subscriptions/:id/events is.
 * Keyset pages like every admin list: `after` is the last id of the page before and the next page
 * holds the events older than it, so events written meanwhile never shift a page.
 */
export const listSubscriptionEvents = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const sub = await app.store.subscriptions.find(parseId(ctx.params['id']))
  if (!sub) throw notFound()
  const { after, limit } = readListQuery(ctx.query, {})
  return ok(cursorBody('events', await app.store.overview.eventsOfSubscription(sub.id, after, limit + 1), limit, (e) => e))
}
