/**
 * components/schemas: what clients send (C4, C6, C7, C11, C13). Unknown fields are ignored and
 * fields that are not inputs never applied (C1), so these are open objects; integers may come as
 * integer strings (form bodies carry nothing else).
 */
import { ADDRESS_FIELDS } from '../../domain/types.ts'
import { EVENT_TYPES } from '../../domain/events.ts'
import { OUTCOME_RESULTS } from '../../domain/outcome.ts'
import { ADMIN_SCOPES } from '../../store/api.ts'
import { LANGUAGES } from '../../domain/messages.ts'
import { input, nullable, oneOfValues, ref, type Schema } from './schema-kit.ts'

const integer = (extra: Schema = {}): Schema => ({ type: ['integer', 'string'], pattern: '^-?\\d+$', ...extra })
/** An integer, an integer string, or null (clears the value). */
const nullableInteger: Schema = { type: ['integer', 'string', 'null'], pattern: '^-?\\d+$' }
const flag: Schema = { type: ['boolean', 'string'], description: '`true`/`false`, or `"1"`/`"0"` from a form.' }

const webhookEndpointFields = {
  url: { type: 'string', format: 'uri', maxLength: 2048, description: 'http or https; loopback and LAN addresses are allowed.' },
  events: { type: 'array', minItems: 1, items: oneOfValues(['*', ...EVENT_TYPES]), description: 'Event types, or `["*"]` for all.' },
  description: nullable('string', { maxLength: 255 }),
}

const AddressInput: Schema = {
  ...input(Object.fromEntries(ADDRESS_FIELDS.map((field) => [field, nullable('string', { maxLength: 255 })])), ['firstname', 'address1', 'city', 'zipcode', 'country_iso']),
  type: ['object', 'null'],
  description: 'On update the given fields are merged over the stored address; null removes it. `country_iso`: two letters.',
}

/** C17: set only when the item is added; ignored on an existing item. */
const oneTime: Schema = { ...flag, description: 'Added items only (ignored on an existing one): delivered with the next installment, then removed (C17). Default false.' }

const LineItemInput = input({
  id: { ...integer(), description: 'Update only: the line item to change or remove (another subscription\'s → 404).' },
  subscribable_id: integer(),
  quantity: integer({ description: '1…9999. On create, entries without a quantity are ignored.' }),
  _destroy: { ...flag, description: 'Update only: `true` or `"1"` removes the item named by `id`.' },
  one_time: oneTime,
})

const subscriptionFields = {
  interval_length: integer({ description: '> 0; at most 3650 days, 520 weeks, 120 months, 10 years.' }),
  interval_units: oneOfValues(['day', 'week', 'month', 'year']),
  actionable_date: { type: 'string', format: 'date', description: 'Today or later (customer); default today + one interval.' },
  end_date: nullable('string', { format: 'date', description: 'After today.' }),
  currency: { type: 'string', description: 'ISO 4217 code (create only); default REPLENISH_CURRENCY.' },
  payment_method_id: nullableInteger,
  payment_source_id: nullableInteger,
  shipping_address_attributes: ref('AddressInput'),
  billing_address_attributes: ref('AddressInput'),
  line_items_attributes: {
    description: 'A list, or a Rails-style object of objects (`{"0": {…}, "1": {…}}`).',
    oneOf: [{ type: 'array', items: ref('LineItemInput') }, { type: 'object', additionalProperties: ref('LineItemInput') }],
  },
}

const adminSubscriptionFields = {
  ...subscriptionFields,
  actionable_date: { type: 'string', format: 'date', description: 'Any date, past ones included (the shop may set what the customer may not).' },
  skip_count: integer({ minimum: 0 }),
  successive_skip_count: integer({ minimum: 0 }),
}

export const inputs: Record<string, Schema> = {
  AddressInput,
  LineItemInput,
  SubscriptionCreate: input(subscriptionFields, ['interval_length']),
  SubscriptionUpdate: input(subscriptionFields),
  LineItemCreate: input({ subscribable_id: integer(), quantity: integer(), one_time: oneTime }, ['subscribable_id', 'quantity']),
  LineItemUpdate: input({ subscribable_id: integer(), quantity: integer() }),
  DateInput: input({ actionable_date: { type: 'string', format: 'date', description: 'Moved to tomorrow if earlier.' } }),
  AdminSubscriptionCreate: input({ user_id: integer(), ...adminSubscriptionFields }, ['user_id', 'interval_length']),
  AdminSubscriptionUpdate: input(adminSubscriptionFields),
  UserInput: input({
    email: { type: 'string', description: 'Unique (case-insensitively); must contain an @.' },
    external_id: nullable('string'),
    locale: { type: ['string', 'null'], enum: [...LANGUAGES, null], description: "Their mails' language (C17); null follows REPLENISH_DEFAULT_LOCALE." },
    email_notifications: { ...flag, description: 'false: no mail at all (C17).' },
  }),
  ApiKeyInput: input({ key: { type: 'string', minLength: 16, description: 'An existing key to import (16+ characters, no spaces), so old clients keep working.' } }),
  PaymentMethodInput: input({ name: { type: 'string', maxLength: 255 }, active: flag }),
  PaymentSourceInput: input({
    user_id: integer(), payment_method_id: integer(), kind: nullable('string'), brand: nullable('string'),
    last_digits: nullable('string', { maxLength: 4 }), month: nullableInteger,
    year: nullableInteger, gateway_reference: nullable('string'),
  }, ['user_id', 'payment_method_id']),
  SubscribableInput: input({
    sku: { type: 'string', maxLength: 255 },
    name: { type: 'string', maxLength: 255 },
    subscribable: flag,
    prices: {
      type: ['object', 'null'],
      additionalProperties: { type: ['string', 'null'], pattern: '^\\d+(\\.\\d+)?$' },
      description: 'Currency code → amount as a decimal string (at most the currency\'s minor-unit digits, 0…1000000; never a number). ' +
        'On change, merged by currency into the item\'s prices: `null` as an amount removes that currency, `null` for the object removes them all.',
      examples: [{ USD: '12.50', EUR: null }],
    },
    discount_percent: {
      type: ['string', 'number', 'null'],
      description: 'Subscribe-and-save on this item: "0"…"100", at most 2 decimals; null is 0. Default "0".',
      examples: ['10'],
    },
  }),
  OutcomeInput: input({ result: oneOfValues(OUTCOME_RESULTS), order_reference: nullable('string', { maxLength: 255 }), message: nullable('string', { maxLength: 1000 }) }, ['result']),
  OutcomesInput: input({
    outcomes: {
      type: 'array',
      minItems: 1,
      maxItems: 500,
      items: input({ installment_id: integer(), result: oneOfValues(OUTCOME_RESULTS), order_reference: nullable('string'), message: nullable('string') }, ['installment_id', 'result']),
    },
  }, ['outcomes']),
  WebhookEndpointInput: input(webhookEndpointFields, ['url', 'events']),
  WebhookEndpointPatch: input({
    ...webhookEndpointFields,
    disabled: { ...flag, description: 'true: no new deliveries, none sent; false: what waited is sent.' },
  }),
  AdminTokenInput: input({ scope: { ...oneOfValues(ADMIN_SCOPES), default: 'admin' }, label: nullable('string', { maxLength: 100 }) }),
}
