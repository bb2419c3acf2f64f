/**
 * GET /api/v1/openapi.json (C5): an OpenAPI 3.1 description of the customer API, served
 * without authentication so client generators and API explorers can read it.
 */
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const json = (schema: object) => ({ 'application/json': { schema } })
const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'integer', minimum: 1 } }
const pageParams = [
  { name: 'page', in: 'query', schema: { type: 'integer', minimum: 1, default: 1 } },
  { name: 'per_page', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
]
const idempotencyKey = { name: 'Idempotency-Key', in: 'header', schema: { type: 'string', maxLength: 255 } }
const errors = {
  '401': { description: 'Missing or invalid API key, or the record belongs to another user', content: json(ref('Error')) },
  '404': { description: 'No such record (or an id that is not a positive integer)', content: json(ref('Error')) },
  '422': { description: 'Validation failed: `{field: [message, …]}`', content: json(ref('ValidationErrors')) },
}
const subscriptionReply = { '200': { description: 'The subscription', content: json(ref('Subscription')) }, ...errors }
const lineItemReply = { '200': { description: 'The line item', content: json(ref('LineItem')) }, ...errors }
const optionalDateBody = {
  required: false,
  content: json({ type: 'object', properties: { subscription: { type: 'object', properties: { actionable_date: { type: 'string', format: 'date' } } } } }),
}
const action = (summary: string, body?: object) => ({
  post: {
    summary,
    parameters: [idParam, idempotencyKey],
    ...(body ? { requestBody: body } : {}),
    responses: subscriptionReply,
  },
})
const page = (key: string, item: object) => ({
  type: 'object',
  required: [key, 'count', 'current_page', 'pages', 'per_page', 'total_count'],
  properties: {
    [key]: { type: 'array', items: item },
    count: { type: 'integer' },
    current_page: { type: 'integer' },
    pages: { type: 'integer' },
    per_page: { type: 'integer' },
    total_count: { type: 'integer' },
  },
})
const nullable = (type: string, extra: object = {}) => ({ type: [type, 'null'], ...extra })
const address = {
  type: ['object', 'null'],
  properties: Object.fromEntries(
    ['firstname', 'lastname', 'company', 'address1', 'address2', 'city', 'zipcode', 'state_name', 'country_iso', 'phone'].map((f) => [f, nullable('string')]),
  ),
}
const lineItemInput = {
  type: 'object',
  properties: {
    id: { type: 'integer' },
    subscribable_id: { type: 'integer' },
    quantity: { type: 'integer', minimum: 1, maximum: 9999 },
    _destroy: { type: ['boolean', 'string'] },
  },
}
const subscriptionInput = {
  type: 'object',
  properties: {
    interval_length: { type: 'integer', minimum: 1, description: 'at most 3650 days, 520 weeks, 120 months, 10 years' },
    interval_units: { type: 'string', enum: ['day', 'week', 'month', 'year'], default: 'month' },
    actionable_date: { type: 'string', format: 'date', description: 'today or later; default today + one interval' },
    end_date: nullable('string', { format: 'date' }),
    currency: { type: 'string', description: 'ISO 4217 code; create only' },
    payment_method_id: nullable('integer'),
    payment_source_id: nullable('integer'),
    shipping_address_attributes: address,
    billing_address_attributes: address,
    line_items_attributes: { oneOf: [{ type: 'array', items: lineItemInput }, { type: 'object', additionalProperties: lineItemInput }] },
  },
}

export const openApiDocument: Record<string, unknown> = {
  openapi: '3.1.0',
  info: {
    title: 'replenish customer API',
    version: '1',
    description:
      'Recurring-delivery subscriptions, compatible with solidus_subscriptions /api/v1. Bodies are JSON or ' +
      'Rails-style form encoding; JSON bodies without the root key are wrapped. Every write accepts an Idempotency-Key.',
  },
  servers: [{ url: '/' }],
  security: [{ bearer: [] }],
  paths: {
    '/api/v1/subscriptions': {
      get: {
        summary: 'List your subscriptions',
        parameters: [...pageParams, { name: 'state', in: 'query', schema: { type: 'string', enum: ['active', 'pending_cancellation', 'canceled', 'inactive'] } }],
        responses: { '200': { description: 'A page of subscriptions', content: json(page('subscriptions', ref('Subscription'))) }, '401': errors['401'] },
      },
      post: {
        summary: 'Create a subscription',
        parameters: [idempotencyKey],
        requestBody: { required: true, content: json({ type: 'object', properties: { subscription: { ...subscriptionInput, required: ['interval_length'] } } }) },
        responses: { '200': subscriptionReply['200'], '401': errors['401'], '422': errors['422'] },
      },
    },
    '/api/v1/subscriptions/{id}': {
      get: { summary: 'Show a subscription', parameters: [idParam], responses: subscriptionReply },
      patch: {
        summary: 'Update a subscription (PUT works too)',
        parameters: [idParam, idempotencyKey],
        requestBody: { required: true, content: json({ type: 'object', properties: { subscription: subscriptionInput } }) },
        responses: subscriptionReply,
      },
    },
    '/api/v1/subscriptions/{id}/skip': action('Skip the next occurrence'),
    '/api/v1/subscriptions/{id}/cancel': action('Cancel (with a notice period it may become pending_cancellation)'),
    '/api/v1/subscriptions/{id}/pause': action('Pause, optionally until a date', optionalDateBody),
    '/api/v1/subscriptions/{id}/resume': action('Resume, on a date or tomorrow', optionalDateBody),
    '/api/v1/subscriptions/{id}/activate': action('Reactivate a canceled or inactive subscription'),
    '/api/v1/subscriptions/{id}/events': {
      get: {
        summary: 'History of a subscription, newest first',
        parameters: [idParam, ...pageParams],
        responses: { '200': { description: 'A page of events', content: json(page('events', ref('Event'))) }, ...errors },
      },
    },
    '/api/v1/subscriptions/{id}/installments': {
      get: {
        summary: 'Deliveries made so far',
        parameters: [idParam, ...pageParams],
        responses: { '200': { description: 'A page of installments', content: json(page('installments', ref('Installment'))) }, ...errors },
      },
    },
    '/api/v1/subscriptions/{id}/line_items': {
      post: {
        summary: 'Add a line item',
        parameters: [idParam, idempotencyKey],
        requestBody: {
          required: true,
          content: json({ type: 'object', properties: { subscription_line_item: { type: 'object', required: ['subscribable_id', 'quantity'], properties: lineItemInput.properties } } }),
        },
        responses: lineItemReply,
      },
    },
    '/api/v1/line_items/{id}': {
      get: { summary: 'Show a line item', parameters: [idParam], responses: lineItemReply },
      patch: {
        summary: 'Change the quantity or swap the item (PUT works too)',
        parameters: [idParam, idempotencyKey],
        requestBody: { required: true, content: json({ type: 'object', properties: { subscription_line_item: lineItemInput } }) },
        responses: lineItemReply,
      },
      delete: { summary: 'Remove a line item; answers the removed item', parameters: [idParam, idempotencyKey], responses: lineItemReply },
    },
  },
  components: {
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'The API key of the calling user' } },
    schemas: {
      Error: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } },
      ValidationErrors: { type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } } },
      Address: address,
      LineItem: {
        type: 'object',
        properties: {
          id: { type: 'integer' }, subscription_id: { type: 'integer' }, subscribable_id: { type: 'integer' }, quantity: { type: 'integer' },
          created_at: { type: 'string', format: 'date-time' }, updated_at: { type: 'string', format: 'date-time' },
        },
      },
      Subscription: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          user_id: { type: 'integer' },
          state: { type: 'string', enum: ['active', 'pending_cancellation', 'canceled', 'inactive'] },
          paused: { type: 'boolean' },
          interval_length: { type: 'integer' },
          interval_units: { type: 'string', enum: ['day', 'week', 'month', 'year'] },
          actionable_date: nullable('string', { format: 'date' }),
          end_date: nullable('string', { format: 'date' }),
          skip_count: { type: 'integer' },
          successive_skip_count: { type: 'integer' },
          payment_method_id: nullable('integer'),
          payment_source_id: nullable('integer'),
          currency: { type: 'string' },
          processing_state: { type: 'string', enum: ['pending', 'success', 'failed'] },
          shipping_address: address,
          billing_address: address,
          line_items: { type: 'array', items: ref('LineItem') },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
      Event: {
        type: 'object',
        properties: {
          id: { type: 'integer' }, type: { type: 'string' }, created_at: { type: 'string', format: 'date-time' },
          subscription_id: nullable('integer'), data: { type: 'object', properties: { object: { type: 'object' } } },
        },
      },
      Installment: {
        type: 'object',
        properties: {
          id: { type: 'integer' },
          subscription_id: { type: 'integer' },
          // The subscription's owner (C13); an erased user's email is null.
          user: { type: 'object', properties: { id: { type: 'integer' }, email: nullable('string'), external_id: nullable('string') } },
          due_date: { type: 'string', format: 'date' },
          state: { type: 'string', enum: ['pending', 'retrying', 'fulfilled', 'abandoned'] },
          retry_at: nullable('string', { format: 'date-time' }),
          line_items: {
            type: 'array',
            items: { type: 'object', properties: { subscribable_id: { type: 'integer' }, sku: { type: 'string' }, name: { type: 'string' }, quantity: { type: 'integer' } } },
          },
          shipping_address: address,
          billing_address: address,
          payment_method_id: nullable('integer'),
          payment_source_id: nullable('integer'),
          currency: { type: 'string' },
          attempts: {
            type: 'array',
            items: { type: 'object', properties: { result: { type: 'string' }, order_reference: nullable('string'), message: nullable('string'), created_at: { type: 'string', format: 'date-time' } } },
          },
          created_at: { type: 'string', format: 'date-time' },
          updated_at: { type: 'string', format: 'date-time' },
        },
      },
    },
  },
}
