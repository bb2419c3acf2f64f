/** The admin API's subscriptions, installments, events and imports (C9, C10, C11, C13). */
import { EVENT_TYPES } from '../../domain/events.ts'
import { STATES } from '../../domain/types.ts'
import { INSTALLMENT_STATES } from '../../domain/installment.ts'
import { A } from './admin-account-paths.ts'
import { body, operation, patchAndPut, type Entry } from './operation.ts'
import { dateFilter, enumFilter, idFilter, listParameters } from './parameters.ts'
import { ref, rooted } from './schema-kit.ts'

const SUBSCRIPTIONS = 'Admin subscriptions'

/** The filters of the subscriptions list and of its export (C11, C18). */
export const SUBSCRIPTION_QUERY = {
  state: enumFilter(STATES, 'Only this state.'),
  user_id: idFilter("Only this user's."),
  actionable_before: dateFilter('Only those acting before this date (exclusive).'),
  paused: enumFilter(['true', 'false'], 'Only paused ones (`true`) or only those not paused (`false`); anything else is a 422.'),
}

/** The filters of the installments list and of its export (C11, C13, C18). */
export const INSTALLMENT_QUERY = {
  state: enumFilter(INSTALLMENT_STATES, 'Only this state.'),
  subscription_id: idFilter("Only this subscription's."),
  user_id: idFilter("Only this user's."),
  due_after: dateFilter('Due after this date (exclusive).'),
  due_before: dateFilter('Due before this date (exclusive).'),
}
const subscription = { status: '200', description: 'The whole subscription (C3).', schema: ref('Subscription') } as const
const dateBody = body(rooted('subscription', ref('DateInput'), false), { required: false, description: 'Optional: `subscription[actionable_date]`.' })

const lifecycle = (name: string, summary: string, withDate = false): Entry =>
  operation('post', `${A}/subscriptions/{id}/${name}`, {
    id: `admin${name[0]?.toUpperCase()}${name.slice(1)}Subscription`, tag: SUBSCRIPTIONS, summary, auth: 'admin',
    description: 'As C8, without the skip limits or the cancellation notice the customer gets.',
    ...(withDate ? { body: dateBody } : {}),
    answers: [subscription],
  })

const subscriptions: Entry[] = [
  operation('post', `${A}/subscriptions`, {
    id: 'adminCreateSubscription', tag: SUBSCRIPTIONS, summary: 'Create a subscription for a user', auth: 'admin',
    description: "C6's validation, but any `actionable_date` (past included) and the skip counters may be set (imports).",
    body: body(rooted('subscription', ref('AdminSubscriptionCreate'))),
    answers: [{ ...subscription, status: '201', description: 'The new subscription.' }],
  }),
  operation('get', `${A}/subscriptions`, {
    id: 'adminListSubscriptions', tag: SUBSCRIPTIONS, summary: 'List subscriptions', auth: 'read', strictQuery: true,
    parameters: listParameters(SUBSCRIPTION_QUERY),
    answers: [{ status: '200', description: 'A page of subscriptions, by id.', schema: ref('SubscriptionList') }],
  }),
  operation('get', `${A}/subscriptions/{id}`, { id: 'adminShowSubscription', tag: SUBSCRIPTIONS, summary: 'Show a subscription', auth: 'read', answers: [subscription] }),
  ...patchAndPut(`${A}/subscriptions/{id}`, {
    id: 'adminUpdateSubscription', tag: SUBSCRIPTIONS, summary: 'Update a subscription', auth: 'admin',
    description: "C7's fields, plus any `actionable_date` and the skip counters.",
    body: body(rooted('subscription', ref('AdminSubscriptionUpdate'))),
    answers: [subscription],
  }),
  lifecycle('cancel', 'Cancel'),
  lifecycle('skip', 'Skip the next occurrence'),
  lifecycle('pause', 'Pause, until a date or indefinitely', true),
  lifecycle('resume', 'Resume, on a date or tomorrow', true),
  lifecycle('activate', 'Reactivate'),
]

const installment = { status: '200', description: 'The installment with its attempts.', schema: ref('Installment') } as const

const installments: Entry[] = [
  operation('get', `${A}/installments`, {
    id: 'listInstallments', tag: 'Installments', summary: 'List installments', auth: 'read', strictQuery: true,
    parameters: listParameters(INSTALLMENT_QUERY),
    answers: [{ status: '200', description: 'A page of installments, by id.', schema: ref('InstallmentList') }],
  }),
  operation('get', `${A}/installments/{id}`, { id: 'showInstallment', tag: 'Installments', summary: 'Show an installment', auth: 'read', answers: [installment] }),
  operation('post', `${A}/installments/{id}/outcome`, {
    id: 'recordInstallmentOutcome', tag: 'Installments', summary: "Report an installment's outcome", auth: 'admin',
    description: 'A failure schedules a retry; repeating the last outcome is a no-op 200; another outcome for a fulfilled or abandoned installment is a 422 (C9).',
    body: body(rooted('outcome', ref('OutcomeInput'))),
    answers: [{ ...installment, description: 'The installment after the outcome.' }],
  }),
  operation('post', `${A}/installments/outcomes`, {
    id: 'recordInstallmentOutcomes', tag: 'Installments', summary: 'Report up to 500 outcomes at once', auth: 'admin',
    description: "Each entry applies on its own, as the single outcome would; a refused entry's `errors` is the body the single call would answer.",
    body: body(ref('OutcomesInput'), { description: '`outcomes[0][installment_id]=…` in a form.' }),
    answers: [{ status: '200', description: 'One result per entry, in request order.', schema: ref('OutcomeResults') }],
  }),
]

const feedAndImports: Entry[] = [
  operation('get', `${A}/events`, {
    id: 'eventFeed', tag: 'Events', summary: 'The event feed, for shops that poll', auth: 'read', strictQuery: true,
    parameters: listParameters({ type: enumFilter(EVENT_TYPES, 'Only this event type (C10); another value is a 422.') }),
    answers: [{ status: '200', description: 'Events after `after`, oldest first.', schema: ref('EventList') }],
  }),
  operation('post', `${A}/imports`, {
    id: 'importRecords', tag: 'Imports', summary: 'Import users, keys, payment, catalog and subscriptions, keeping their ids', auth: 'admin',
    description: 'All or nothing, and idempotent: the same file again changes nothing. A bad line is refused with its line number and field. At most 64 MiB; the token is checked before the body is read. Line format: docs/import.md.',
    body: {
      required: true,
      description: 'JSON Lines, one record per line (docs/import.md).',
      content: { 'application/x-ndjson': { schema: { type: 'string', description: 'One JSON object per line.' } } },
    },
    answers: [
      { status: '200', description: 'What the import did, per kind.', schema: ref('ImportSummary') },
      {
        status: '422',
        description: 'A line refused (its number, the sentence and the field errors), an empty body, or an Idempotency-Key refusal; nothing is imported.',
        schema: { oneOf: [ref('ImportRefused'), ref('Error')] },
      },
    ],
  }),
]

export const adminSubscriptionPaths: readonly Entry[] = [...subscriptions, ...installments, ...feedAndImports]
