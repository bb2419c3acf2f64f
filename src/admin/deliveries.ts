import { HttpError, notFound } from '../http/http-error.ts'
import type { Ctx, Reply } from '../http/types.ts'
import { attemptSigner, signingSecrets } from '../domain/webhook-signature.ts'
import { SHOWN_DELIVERY_STATES, type DeliveryState, type WebhookEndpoint, type WebhookSecrets } from '../store/api.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId } from '../api/kit/params.ts'
import { oneOf, readListQuery } from './input.ts'
import { newTarget, post, type Sent } from '../processing/webhooks/send.ts'

/** A page of deliveries, each with its attempts: `?state=&after=&limit=`, strict (C13). */
async function deliveryPage(app: App, ctx: Ctx, endpointId: number | undefined): Promise<Reply> {
  const q = readListQuery(ctx.query, { state: oneOf(SHOWN_DELIVERY_STATES) })
  const rows = await app.store.deliveries.list({ endpointId, after: q.after, limit: q.limit + 1, state: q.state as DeliveryState | undefined })
  return ok(cursorBody('deliveries', rows, q.limit, (d) => d))
}

/** GET /webhook_endpoints/:id/deliveries: one endpoint's delivery log (C11). */
export const listDeliveries = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const endpoint = await app.store.webhooks.findEndpoint(parseId(ctx.params['id']))
  if (!endpoint) throw notFound()
  return deliveryPage(app, ctx, endpoint.id)
}

/** GET /deliveries: the deliveries of every endpoint (not deleted ones'), by id (C18). */
export const listAllDeliveries = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  return deliveryPage(app, ctx, undefined)
}

/** C18: a disabled endpoint sends nothing, asked for or scheduled. */
export function refuseDisabled(endpoint: WebhookEndpoint): void {
  if (endpoint.disabled) throw new HttpError(422, { error: 'This webhook endpoint is disabled; enable it (disabled: false) to send to it.' })
}

/** One attempt now, outside the dispatcher, over a connection of its own (redeliver, test). */
export async function sendNow(endpoint: WebhookEndpoint, secrets: WebhookSecrets, eventId: number, body: string, redelivery: boolean): Promise<Sent> {
  const target = newTarget(endpoint.url, 1)
  try {
    return await post(target, body, attemptSigner(signingSecrets(secrets, Date.now()))(eventId, Math.floor(Date.now() / 1000), body), { redelivery })
  } finally {
    target.agent.destroy()
  }
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
 * its state and schedule as they were (a pending delivery keeps its retries). A dry run (C18)
 * sends nothing: past the checks, it answers the delivery as it stands (docs/decisions.md).
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
  refuseDisabled(endpoint)
  if (body === undefined) {
    throw new HttpError(422, { error: 'This delivery\'s event is no longer kept (REPLENISH_EVENT_RETENTION_DAYS), so it cannot be sent again.' })
  }
  if (call.dryRun) return ok(delivery)
  const sent = await sendNow(endpoint, secrets, delivery.event_id, body, true)
  return call.commit(async (tx) => ok(await tx.deliveries.recordRedelivery(id, sent.attempt, sent.succeeded, Date.now())))
}
