/** The admin API's webhook endpoints and their delivery log (C10, C11, C13; docs/webhooks.md). */
import { SHOWN_DELIVERY_STATES } from '../../store/api.ts'
import { A } from './admin-account-paths.ts'
import { body, operation, patchAndPut, type Entry } from './operation.ts'
import { enumFilter, listParameters } from './parameters.ts'
import { ref, rooted } from './schema-kit.ts'

const ENDPOINTS = 'Webhook endpoints'
const DELIVERIES = 'Deliveries'
const endpoint = (description: string) => ({ status: '200', description, schema: ref('WebhookEndpoint') }) as const
const delivery = (description: string) => ({ status: '200', description, schema: ref('Delivery') }) as const

export const adminWebhookPaths: readonly Entry[] = [
  operation('post', `${A}/webhook_endpoints`, {
    id: 'createWebhookEndpoint', tag: ENDPOINTS, summary: 'Register a webhook endpoint', auth: 'admin',
    body: body(rooted('webhook_endpoint', ref('WebhookEndpointInput'))),
    answers: [{ status: '201', description: 'The endpoint with its signing secret, shown in this answer only.', schema: ref('WebhookEndpointWithSecret') }],
  }),
  operation('get', `${A}/webhook_endpoints`, {
    id: 'listWebhookEndpoints', tag: ENDPOINTS, summary: 'List webhook endpoints', auth: 'read', strictQuery: true,
    parameters: listParameters(), answers: [{ status: '200', description: 'A page of endpoints (never their secrets).', schema: ref('WebhookEndpointList') }],
  }),
  operation('get', `${A}/webhook_endpoints/{id}`, { id: 'showWebhookEndpoint', tag: ENDPOINTS, summary: 'Show a webhook endpoint', auth: 'read', answers: [endpoint('The endpoint.')] }),
  ...patchAndPut(`${A}/webhook_endpoints/{id}`, {
    id: 'updateWebhookEndpoint', tag: ENDPOINTS, summary: 'Change a webhook endpoint', auth: 'admin',
    description: 'Only the fields given change. A disabled endpoint gets no new deliveries and sends none; enabled again, it sends what is pending.',
    body: body(rooted('webhook_endpoint', ref('WebhookEndpointPatch'))),
    answers: [endpoint('The endpoint after the change.')],
  }),
  operation('delete', `${A}/webhook_endpoints/{id}`, {
    id: 'deleteWebhookEndpoint', tag: ENDPOINTS, summary: 'Delete a webhook endpoint', auth: 'admin',
    answers: [endpoint('The endpoint as it was; nothing more is delivered to it.')],
  }),
  operation('post', `${A}/webhook_endpoints/{id}/rotate_secret`, {
    id: 'rotateWebhookSecret', tag: ENDPOINTS, summary: "Rotate an endpoint's signing secret", auth: 'admin',
    description: 'For 24 h deliveries carry two `v1=` signatures: the new secret first, then the old one.',
    answers: [{ status: '200', description: 'The endpoint with its new secret, shown in this answer only.', schema: ref('WebhookEndpointWithSecret') }],
  }),
  operation('post', `${A}/webhook_endpoints/{id}/test`, {
    id: 'sendTestWebhook', tag: ENDPOINTS, summary: 'Send a webhook.test event to this endpoint', auth: 'admin',
    description: 'A `webhook.test` event (`data.object`: `{webhook_endpoint_id}`) delivered to this endpoint alone, now; answers once that attempt is over (up to 10 s). A failure is retried like any delivery. 422 when the endpoint is disabled.',
    answers: [delivery('The delivery with its first attempt.')],
  }),
  operation('get', `${A}/deliveries`, {
    id: 'listAllDeliveries', tag: DELIVERIES, summary: 'Deliveries of every endpoint', auth: 'read', strictQuery: true,
    parameters: listParameters({ state: enumFilter(SHOWN_DELIVERY_STATES, 'Only this state.') }),
    answers: [{ status: '200', description: 'A page of deliveries of every endpoint that is not deleted, by id, each with its attempts.', schema: ref('DeliveryList') }],
  }),
  operation('get', `${A}/webhook_endpoints/{id}/deliveries`, {
    id: 'listDeliveries', tag: DELIVERIES, summary: "An endpoint's delivery log", auth: 'read', strictQuery: true,
    parameters: listParameters({ state: enumFilter(SHOWN_DELIVERY_STATES, 'Only this state.') }),
    answers: [{ status: '200', description: 'A page of deliveries, each with its attempts.', schema: ref('DeliveryList') }],
  }),
  operation('get', `${A}/deliveries/{id}`, { id: 'showDelivery', tag: DELIVERIES, summary: 'Show a delivery', auth: 'read', answers: [delivery('The delivery with its attempts.')] }),
  operation('post', `${A}/deliveries/{id}/redeliver`, {
    id: 'redeliver', tag: DELIVERIES, summary: 'Send a delivery again, now', auth: 'admin',
    description: 'A 2xx makes it delivered; a failure leaves its state and schedule as they were. 422 when its event is no longer kept (REPLENISH_EVENT_RETENTION_DAYS), or its endpoint is disabled.',
    answers: [delivery('The delivery with the new attempt in its log.')],
  }),
]
