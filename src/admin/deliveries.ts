import { HttpError, notFound } from '../http/http-error.ts'
import { attemptSigner, signingSecrets } from '../domain/webhook-signature.ts'
import { SHOWN_DELIVERY_STATES, type DeliveryState } from '../store/api.ts'
import type { App } from '../api/shared/app.ts'
import { authenticateAdmin } from '../api/shared/auth.ts'
import { ok, type ApiHandler } from '../api/shared/endpoint.ts'
import { cursorBody, parseId } from '../api/shared/params.ts'
import { oneOf, readListQuery } from './input.ts'
import { newTarget, post } from '../processing/webhooks/send.ts'

/** GET /webhook_endpoints/:id/deliveries?state=&after=&limit=: the delivery log, each with its attempts (C11). */
export const listDeliveries = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const endpoint = await app.store.webhooks.findEndpoint(parseId(ctx.params['id']))
  if (!endpoint) throw notFound()
  const q = readListQuery(ctx.query, { state: oneOf(SHOWN_DELIVERY_STATES) })
  const rows = await app.store.deliveries.list({ endpointId: endpoint.id, after: q.after, limit: q.limit + 1, state: q.state as DeliveryState | undefined })
  return ok(cursorBody('deliveries', rows, q.limit, (d) => d))
}

export const showDelivery = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const delivery = await app.store.deliveries.find(parseId(ctx.params['id']))
  if (!delivery) throw notFound()
  return ok(delivery)
}

/**
 * POST /deliveries/:id/redeliver: a new attempt now, whatever the delivery's state (C11); the
 * answer is the delivery with that attempt in its log. A 2xx makes it delivered; a failure leaves
 * its state and schedule as they were (a pending delivery keeps its retries).
 */
export const redeliver = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const id = parseId(ctx.params['id'])
  const delivery = await app.store.deliveries.find(id)
  if (!delivery) throw notFound()
  const [endpoint, secrets, body] = await Promise.all([
    app.store.webhooks.findEndpoint(delivery.webhook_endpoint_id),
    app.store.webhooks.secretsOf(delivery.webhook_endpoint_id),
    app.store.deliveries.bodyOf(id),
  ])
  if (!endpoint || !secrets) throw notFound()
  if (body === undefined) {
    throw new HttpError(422, { error: 'This delivery\'s event is no longer kept (REPLENISH_EVENT_RETENTION_DAYS), so it cannot be sent again.' })
  }
  const target = newTarget(endpoint.url, 1)
  try {
    const signed = attemptSigner(signingSecrets(secrets, Date.now()))(delivery.event_id, Math.floor(Date.now() / 1000), body)
    const sent = await post(target, body, signed, { redelivery: true })
    return await call.commit(async (tx) => ok(await tx.deliveries.recordRedelivery(id, sent.attempt, sent.succeeded, Date.now())))
  } finally {
    target.agent.destroy()
  }
}
