import { randomBytes } from 'node:crypto'
import { notFound } from '../http/http-error.ts'
import { FieldErrors } from '../domain/field-errors.ts'
import { ALL_EVENTS, isEventType, TEST_EVENT } from '../domain/events.ts'
import { afterFailure, DELIVERY_TIMEOUT_MS } from '../domain/webhook-schedule.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId, rootObject } from '../api/kit/params.ts'
import type { DeliveryOutcome, NewWebhookEndpoint, Tx, WebhookEndpoint, WebhookEndpointPatch } from '../store/api.ts'
import type { Ctx, Reply } from '../http/types.ts'
import { changeFound } from './change-found.ts'
import { refuseDisabled, sendNow } from './deliveries.ts'
import { check, optionalBoolean, optionalString, readListQuery, requiredString } from './input.ts'

/** Long enough for any real receiver's address; the rest of the row is bounded by the body limit. */
const MAX_URL_LENGTH = 2048

/** C13: after a rotation the old secret still signs for 24 h, so a shop can roll without downtime. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 60 * 60 * 1000

/**
 * A new signing secret: `whsec_` and 256 random bits in base64, the Standard Webhooks format, so
 * its libraries read it as it is (secrets made before issue 29 are base64url: docs/decisions.md).
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`
}

/** The C11 body; `secret` only in the answers of create and rotate_secret. */
const render = (e: WebhookEndpoint, secret?: string): Record<string, unknown> => ({
  id: e.id,
  url: e.url,
  events: e.events,
  description: e.description,
  disabled: e.disabled,
  ...(secret !== undefined ? { secret } : {}),
  created_at: e.created_at,
  updated_at: e.updated_at,
})

/**
 * An absolute http(s) address. Plain http and loopback are allowed (C10: self-hosters on a LAN);
 * `http:host` without the slashes is refused even though WHATWG URL parsing would accept it. The
 * parser refuses an http(s) URL without a host (`http://`).
 */
function readUrl(attrs: Record<string, unknown>, errors: FieldErrors): string | undefined {
  const url = requiredString(attrs, 'url', errors, MAX_URL_LENGTH)
  if (url === undefined) return undefined
  if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return errors.add('url', 'invalid')
  return url
}

/**
 * A list of C10 event types, or `*` for all (then stored as `["*"]` alone). Empty strings are
 * dropped first: an HTML form's check boxes send a hidden `events[]=` (Rails does the same).
 * Duplicates are kept once, in the order given.
 */
function readEvents(attrs: Record<string, unknown>, errors: FieldErrors): string[] | undefined {
  const raw = attrs['events']
  if (raw === undefined || raw === null || raw === '') return errors.add('events', 'blank')
  if (!Array.isArray(raw)) return errors.add('events', 'invalid')
  const given = raw.filter((t) => t !== '')
  if (given.length === 0) return errors.add('events', 'blank')
  if (!given.every((t) => t === ALL_EVENTS || isEventType(t))) return errors.add('events', 'inclusion')
  return given.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(given as string[])]
}

function readEndpoint(attrs: Record<string, unknown>): Omit<NewWebhookEndpoint, 'secret'> {
  const errors = new FieldErrors()
  // One field after the other: the 422 body lists the fields in this order.
  const url = readUrl(attrs, errors)
  const events = readEvents(attrs, errors)
  const description = optionalString(attrs, 'description', errors)
  check(errors)
  return { url: url as string, events: events as string[], description }
}

/** C18's PATCH: only the fields given change, each read as create reads it. */
function readEndpointPatch(attrs: Record<string, unknown>, endpoint: WebhookEndpoint): WebhookEndpointPatch {
  const errors = new FieldErrors()
  const given = (field: string): boolean => Object.hasOwn(attrs, field)
  const patch = {
    ...(given('url') ? { url: readUrl(attrs, errors) as string } : {}),
    ...(given('events') ? { events: readEvents(attrs, errors) as string[] } : {}),
    ...(given('description') ? { description: optionalString(attrs, 'description', errors) } : {}),
    ...(given('disabled') ? { disabled: optionalBoolean(attrs, 'disabled', endpoint.disabled, errors) } : {}),
  }
  check(errors)
  return patch
}

export const createWebhookEndpoint = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const fields = readEndpoint(rootObject(ctx, 'webhook_endpoint'))
  const secret = newWebhookSecret()
  return changed(app, await call.commit(async (tx) => ok(render(await tx.webhooks.createEndpoint({ ...fields, secret }), secret), 201)))
}

/**
 * The reply, once the change it reports has committed and the dispatcher has read it: answering
 * before its read let the dispatcher post an event made right after a new url to the old one
 * (seen in CI on PostgreSQL).
 */
async function changed<T>(app: App, reply: T): Promise<T> {
  await Promise.all([...app.endpointsChanged].map((listener) => listener()))
  return reply
}

/** `changeFound`, telling the dispatcher after the change commits. */
const changeEndpoint = (app: App, act: (tx: Tx, endpoint: WebhookEndpoint, ctx: Ctx) => Promise<Reply>): ApiHandler => {
  const handler = changeFound(app, (tx, id) => tx.webhooks.findEndpoint(id), act)
  return async (ctx, call) => changed(app, await handler(ctx, call))
}

export const listWebhookEndpoints = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const { after, limit } = readListQuery(ctx.query, {})
  return ok(cursorBody('webhook_endpoints', await app.store.webhooks.listEndpoints(after, limit + 1), limit, (e) => render(e)))
}

export const showWebhookEndpoint = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const endpoint = await app.store.webhooks.findEndpoint(parseId(ctx.params['id']))
  if (!endpoint) throw notFound()
  return ok(render(endpoint))
}

/** The endpoint as it was; from now on it is gone (404) and nothing more is delivered to it. */
export const deleteWebhookEndpoint = (app: App): ApiHandler =>
  changeEndpoint(app, async (tx, endpoint) => {
    await tx.webhooks.deleteEndpoint(endpoint.id)
    return ok(render(endpoint))
  })

/**
 * PATCH /webhook_endpoints/:id (C18): url, events, description, disabled. A disabled endpoint gets
 * no new deliveries and sends none; enabled again, it sends what waited. The dispatcher is told
 * at once (a new url: new connections).
 */
export const updateWebhookEndpoint = (app: App): ApiHandler =>
  changeEndpoint(app, async (tx, endpoint, ctx) => {
    const patch = readEndpointPatch(rootObject(ctx, 'webhook_endpoint'), endpoint)
    return ok(render(await tx.webhooks.updateEndpoint(endpoint.id, patch)))
  })

/** How long a test delivery is held back from the dispatcher while this request posts it. */
const TEST_HOLD_MS = DELIVERY_TIMEOUT_MS + 20_000

/**
 * POST /webhook_endpoints/:id/test (C18): a `webhook.test` event (`data.object` names the
 * endpoint) and its delivery to this endpoint alone, posted now; 200 with the delivery once that
 * attempt is over (up to 10 s). The delivery is like any other from then on: a failure is retried
 * on the schedule, and it is in the delivery log. Until the attempt's result is written it is due
 * only later, so no dispatcher posts it meanwhile; should this process die first, one does then.
 */
export const sendTestEvent = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const id = parseId(ctx.params['id'])
  const [endpoint, secrets] = await Promise.all([app.store.webhooks.findEndpoint(id), app.store.webhooks.secretsOf(id)])
  if (!endpoint || !secrets) throw notFound()
  refuseDisabled(endpoint)
  const madeMs = Date.now()
  // A dry run (C18) answers the delivery as it would be made, posts nothing and keeps nothing.
  if (call.dryRun) {
    return call.commit(async (tx) => {
      const eventId = await tx.events.record(TEST_EVENT, null, { webhook_endpoint_id: endpoint.id })
      return ok(await tx.deliveries.find(await tx.deliveries.add(endpoint.id, eventId, TEST_EVENT, madeMs, madeMs + TEST_HOLD_MS)))
    })
  }
  const made = await call.write(async (tx) => {
    const eventId = await tx.events.record(TEST_EVENT, null, { webhook_endpoint_id: endpoint.id })
    const deliveryId = await tx.deliveries.add(endpoint.id, eventId, TEST_EVENT, madeMs, madeMs + TEST_HOLD_MS)
    return { eventId, deliveryId, body: (await tx.deliveries.bodyOf(deliveryId)) as string }
  })
  const sent = await sendNow(endpoint, secrets, made.eventId, made.body, false)
  const atMs = Date.now()
  const next = sent.succeeded
    ? { state: 'delivered', due_ms: null, retries: 0 } as const
    : scheduledAfter(afterFailure({ createdMs: madeMs, failures: 1, nowMs: atMs, baseSeconds: app.config.webhookRetryBaseSeconds, random: Math.random() }))
  return call.commit(async (tx) => {
    await tx.deliveries.recordOutcomes([{ id: made.deliveryId, endpoint_id: endpoint.id, attempt: sent.attempt, at_ms: atMs, ...next }])
    return ok(await tx.deliveries.find(made.deliveryId))
  })
}

const scheduledAfter = (next: ReturnType<typeof afterFailure>): Pick<DeliveryOutcome, 'state' | 'due_ms' | 'retries'> =>
  next.state === 'failed' ? { state: 'failed', due_ms: null, retries: 1 } : { state: 'pending', due_ms: next.dueMs, retries: 1 }

/** A new secret, shown in this answer only; the old one keeps signing for 24 h (C13). */
export const rotateWebhookSecret = (app: App): ApiHandler =>
  changeEndpoint(app, async (tx, endpoint) => {
    const secret = newWebhookSecret()
    return ok(render(await tx.webhooks.rotateSecret(endpoint.id, secret, PREVIOUS_SECRET_VALID_MS), secret))
  })
