/** The admin API's CSV exports (C18), as src/admin/exports.ts answers them. */
import { A, USER_QUERY } from './admin-account-paths.ts'
import { INSTALLMENT_QUERY, SUBSCRIPTION_QUERY } from './admin-subscription-paths.ts'
import { operation, type Entry } from './operation.ts'
import type { Schema } from './schema-kit.ts'

const contentDisposition: Schema = {
  description: '`attachment; filename="<name>-<today>.csv"`.',
  required: true,
  schema: { type: 'string', examples: ['attachment; filename="subscriptions-2026-11-27.csv"'] },
}

function exportOf(name: string, id: string, what: string, filters: Record<string, { schema: Schema; description: string }>, columns: string): Entry {
  return operation('get', `${A}/exports/${name}.csv`, {
    id, tag: 'Exports', summary: `Every ${what} as CSV`, auth: 'read', strictQuery: true,
    description:
      `Every ${what} the list's filters select (as strictly read as the list reads them), in id order from \`after\` on; ` +
      'no `limit`. RFC 4180 with a header row, streamed (chunked) in constant memory; gzip or br when Accept-Encoding allows. ' +
      "A text cell that begins with `=`, `+`, `-`, `@`, a tab or a CR starts with `'` (spreadsheet formula injection). " +
      `Columns: ${columns}.`,
    parameters: [
      { name: 'after', in: 'query', description: 'Rows with an id above this only (to resume an export).', schema: { type: 'integer', minimum: 0, default: 0 } },
      ...Object.entries(filters).map(([param, f]) => ({ name: param, in: 'query', description: f.description, schema: f.schema })),
    ],
    answers: [{
      status: '200',
      description: 'The CSV, `text/csv; charset=utf-8`: timestamps ISO 8601 UTC with milliseconds, dates YYYY-MM-DD, empty cells for null.',
      mediaType: 'text/csv',
      schema: { type: 'string' },
      headers: { 'Content-Disposition': contentDisposition },
    }],
  })
}

export const adminExportPaths: readonly Entry[] = [
  exportOf('subscriptions', 'exportSubscriptions', 'subscription', SUBSCRIPTION_QUERY,
    'id, user_id, user_email, user_external_id, state, paused, interval_length, interval_units, actionable_date, end_date, skip_count, ' +
      'successive_skip_count, payment_method_id, payment_source_id, currency, subtotal, discount_total, total (C16, as the catalog prices it now), processing_state, items (`2 × Coffee; 1 × Tea`), created_at, updated_at'),
  exportOf('users', 'exportUsers', 'user', USER_QUERY, 'id, email, external_id, locale, email_notifications, created_at, updated_at'),
  exportOf('installments', 'exportInstallments', 'installment', INSTALLMENT_QUERY,
    'id, subscription_id, user_id, user_email, user_external_id, due_date, state, retry_at, items, payment_method_id, payment_source_id, ' +
      'currency, subtotal, discount_total, total (C16, frozen), attempts (their number), last_result, last_order_reference, last_message, created_at, updated_at'),
]
