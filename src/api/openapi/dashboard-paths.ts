/** The admin API's reads the staff dashboard needs (issue 19, docs/console.md): overview, current token, a subscription's events. */
import { ADMIN_SCOPES } from '../../store/api.ts'
import { A } from './admin-account-paths.ts'
import { operation, type Entry } from './operation.ts'
import { listParameters } from './parameters.ts'
import { count, date, nullable, nullableDate, nullableId, nullableText, object, oneOfValues, ref, type Schema } from './schema-kit.ts'

const days = (item: Schema, description: string): Schema => ({ type: 'array', minItems: 90, maxItems: 90, description, items: item })

const Overview = object({
  today: { ...date, description: "The service clock's today (C8)." },
  subscriptions: object({
    by_state: object({ active: count, pending_cancellation: count, canceled: count, inactive: count }),
    paused: { ...count, description: 'Active subscriptions that are paused (C8: a flag, not a state).' },
  }),
  due_today: { ...count, description: 'Subscriptions that make an installment today: acting, with a line item, dated today.' },
  overdue: object({ count, oldest_date: nullableDate }),
  installments: object({ pending: count, retrying: count, fulfilled: count, abandoned: count }),
  webhook_deliveries: object({
    retrying: { ...count, description: 'Pending after at least one failed attempt.' },
    failed_last_30_days: { ...count, description: 'Made in the last 30 days and given up on (C10: after 3 days of retries).' },
  }),
  deliveries_due: days(object({ date, count }), 'Today and the 89 days after it: subscriptions whose next date falls on each day.'),
  installment_outcomes: days(
    object({ date, fulfilled: count, failed: count, payment_failed: count, out_of_stock: count }),
    'The last 90 days, today last: outcomes recorded on each day (real time, REPLENISH_TIME_ZONE).',
  ),
})

const CurrentAdminToken = object({
  id: { ...nullableId, description: 'null for REPLENISH_ADMIN_TOKEN, which is not stored.' },
  scope: oneOfValues(ADMIN_SCOPES),
  label: nullableText,
  prefix: nullable('string'),
})

export const dashboardPaths: readonly Entry[] = [
  operation('get', `${A}/overview`, {
    id: 'showOverview', tag: 'Dashboard', summary: "The staff dashboard's counts and 90-day series", auth: 'read',
    answers: [{ status: '200', description: 'Counts now, deliveries due in the next 90 days, outcomes of the last 90.', schema: Overview }],
  }),
  operation('get', `${A}/admin_tokens/current`, {
    id: 'showCurrentAdminToken', tag: 'Admin tokens', summary: 'The token this request is made with', auth: 'read',
    answers: [{ status: '200', description: 'Its scope, label and prefix (never the token).', schema: CurrentAdminToken }],
  }),
  operation('get', `${A}/subscriptions/{id}/events`, {
    id: 'adminListSubscriptionEvents', tag: 'Events', summary: "A subscription's events, newest first", auth: 'read', strictQuery: true,
    description: 'Keyset pages: `after` is the last id of the previous page; the next page holds the events older than it.',
    parameters: listParameters(), answers: [{ status: '200', description: 'A page of events, newest first.', schema: ref('EventList') }],
  }),
]
