/**
 * What `replenish copy` moves between the two backends (C15), named once: the tables, and a
 * table as the source hands it over. The SQLite side reads (sqlite/copy-source.ts), the
 * PostgreSQL side loads (postgres/copy.ts); neither knows the other.
 */

/**
 * Every table a copy brings, parents before children: foreign keys are checked as rows arrive.
 * Not `leases` (a lease is held by a running process, never copied) nor `schema_migrations`
 * (the target's own, written by migrating it).
 */
export const COPIED_TABLES = [
  'users', 'api_keys', 'admin_tokens', 'payment_methods', 'payment_sources', 'subscribables', 'subscribable_prices', 'subscriptions',
  'line_items', 'events', 'installments', 'installment_attempts', 'process_runs', 'idempotency_keys', 'webhook_endpoints',
  'webhook_deliveries', 'portal_links', 'portal_sessions', 'emails', 'email_totals', 'report_months',
] as const
export type CopiedTable = (typeof COPIED_TABLES)[number]

/** The tables without an `id` column (no sequence to move), and the key a copy reads them in. */
export const KEYS_OF_UNNUMBERED: Partial<Record<CopiedTable, string>> = {
  idempotency_keys: 'scope, key',
  subscribable_prices: 'subscribable_id, currency',
  report_months: 'currency, month, shard',
}

export interface SourceTable {
  /** Rows the source holds (for progress, and the check afterwards). */
  readonly rows: number
  /** The highest id the source ever handed out (AUTOINCREMENT's counter included), or 0: the target's sequence starts after it. */
  readonly lastId: number
  /** The rows in batches, each row's values in the order of `columns` (integers as numbers, booleans as 0/1). */
  batches(columns: readonly string[], size: number): Iterable<readonly (readonly unknown[])[]>
}

export type CopySource = (table: CopiedTable) => SourceTable

