/** The admin API's people and catalog (C11, C13): users and their keys, payment, subscribables, admin tokens. */
import { body, operation, patchAndPut, type Entry } from './operation.ts'
import { idFilter, listParameters, textFilter } from './parameters.ts'
import { ref, rooted } from './schema-kit.ts'

export const A = '/admin/api/v1'

const ok = (description: string, schema: string) => ({ status: '200', description, schema: ref(schema) }) as const
const created = (description: string, schema: string) => ({ status: '201', description, schema: ref(schema) }) as const

/** The filters of the users list and of its export (C13, C18). */
export const USER_QUERY = {
  email: textFilter('Exact match (case-insensitive).'),
  external_id: textFilter('Exact match.'),
  q: textFilter(
    'Search: users whose email, external id, or part of the email after `@` begins with this (ASCII letters in any case; ' +
      'leading and trailing spaces ignored; `%` and `_` are plain characters). Indexed on both databases.',
  ),
}

const users: Entry[] = [
  operation('post', `${A}/users`, {
    id: 'createUser', tag: 'Users', summary: 'Create a user', auth: 'admin',
    body: body(rooted('user', { ...ref('UserInput'), description: '`email` required.' })),
    answers: [created('The new user.', 'User')],
  }),
  operation('get', `${A}/users`, {
    id: 'listUsers', tag: 'Users', summary: 'List or search users', auth: 'read', strictQuery: true,
    parameters: listParameters(USER_QUERY),
    answers: [ok('A page of users, by id.', 'UserList')],
  }),
  operation('get', `${A}/users/{id}`, { id: 'showUser', tag: 'Users', summary: 'Show a user', auth: 'read', answers: [ok('The user.', 'User')] }),
  ...patchAndPut(`${A}/users/{id}`, {
    id: 'updateUser', tag: 'Users', summary: "Change a user's email or external id", auth: 'admin',
    body: body(rooted('user', ref('UserInput'))),
    answers: [ok('The user after the change.', 'User')],
  }),
  operation('post', `${A}/users/{id}/erase`, {
    id: 'eraseUser', tag: 'Users', summary: 'Erase a user (right to erasure)', auth: 'admin',
    description: 'Cancels their subscriptions, revokes their keys, blanks their email (null) and addresses; ids, installments and events stay.',
    answers: [ok('The erased user.', 'User')],
  }),
  operation('post', `${A}/users/{id}/api_keys`, {
    id: 'createApiKey', tag: 'API keys', summary: 'Make a new API key, or import an existing one', auth: 'admin',
    body: body(rooted('api_key', ref('ApiKeyInput'), false), { required: false, description: 'Empty: a new `rpl_…` key. `api_key[key]`: import that key.' }),
    answers: [created('The key, shown in this answer only.', 'NewApiKey')],
  }),
  operation('get', `${A}/users/{id}/api_keys`, {
    id: 'listApiKeys', tag: 'API keys', summary: "List a user's API keys (never the keys themselves)", auth: 'read', strictQuery: true,
    parameters: listParameters(), answers: [ok("A page of the user's keys.", 'ApiKeyList')],
  }),
  operation('delete', `${A}/api_keys/{id}`, { id: 'revokeApiKey', tag: 'API keys', summary: 'Revoke an API key', auth: 'admin', answers: [ok('The revoked key (revoking again answers 200 too).', 'ApiKey')] }),
]

const payment: Entry[] = [
  operation('post', `${A}/payment_methods`, {
    id: 'createPaymentMethod', tag: 'Payment methods', summary: 'Create a payment method', auth: 'admin',
    body: body(rooted('payment_method', ref('PaymentMethodInput'))), answers: [created('The new payment method.', 'PaymentMethod')],
  }),
  operation('get', `${A}/payment_methods`, {
    id: 'listPaymentMethods', tag: 'Payment methods', summary: 'List payment methods', auth: 'read', strictQuery: true,
    parameters: listParameters(), answers: [ok('A page of payment methods.', 'PaymentMethodList')],
  }),
  operation('get', `${A}/payment_methods/{id}`, { id: 'showPaymentMethod', tag: 'Payment methods', summary: 'Show a payment method', auth: 'read', answers: [ok('The payment method.', 'PaymentMethod')] }),
  ...patchAndPut(`${A}/payment_methods/{id}`, {
    id: 'updatePaymentMethod', tag: 'Payment methods', summary: 'Rename or (de)activate a payment method', auth: 'admin',
    body: body(rooted('payment_method', ref('PaymentMethodInput'))), answers: [ok('The payment method after the change.', 'PaymentMethod')],
  }),
  operation('post', `${A}/payment_sources`, {
    id: 'createPaymentSource', tag: 'Payment sources', summary: 'Create a payment source for a user', auth: 'admin',
    body: body(rooted('payment_source', ref('PaymentSourceInput'))), answers: [created('The new payment source.', 'PaymentSource')],
  }),
  operation('get', `${A}/payment_sources`, {
    id: 'listPaymentSources', tag: 'Payment sources', summary: 'List payment sources', auth: 'read', strictQuery: true,
    parameters: listParameters({ user_id: idFilter("Only this user's sources.") }), answers: [ok('A page of payment sources.', 'PaymentSourceList')],
  }),
  operation('get', `${A}/payment_sources/{id}`, { id: 'showPaymentSource', tag: 'Payment sources', summary: 'Show a payment source', auth: 'read', answers: [ok('The payment source.', 'PaymentSource')] }),
  operation('delete', `${A}/payment_sources/{id}`, {
    id: 'deletePaymentSource', tag: 'Payment sources', summary: 'Delete a payment source', auth: 'admin',
    description: 'Clears both payment ids from the subscriptions that used it, each with `subscription.payment_method_changed`.',
    answers: [ok('The deleted payment source.', 'PaymentSource')],
  }),
]

const catalog: Entry[] = [
  operation('post', `${A}/subscribables`, {
    id: 'createSubscribable', tag: 'Subscribables', summary: 'Add a catalog item', auth: 'admin',
    body: body(rooted('subscribable', ref('SubscribableInput'))), answers: [created('The new catalog item.', 'Subscribable')],
  }),
  operation('get', `${A}/subscribables`, {
    id: 'listSubscribables', tag: 'Subscribables', summary: 'List the catalog', auth: 'read', strictQuery: true,
    parameters: listParameters(), answers: [ok('A page of catalog items.', 'SubscribableList')],
  }),
  operation('get', `${A}/subscribables/{id}`, { id: 'showSubscribable', tag: 'Subscribables', summary: 'Show a catalog item', auth: 'read', answers: [ok('The catalog item.', 'Subscribable')] }),
  ...patchAndPut(`${A}/subscribables/{id}`, {
    id: 'updateSubscribable', tag: 'Subscribables', summary: 'Change a catalog item', auth: 'admin',
    body: body(rooted('subscribable', ref('SubscribableInput'))), answers: [ok('The catalog item after the change.', 'Subscribable')],
  }),
  operation('delete', `${A}/subscribables/{id}`, {
    id: 'deleteSubscribable', tag: 'Subscribables', summary: 'Delete a catalog item', auth: 'admin',
    description: 'Removes its line items, each with `line_item.deleted`.', answers: [ok('The deleted catalog item.', 'Subscribable')],
  }),
]

const tokens: Entry[] = [
  operation('post', `${A}/admin_tokens`, {
    id: 'createAdminToken', tag: 'Admin tokens', summary: 'Make an admin token', auth: 'admin',
    body: body(rooted('admin_token', ref('AdminTokenInput')), { required: false, description: 'Empty: scope `admin`, no label.' }),
    answers: [created('The token, shown in this answer only.', 'NewAdminToken')],
  }),
  operation('get', `${A}/admin_tokens`, {
    id: 'listAdminTokens', tag: 'Admin tokens', summary: 'List admin tokens (never the tokens themselves)', auth: 'admin', strictQuery: true,
    parameters: listParameters(), answers: [ok('A page of admin tokens.', 'AdminTokenList')],
  }),
  operation('delete', `${A}/admin_tokens/{id}`, {
    id: 'revokeAdminToken', tag: 'Admin tokens', summary: 'Revoke an admin token', auth: 'admin',
    answers: [ok('The token as it was; from the next request on it is refused (401).', 'AdminToken')],
  }),
]

export const adminAccountPaths: readonly Entry[] = [...users, ...payment, ...catalog, ...tokens]
