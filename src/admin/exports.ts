/**
 * CSV exports (C18): `GET /admin/api/v1/exports/subscriptions.csv`, `users.csv` and
 * `installments.csv`, for scopes `admin` and `read`, with the filters of the matching list read
 * as strictly as the list reads them (a bad one is its 422 before anything is sent) and `after`
 * to start from. Every matching row, in id order, however many: the store is read in batches by
 * id (keyset) and each batch is written once the client has taken the one before (the server's
 * backpressure, src/http/respond.ts), so memory stays flat for a million rows (docs/performance.md).
 *
 * Each export is a table of columns (src/domain/csv.ts): the representation's scalar fields in
 * C3's order with, beside them, what names things (the customer's email, the items' names).
 * Money (C16) is written as the representation shows it: the subscription's totals as the catalog
 * prices it now, the installment's frozen ones.
 */
import type { Reply } from '../http/types.ts'
import { csvHeader, csvRecords, type Column, type Decimal } from '../domain/csv.ts'
import { costOf, totalsOf, type Totals } from '../domain/money.ts'
import type { Attempt, Installment, SnapshotLine } from '../domain/installment.ts'
import type { User } from '../domain/types.ts'
import type { Language } from '../domain/messages.ts'
import type { ExportItem, SubscriptionExportRow } from '../store/api.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import type { ApiHandler } from '../api/kit/endpoint.ts'
import { readExportQuery } from './input.ts'
import { SUBSCRIPTION_FILTERS, subscriptionFilter } from './subscriptions.ts'
import { USER_FILTERS, userFilter } from './users.ts'
import { INSTALLMENT_FILTERS, installmentFilter } from './installments.ts'

/** Rows read from the store at a time: a few milliseconds of SQLite's one connection per batch. */
export const EXPORT_BATCH = 1000

export const CSV_TYPE = 'text/csv; charset=utf-8'

/** `2 × Coffee; 1 × Tea`: a subscription's or installment's items, by their catalog names. */
const itemsText = (items: readonly (ExportItem | SnapshotLine)[]): string => items.map((i) => `${i.quantity} × ${i.name}`).join('; ')

/** C16 money, written as the number it is (never guarded as text); null stays an empty cell. */
const decimal = (amount: string | null): Decimal | null => (amount === null ? null : { decimal: amount })

/** A subscription's next delivery as the catalog prices it now (C16), as renderSubscription shows it. */
const subscriptionTotals = (r: SubscriptionExportRow): Totals =>
  totalsOf(r.items.map((i) => costOf(i.quantity, i.unit_price, i.discount_bp)), r.subscription.currency)

export const SUBSCRIPTION_COLUMNS: readonly Column<SubscriptionExportRow>[] = [
  ['id', (r) => r.subscription.id],
  ['user_id', (r) => r.subscription.user_id],
  ['user_email', (r) => r.user_email],
  ['user_external_id', (r) => r.user_external_id],
  ['state', (r) => r.subscription.state],
  ['paused', (r) => r.subscription.paused],
  ['interval_length', (r) => r.subscription.interval_length],
  ['interval_units', (r) => r.subscription.interval_units],
  ['actionable_date', (r) => r.subscription.actionable_date],
  ['end_date', (r) => r.subscription.end_date],
  ['skip_count', (r) => r.subscription.skip_count],
  ['successive_skip_count', (r) => r.subscription.successive_skip_count],
  ['payment_method_id', (r) => r.subscription.payment_method_id],
  ['payment_source_id', (r) => r.subscription.payment_source_id],
  ['currency', (r) => r.subscription.currency],
  ['subtotal', (r) => decimal(subscriptionTotals(r).subtotal)],
  ['discount_total', (r) => decimal(subscriptionTotals(r).discount_total)],
  ['total', (r) => decimal(subscriptionTotals(r).total)],
  ['processing_state', (r) => r.subscription.processing_state],
  ['items', (r) => itemsText(r.items)],
  ['created_at', (r) => r.subscription.created_at],
  ['updated_at', (r) => r.subscription.updated_at],
]

/** The user as the admin API shows it (C17: `locale` is the service's default while they have none of their own). */
export const userColumns = (defaultLocale: Language): readonly Column<User>[] => [
  ['id', (u) => u.id],
  ['email', (u) => u.email],
  ['external_id', (u) => u.external_id],
  ['locale', (u) => u.locale ?? defaultLocale],
  ['email_notifications', (u) => u.email_notifications],
  ['created_at', (u) => u.created_at],
  ['updated_at', (u) => u.updated_at],
]

interface InstallmentExportRow {
  readonly installment: Installment
  readonly attempts: readonly Attempt[]
}

const lastAttempt = (r: InstallmentExportRow): Attempt | undefined => r.attempts[r.attempts.length - 1]

export const INSTALLMENT_COLUMNS: readonly Column<InstallmentExportRow>[] = [
  ['id', (r) => r.installment.id],
  ['subscription_id', (r) => r.installment.subscription_id],
  ['user_id', (r) => r.installment.user.id],
  ['user_email', (r) => r.installment.user.email],
  ['user_external_id', (r) => r.installment.user.external_id],
  ['due_date', (r) => r.installment.due_date],
  ['state', (r) => r.installment.state],
  ['retry_at', (r) => r.installment.retry_at],
  ['items', (r) => itemsText(r.installment.line_items)],
  ['payment_method_id', (r) => r.installment.payment_method_id],
  ['payment_source_id', (r) => r.installment.payment_source_id],
  ['currency', (r) => r.installment.currency],
  ['subtotal', (r) => decimal(r.installment.subtotal)],
  ['discount_total', (r) => decimal(r.installment.discount_total)],
  ['total', (r) => decimal(r.installment.total)],
  ['attempts', (r) => r.attempts.length],
  ['last_result', (r) => lastAttempt(r)?.result ?? null],
  ['last_order_reference', (r) => lastAttempt(r)?.order_reference ?? null],
  ['last_message', (r) => lastAttempt(r)?.message ?? null],
  ['created_at', (r) => r.installment.created_at],
  ['updated_at', (r) => r.installment.updated_at],
]

export const exportSubscriptions = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readExportQuery(ctx.query, SUBSCRIPTION_FILTERS)
  return csvReply(app, 'subscriptions', SUBSCRIPTION_COLUMNS, q.after, (r) => r.subscription.id,
    (after) => app.store.subscriptions.exportBatch(subscriptionFilter({ ...q, after }, EXPORT_BATCH)))
}

export const exportUsers = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readExportQuery(ctx.query, USER_FILTERS)
  const filter = userFilter(q)
  return csvReply(app, 'users', userColumns(app.config.defaultLocale), q.after, (u) => u.id, (after) => app.store.accounts.listUsers(after, EXPORT_BATCH, filter))
}

export const exportInstallments = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readExportQuery(ctx.query, INSTALLMENT_FILTERS)
  return csvReply(app, 'installments', INSTALLMENT_COLUMNS, q.after, (r) => r.installment.id, async (after) => {
    const installments = await app.store.installments.adminList(installmentFilter({ ...q, after }, EXPORT_BATCH))
    const attempts = await app.store.installments.attemptsOf(installments.map((i) => i.id))
    return installments.map((installment) => ({ installment, attempts: attempts.get(installment.id) ?? [] }))
  })
}

/**
 * The answer of an export: its headers now, its rows as a stream the server pulls a batch at a
 * time. Batches are read by id after the last one sent, each a statement of its own: a row
 * changed while the export runs is in it as it was when its batch was read, a row made meanwhile
 * is in it when its id comes after that batch (docs/decisions.md, "CSV exports").
 */
function csvReply<R>(app: App, name: string, columns: readonly Column<R>[], after: number, idOf: (row: R) => number,
  batch: (after: number) => Promise<readonly R[]>): Reply {
  async function* records(): AsyncGenerator<string> {
    yield csvHeader(columns)
    let cursor = after
    for (;;) {
      const rows = await batch(cursor)
      if (rows.length > 0) yield csvRecords(columns, rows)
      if (rows.length < EXPORT_BATCH) return
      cursor = idOf(rows[rows.length - 1] as R)
    }
  }
  return {
    status: 200,
    body: undefined,
    contentType: CSV_TYPE,
    headers: {
      'content-disposition': `attachment; filename="${name}-${app.clock.today()}.csv"`,
      // Customers' emails: never kept by a shared cache or the browser's.
      'cache-control': 'no-store',
    },
    stream: records(),
  }
}
