import type { LineItem, PaymentMethod, PaymentSource, Subscribable, Subscription, User } from '../types.ts'

/**
 * What one line of an import file (docs/import.md) becomes once read and checked: the row to
 * store, with every given id, date and counter kept, and the fields the line gave. Only those
 * fields are compared with a stored row of the same id: that is what makes importing a file
 * twice change nothing, while a line that leaves out a timestamp does not "differ" from it.
 */

/** The kinds of line, in the order a file brings them (a line may refer only to earlier lines or stored rows). */
export const IMPORT_TYPES = ['user', 'api_key', 'payment_method', 'payment_source', 'subscribable', 'subscription'] as const
export type ImportType = (typeof IMPORT_TYPES)[number]

/** The fields a line gave. */
export type Given = ReadonlySet<string>

/** An existing API key as stored: its hash and first characters, never the key. */
export interface ImportedApiKey {
  /** Kept when the line gives one; otherwise the database picks it. */
  readonly id: number | null
  readonly user_id: number
  readonly key_hash: string
  readonly prefix: string
  readonly created_at: string
  readonly updated_at: string
}

export interface ImportedLineItem {
  readonly item: LineItem
  /** The entry's own fields: its timestamps may be left out (they then follow the subscription's). */
  readonly given: Given
}

export interface ImportedSubscription {
  readonly subscription: Subscription
  readonly line_items: readonly ImportedLineItem[]
}

export type ImportRecord =
  | { readonly type: 'user'; readonly row: User; readonly given: Given }
  | { readonly type: 'api_key'; readonly row: ImportedApiKey; readonly given: Given }
  | { readonly type: 'payment_method'; readonly row: PaymentMethod; readonly given: Given }
  | { readonly type: 'payment_source'; readonly row: PaymentSource; readonly given: Given }
  | { readonly type: 'subscribable'; readonly row: Subscribable; readonly given: Given }
  | { readonly type: 'subscription'; readonly row: ImportedSubscription; readonly given: Given }

/** A stored row in the shape its record has (a subscription with its line items). */
export type StoredImportRow =
  | User
  | ImportedApiKey
  | PaymentMethod
  | PaymentSource
  | Subscribable
  | { readonly subscription: Subscription; readonly line_items: readonly LineItem[] }

/** Why the store cannot insert a record: a field names what it refers to or what it takes. */
export interface ImportRefusal {
  readonly field: string
  readonly problem: 'does_not_exist' | 'taken' | 'invalid_payment' | 'other_subscription'
}

/** What an import did, per kind: rows written, and rows that were already stored as the file has them. */
export interface ImportSummary {
  readonly lines: number
  readonly users: ImportCount
  readonly api_keys: ImportCount
  readonly payment_methods: ImportCount
  readonly payment_sources: ImportCount
  readonly subscribables: ImportCount
  readonly subscriptions: ImportCount
  readonly line_items: ImportCount
}

export interface ImportCount {
  inserted: number
  present: number
}

/** What reading a line needs besides the line: no clock and no I/O in the domain. */
export interface ImportContext {
  /** The import's own time (ISO 8601), for timestamps a line leaves out. */
  readonly now: string
  /** The service clock's date, the creation date of a subscription that gives no created_at. */
  readonly today: string
  /** REPLENISH_TIME_ZONE: a subscription's creation date (C7's base) is its created_at's date there. */
  readonly timeZone: string
  /** REPLENISH_CURRENCY, for a subscription that gives none (C6). */
  readonly currency: string
  /** Keys are stored as their SHA-256 (C2); the domain is handed the function. */
  readonly hashKey: (key: string) => string
}
