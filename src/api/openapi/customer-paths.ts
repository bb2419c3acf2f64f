/** The customer API (C5), as src/api/v1/routes.ts routes it. */
import { STATES } from '../../domain/types.ts'
import { body, operation, patchAndPut, type Entry, type OperationSpec } from './operation.ts'
import { pageParameters } from './parameters.ts'
import { ref, rooted } from './schema-kit.ts'

const V1 = '/api/v1'
const SUBSCRIPTIONS = 'Subscriptions'
const LINE_ITEMS = 'Line items'

const subscription = { status: '200', description: 'The whole subscription (C3), line items included.', schema: ref('Subscription') } as const
const lineItem = (description: string) => ({ status: '200', description, schema: ref('LineItem') }) as const
const dateBody = body(rooted('subscription', ref('DateInput'), false), { required: false, description: 'Optional: `subscription[actionable_date]`.' })

const lifecycle = (name: string, summary: string, extra: Partial<OperationSpec> = {}): Entry =>
  operation('post', `${V1}/subscriptions/{id}/${name}`, {
    id: `${name}Subscription`, tag: SUBSCRIPTIONS, summary, auth: 'customer', answers: [subscription], ...extra,
  })

export const customerPaths: readonly Entry[] = [
  operation('post', `${V1}/subscriptions`, {
    id: 'createSubscription', tag: SUBSCRIPTIONS, summary: 'Create a subscription', auth: 'customer',
    description: 'The owner is the caller. Payment ids come together or not at all; any payment problem is the single key `payment_source_type` (C6).',
    body: body(rooted('subscription', ref('SubscriptionCreate'))),
    answers: [{ ...subscription, description: 'The new subscription (200, as solidus_subscriptions answers).' }],
  }),
  operation('get', `${V1}/subscriptions`, {
    id: 'listSubscriptions', tag: SUBSCRIPTIONS, summary: 'List your subscriptions', auth: 'customer',
    parameters: [...pageParameters, { name: 'state', in: 'query', description: 'Only this state; an unknown one lists nothing.', schema: { type: 'string', enum: [...STATES] } }],
    answers: [{ status: '200', description: 'A page of subscriptions, oldest first.', schema: ref('SubscriptionPage') }],
  }),
  operation('get', `${V1}/subscriptions/{id}`, { id: 'showSubscription', tag: SUBSCRIPTIONS, summary: 'Show a subscription', auth: 'customer', answers: [subscription] }),
  ...patchAndPut(`${V1}/subscriptions/{id}`, {
    id: 'updateSubscription', tag: SUBSCRIPTIONS, summary: 'Update a subscription', auth: 'customer',
    description: 'Changing the interval moves `actionable_date` unless the same request sets it (C7). A 422 changes nothing.',
    body: body(rooted('subscription', ref('SubscriptionUpdate'))),
    answers: [subscription],
  }),
  lifecycle('skip', 'Skip the next occurrence', { description: 'Refused (422) while paused, canceled or inactive, or past a configured skip limit (C8).' }),
  lifecycle('cancel', 'Cancel', { description: 'With a notice period the result may be `pending_cancellation` (C8). Canceling again is a no-op 200.' }),
  lifecycle('pause', 'Pause, until a date or indefinitely', { body: dateBody }),
  lifecycle('resume', 'Resume, on a date or tomorrow', { body: dateBody }),
  lifecycle('activate', 'Reactivate a canceled or inactive subscription'),
  operation('get', `${V1}/subscriptions/{id}/events`, {
    id: 'listSubscriptionEvents', tag: SUBSCRIPTIONS, summary: 'History of a subscription, newest first', auth: 'customer',
    parameters: pageParameters, answers: [{ status: '200', description: 'A page of events (C10).', schema: ref('EventPage') }],
  }),
  operation('get', `${V1}/subscriptions/{id}/installments`, {
    id: 'listSubscriptionInstallments', tag: SUBSCRIPTIONS, summary: 'Deliveries made so far, newest due date first', auth: 'customer',
    parameters: pageParameters, answers: [{ status: '200', description: 'A page of installments (C9).', schema: ref('InstallmentPage') }],
  }),
  operation('post', `${V1}/subscriptions/{id}/line_items`, {
    id: 'addLineItem', tag: LINE_ITEMS, summary: 'Add a line item', auth: 'customer',
    body: body(rooted('subscription_line_item', ref('LineItemCreate'))),
    answers: [lineItem('The new line item (200).')],
  }),
  operation('get', `${V1}/line_items/{id}`, { id: 'showLineItem', tag: LINE_ITEMS, summary: 'Show a line item', auth: 'customer', answers: [lineItem('The line item.')] }),
  ...patchAndPut(`${V1}/line_items/{id}`, {
    id: 'updateLineItem', tag: LINE_ITEMS, summary: 'Change the quantity or swap the item', auth: 'customer',
    body: body(rooted('subscription_line_item', ref('LineItemUpdate'))),
    answers: [lineItem('The line item after the change.')],
  }),
  operation('delete', `${V1}/line_items/{id}`, { id: 'deleteLineItem', tag: LINE_ITEMS, summary: 'Remove a line item', auth: 'customer', answers: [lineItem('The removed line item.')] }),
  operation('get', `${V1}/openapi.json`, {
    id: 'getOpenApiDocument', tag: 'Meta', summary: 'This document', auth: 'none',
    description: 'OpenAPI 3.1, served without credentials so client generators and API explorers can read it.',
    answers: [{ status: '200', description: 'The OpenAPI document of every route.', schema: {
        type: 'object',
        required: ['openapi', 'info', 'paths', 'components'],
        properties: { openapi: { const: '3.1.0' }, info: { type: 'object' }, paths: { type: 'object' }, components: { type: 'object' } },
      },
    }],
  }),
]
