import type { LineItem, Subscription } from '../types.ts'
import type { Given, ImportedLineItem, ImportRecord, StoredImportRow } from './records.ts'

/**
 * The fields of an import line that differ from the stored row with the same id, among those the
 * line gave. None: the row is already there as the file has it, and the line is skipped (this is
 * what makes importing the same file twice change nothing). Some: the line is refused, naming
 * them, because the stored row changed since (or the file is another one): an import never
 * overwrites (docs/import.md).
 */
export function differences(record: ImportRecord, stored: StoredImportRow): string[] {
  if (record.type !== 'subscription') return fieldsThatDiffer(record.row, record.given, stored)
  const s = stored as { subscription: Subscription; line_items: readonly LineItem[] }
  // `line_items` is no field of the subscription row: it is compared here, item by item.
  const fields = fieldsThatDiffer(record.row.subscription, record.given, s.subscription)
  if (record.given.has('line_items') && !sameLineItems(record.row.line_items, s.line_items)) fields.push('line_items')
  return fields
}

function fieldsThatDiffer(row: object, given: Given, stored: object): string[] {
  const mine = row as Record<string, unknown>
  const theirs = stored as Record<string, unknown>
  // An API key is found by its key: the key itself cannot differ.
  return [...given].filter((field) => field !== 'key' && field in mine && !same(mine[field], theirs[field]))
}

function sameLineItems(given: readonly ImportedLineItem[], stored: readonly LineItem[]): boolean {
  if (given.length !== stored.length) return false
  const byId = new Map(stored.map((li) => [li.id, li]))
  return given.every(({ item, given: fields }) => {
    const other = byId.get(item.id)
    if (!other || other.subscribable_id !== item.subscribable_id || other.quantity !== item.quantity) return false
    return (!fields.has('created_at') || other.created_at === item.created_at) && (!fields.has('updated_at') || other.updated_at === item.updated_at)
  })
}

/** Values as JSON holds them: objects (addresses) field by field, whatever their key order. */
function same(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  return ka.every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}
