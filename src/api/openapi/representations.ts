/**
 * components/schemas: what the service answers (C3, C11, C13), exact. The enums come from the
 * domain's own lists, so a state or event type added there is documented without a second edit.
 */
import { ACTOR_TYPES, ADDRESS_FIELDS, STATES } from '../../domain/types.ts'
import { INSTALLMENT_STATES } from '../../domain/installment.ts'
import { EVENT_TYPES } from '../../domain/events.ts'
import { OUTCOME_RESULTS } from '../../domain/outcome.ts'
import { ADMIN_SCOPES, SHOWN_DELIVERY_STATES } from '../../store/api.ts'
import { LANGUAGES } from '../../domain/messages.ts'
import { MAIL_KINDS, MAIL_STATES } from '../../domain/mail/kinds.ts'
import {
  count, cursorList, date, id, nullable, nullableDate, nullableId, nullableText, nullableTimestamp, object, oneOfValues, page, ref, text, timestamp,
  type Schema,
} from './schema-kit.ts'

const INTERVAL_UNITS = ['day', 'week', 'month', 'year'] as const

// C16: money is a string with exactly the currency's minor-unit digits, never a number.
const Money: Schema = {
  type: 'string',
  pattern: '^\\d+(\\.\\d+)?$',
  description: "An amount with exactly its currency's minor-unit digits (Intl.NumberFormat's): `\"12.50\"` USD, `\"1250\"` JPY, `\"1.250\"` BHD.",
  examples: ['12.50'],
}
const Percent: Schema = {
  type: 'string',
  pattern: '^(100|\\d{1,2}(\\.\\d{1,2})?)$',
  description: 'A discount percent, "0"…"100", at most 2 decimals, without trailing zeros.',
  examples: ['10', '12.5'],
}
const Prices: Schema = {
  type: 'object',
  propertyNames: { pattern: '^[A-Z]{3}$' },
  additionalProperties: ref('Money'),
  description: 'The unit price per currency (ISO 4217 code → amount), codes in alphabetical order; `{}` when the item has none.',
  examples: [{ EUR: '11.90', USD: '12.50' }],
}
const stamps = { created_at: timestamp, updated_at: timestamp }

const Address: Schema = {
  ...object(Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, nullableText]))),
  type: ['object', 'null'],
  description: 'A postal address, or null when none is set. `country_iso` is two upper-case letters.',
}

/** C16's money of a line, after its quantity: what the next delivery costs, as the catalog says now. */
const lineMoney = {
  price: { ...ref('NullableMoney'), description: "The catalog's unit price in the subscription's currency; null when the catalog has none." },
  discount_percent: { ...ref('Percent'), description: "The catalog item's subscribe-and-save discount." },
  total: { ...ref('NullableMoney'), description: 'quantity × price less the discount (rounded half-up on the line); null when price is.' },
}
/** C16's totals of a delivery, after its currency. */
const totals = (what: string) => ({
  subtotal: { ...ref('NullableMoney'), description: `Σ quantity × price of ${what}; null when any line has no price.` },
  discount_total: { ...ref('NullableMoney'), description: `Σ of the lines' discounts of ${what}; null when any line has no price.` },
  total: { ...ref('NullableMoney'), description: `subtotal − discount_total of ${what}; null when any line has no price.` },
})

const LineItem = object({
  id, subscription_id: id, subscribable_id: id, quantity: { type: 'integer', minimum: 1, maximum: 9999 },
  one_time: { type: 'boolean', description: 'C17: delivered with the next installment only; the processor then removes it (`line_item.deleted`). Set on add, never changed.' },
  ...lineMoney, ...stamps,
})

const Subscription = object({
  id,
  user_id: id,
  state: oneOfValues(STATES),
  paused: { type: 'boolean' },
  interval_length: { type: 'integer', minimum: 1 },
  interval_units: oneOfValues(INTERVAL_UNITS),
  actionable_date: { ...nullableDate, description: 'Null whenever the subscription will not act: canceled, inactive, or paused without a resume date.' },
  end_date: nullableDate,
  skip_count: count,
  successive_skip_count: count,
  payment_method_id: nullableId,
  payment_source_id: nullableId,
  currency: { type: 'string', pattern: '^[A-Z]{3}$' },
  ...totals('the next delivery, as the catalog prices it now'),
  processing_state: oneOfValues(['pending', 'success', 'failed']),
  shipping_address: ref('Address'),
  billing_address: ref('Address'),
  line_items: { type: 'array', items: ref('LineItem') },
  ...stamps,
})

const InstallmentUser = object({ id, email: { ...nullableText, description: "Null once the user is erased." }, external_id: nullableText })

const Installment = object({
  id,
  subscription_id: id,
  user: ref('InstallmentUser'),
  due_date: date,
  state: oneOfValues(INSTALLMENT_STATES),
  retry_at: nullableTimestamp,
  line_items: {
    type: 'array',
    description: 'What to deliver and charge, as it was when the installment was made (C16: later catalog changes never alter it).',
    items: object({ subscribable_id: id, sku: text, name: text, quantity: { type: 'integer', minimum: 1 }, ...lineMoney }),
  },
  shipping_address: ref('Address'),
  billing_address: ref('Address'),
  payment_method_id: nullableId,
  payment_source_id: nullableId,
  currency: text,
  ...totals('this delivery, frozen when it was made: the amount to charge'),
  attempts: {
    type: 'array',
    description: 'Every outcome reported, oldest first.',
    items: object({ result: oneOfValues(OUTCOME_RESULTS), order_reference: nullableText, message: nullableText, created_at: timestamp }),
  },
  ...stamps,
})

const Actor: Schema = {
  ...object({ type: oneOfValues(ACTOR_TYPES), id: nullableId }),
  type: ['object', 'null'],
  description:
    'Who made the change (C18): `customer` (id: the API key\'s), `staff` (id: the admin token\'s; null for REPLENISH_ADMIN_TOKEN), ' +
    '`portal` (id: the customer\'s user id), `processor` or `system` (imports, the command line; id null). Null on events written before it was recorded.',
}

const Event = object({
  id,
  type: oneOfValues(EVENT_TYPES),
  created_at: timestamp,
  subscription_id: nullableId,
  actor: Actor,
  request_id: { ...nullableText, description: 'The X-Request-Id of the request that made the change; null for the processor, the command line, and events written before it was recorded.' },
  data: object({
    object: {
      description: 'The representation after the change, as it was then: a subscription, a line item or an installment; for `webhook.test`, the endpoint tested.',
      anyOf: [ref('Subscription'), ref('LineItem'), ref('Installment'), object({ webhook_endpoint_id: id })],
    },
  }),
})

const User = object({
  id,
  email: { ...nullableText, description: 'Null once the user is erased.' },
  external_id: nullableText,
  locale: { ...oneOfValues(LANGUAGES), description: "The language of their mails (C17): their own, or REPLENISH_DEFAULT_LOCALE's while they have none." },
  email_notifications: { type: 'boolean', description: 'false: no mail at all (C17).' },
  ...stamps,
})

/** C17's mail log: never a body, never a link. */
const EmailAttempt = object({
  smtp_reply: { ...nullableText, description: "What the SMTP server last answered (`250 2.0.0 Ok: queued as …`, `451 4.7.1 …`); null when none answered." },
  error: { ...nullableText, description: 'Why it was not sent; null once sent.' },
  created_at: timestamp,
})
const Email = object({
  id,
  user_id: id,
  kind: oneOfValues(MAIL_KINDS),
  event_id: id,
  to: { ...nullableText, description: 'The address it went to; null once the customer is erased.' },
  subject: { ...nullableText, description: 'Known from the first attempt on (a mail is rendered when it is sent).' },
  state: oneOfValues(MAIL_STATES),
  attempts: { type: 'array', items: ref('EmailAttempt') },
  ...stamps,
})

const ApiKey = object(
  { id, user_id: id, prefix: { type: 'string', description: "The key's first 8 characters." }, revoked_at: nullableTimestamp, last_used_at: nullableTimestamp, ...stamps },
  ['last_used_at'],
)
const NewApiKey = object({ id, user_id: id, prefix: text, key: { type: 'string', description: 'The key itself: shown in this answer only.' }, ...stamps })

const PaymentMethod = object({ id, name: text, active: { type: 'boolean' }, ...stamps })
const PaymentSource = object({
  id, user_id: id, payment_method_id: id, kind: nullableText, brand: nullableText, last_digits: nullableText,
  month: nullable('integer'), year: nullable('integer'), gateway_reference: nullableText, ...stamps,
})
const Subscribable = object({
  id, sku: text, name: text, subscribable: { type: 'boolean' },
  prices: ref('Prices'),
  discount_percent: ref('Percent'),
  ...stamps,
})

const outcomeResult = (status: number, extra: Record<string, Schema>): Schema =>
  object({ installment_id: { type: ['integer', 'string', 'null'], description: 'As sent (null when nothing usable was sent).' }, status: { const: status }, ...extra })
const OutcomeResults = object({
  results: {
    type: 'array',
    description: 'One result per entry, in request order.',
    items: {
      oneOf: [
        outcomeResult(200, { installment: ref('Installment') }),
        outcomeResult(404, { errors: ref('Error') }),
        outcomeResult(422, { errors: { oneOf: [ref('FieldErrors'), ref('Error')] } }),
      ],
    },
  },
})

const endpointFields = {
  id,
  url: { type: 'string', format: 'uri' },
  events: { type: 'array', items: oneOfValues(['*', ...EVENT_TYPES]), minItems: 1 },
  description: nullableText,
  disabled: { type: 'boolean', description: 'No new deliveries and none sent while true (C18).' },
}
const WebhookEndpoint = object({ ...endpointFields, ...stamps })
const WebhookEndpointWithSecret = object({ ...endpointFields, secret: { type: 'string', pattern: '^whsec_', description: 'Shown in this answer only.' }, ...stamps })

const DeliveryAttempt = object({
  status_code: { ...nullable('integer'), description: "The receiver's status; null when none came (refused, timed out, reset)." },
  duration_ms: { type: 'number', minimum: 0 },
  error: { ...nullableText, description: 'Why it did not succeed; null for a 2xx.' },
  created_at: timestamp,
  response_body: { ...nullableText, description: 'At most 1 KiB of what the receiver answered.' },
  redelivery: { type: 'boolean', description: 'Asked for through POST /deliveries/{id}/redeliver.' },
})
const Delivery = object({
  id,
  event_id: id,
  webhook_endpoint_id: id,
  event_type: oneOfValues(EVENT_TYPES),
  state: oneOfValues(SHOWN_DELIVERY_STATES),
  attempt_count: count,
  next_attempt_at: nullableTimestamp,
  delivered_at: nullableTimestamp,
  attempts: { type: 'array', items: ref('DeliveryAttempt') },
  ...stamps,
})

const tokenFields = { id, label: nullableText, scope: oneOfValues(ADMIN_SCOPES), prefix: text }
const AdminToken = object({ ...tokenFields, ...stamps, last_used_at: nullableTimestamp })
const NewAdminToken = object({ ...tokenFields, token: { type: 'string', description: 'The token itself: shown in this answer only.' }, ...stamps, last_used_at: nullableTimestamp })

/** docs/import.md, "Answers": per kind, rows written and rows already stored as the file has them. */
const importCount = object({ inserted: count, present: count })
const ImportSummary = object({
  lines: { ...count, description: 'Lines that were not blank.' },
  ...Object.fromEntries(['users', 'api_keys', 'payment_methods', 'payment_sources', 'subscribables', 'subscriptions', 'line_items'].map((kind) => [kind, importCount])),
})
const ImportRefused = object({
  error: { type: 'string', description: 'The whole reason in one sentence, naming the line and the record.' },
  line: { type: 'integer', minimum: 1, description: 'Its line number; every line of the file counts, blank ones included.' },
  errors: ref('FieldErrors'),
})

export const representations: Record<string, Schema> = {
  Money,
  NullableMoney: { ...Money, type: ['string', 'null'] },
  Percent,
  Prices,
  Address,
  LineItem,
  Subscription,
  SubscriptionPage: page('subscriptions', ref('Subscription')),
  InstallmentUser,
  Installment,
  InstallmentPage: page('installments', ref('Installment')),
  Event,
  EventPage: page('events', ref('Event')),
  User,
  UserList: cursorList('users', ref('User')),
  EmailAttempt,
  Email,
  EmailList: cursorList('emails', ref('Email')),
  ApiKey,
  ApiKeyList: cursorList('api_keys', { allOf: [ref('ApiKey'), { type: 'object', required: ['last_used_at'] }] }),
  NewApiKey,
  PaymentMethod,
  PaymentMethodList: cursorList('payment_methods', ref('PaymentMethod')),
  PaymentSource,
  PaymentSourceList: cursorList('payment_sources', ref('PaymentSource')),
  Subscribable,
  SubscribableList: cursorList('subscribables', ref('Subscribable')),
  SubscriptionList: cursorList('subscriptions', ref('Subscription')),
  InstallmentList: cursorList('installments', ref('Installment')),
  OutcomeResults,
  EventList: cursorList('events', ref('Event')),
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookEndpointList: cursorList('webhook_endpoints', ref('WebhookEndpoint')),
  DeliveryAttempt,
  Delivery,
  DeliveryList: cursorList('deliveries', ref('Delivery')),
  AdminToken,
  NewAdminToken,
  AdminTokenList: cursorList('admin_tokens', ref('AdminToken')),
  ImportSummary,
  ImportRefused,
  Health: object({ status: { const: 'ok' } }),
  Ready: object({
    status: { const: 'ready' },
    oldest_overdue_actionable_date: nullable('string', { format: 'date', description: 'The oldest actionable date that is due and not yet processed (C9), as /metrics has it; null when nothing is overdue.' }),
  }),
  NotReady: object({ status: { const: 'not ready' }, reason: { type: 'string', description: 'What fails: writes, the database, a stalled processor.' } }),
}
