/** C16: the shop's reports (src/admin/reports.ts). */
import { A } from './admin-account-paths.ts'
import { operation, type Entry } from './operation.ts'
import { count, object, ref, timestamp, type Schema } from './schema-kit.ts'

const currencyParameter: Schema = {
  name: 'currency', in: 'query', description: 'ISO 4217 code, any case; default REPLENISH_CURRENCY. Anything else is a 422.',
  schema: { type: 'string', examples: ['USD'] },
}
const monthParameter = (name: string, description: string): Schema => ({
  name, in: 'query', description: `${description} \`YYYY-MM\` (UTC); anything else is a 422.`, schema: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
})
const currency = { type: 'string', pattern: '^[A-Z]{3}$' }

const RecurringReport = object({
  currency,
  as_of: { ...timestamp, description: "When it was read (the service clock's now)." },
  active_subscriptions: { ...count, description: 'Subscriptions in state active or pending_cancellation, not paused, in this currency.' },
  monthly_recurring_value: {
    ...ref('Money'),
    description: "Σ of the priced ones' total × months per interval (day: 30.4375/length, week: 30.4375/(7 × length), month: 1/length, " +
      'year: 1/(12 × length)), summed exactly and rounded half-up once, at the end.',
  },
  unpriced_subscriptions: { ...count, description: 'Of the active ones, those with a null total (a line without a price in this currency): not in the value.' },
})

const MonthlyReport = object({
  currency,
  months: {
    type: 'array',
    maxItems: 36,
    description: 'Every month from `from` through `to`, in order.',
    items: object({
      month: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
      new_subscriptions: { ...count, description: 'Subscriptions created in the month.' },
      canceled_subscriptions: { ...count, description: 'Subscriptions that went from acting (active, pending_cancellation) to canceled in the month.' },
      active_at_start: { ...count, description: 'Subscriptions acting (active or pending_cancellation, paused ones included) when the month began.' },
      active_at_end: { ...count, description: 'The same when it ended (or now, for the running month).' },
      churn_rate: { type: ['string', 'null'], pattern: '^\\d+\\.\\d{4}$', description: 'canceled ÷ active at start, 4 decimals rounded half-up; null when none was active at start.' },
      installments_made: count,
      installments_fulfilled: { ...count, description: 'Installments whose fulfilled outcome was recorded in the month.' },
      fulfilled_total: { ...ref('Money'), description: "Σ of those installments' frozen totals (the ones without prices add nothing)." },
    }),
  },
})

export const adminReportPaths: readonly Entry[] = [
  operation('get', `${A}/reports/recurring`, {
    id: 'showRecurringReport', tag: 'Reports', summary: 'Monthly recurring value at the catalog prices of now', auth: 'read', strictQuery: true,
    parameters: [currencyParameter],
    answers: [{ status: '200', description: 'The recurring value of the active, unpaused subscriptions in the currency.', schema: RecurringReport }],
  }),
  operation('get', `${A}/reports/monthly`, {
    id: 'showMonthlyReport', tag: 'Reports', summary: 'New and canceled subscriptions, churn and fulfilled revenue per month', auth: 'read', strictQuery: true,
    description: 'At most 36 months. `to` before `from`, or more than 36 months, is a 422 naming `to`.',
    parameters: [monthParameter('from', 'First month; default 11 months before `to`.'), monthParameter('to', "Last month; default the service clock's month."), currencyParameter],
    answers: [{ status: '200', description: 'One entry per month.', schema: MonthlyReport }],
  }),
]
