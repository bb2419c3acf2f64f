import { FieldErrors, acceptableText, readBoundedInteger, readStoredCount } from '../field-errors.ts'
import type { MessageKey } from '../messages.ts'
import { isDate } from '../dates.ts'
import type { ImportMessageKey } from './errors.ts'

/**
 * Readers of one field of an import line. Each answers the value, or undefined after recording
 * why not: C4's messages in `errors`, the import's own in `own`. A field that is present with
 * `null` counts as given (it is compared), and is refused where the column cannot be empty.
 */
export class LineFields {
  readonly errors = new FieldErrors()
  readonly own: { field: string; key: ImportMessageKey }[] = []
  readonly raw: Readonly<Record<string, unknown>>
  /** The fields the line gave, but `type` (and timestamps given as null: see `time`). */
  readonly given: Set<string>
  private readonly prefix: string

  constructor(raw: Readonly<Record<string, unknown>>, prefix = '') {
    this.raw = raw
    this.prefix = prefix
    this.given = new Set(Object.keys(raw).filter((k) => k !== 'type'))
  }

  has(field: string): boolean {
    return this.raw[field] !== undefined
  }

  addOwn(field: string, key: ImportMessageKey): undefined {
    this.own.push({ field: this.prefix + field, key })
    return undefined
  }

  add(field: string, key: MessageKey, count?: number): undefined {
    return this.errors.add(this.prefix + field, key, count)
  }

  /** Fields that no line of this kind has: refused, so a misspelt name cannot drop a value silently. */
  refuseUnknown(known: readonly string[]): void {
    for (const field of Object.keys(this.raw)) if (!known.includes(field)) this.addOwn(field, 'unknown_field')
  }

  /** A positive integer id, required. */
  id(field: string): number | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null || v === '') return this.add(field, 'blank')
    const n = readBoundedInteger(v, this.prefix + field, undefined, this.errors)
    if (n !== undefined && !Number.isSafeInteger(n)) return this.add(field, 'invalid')
    return n
  }

  /** An id, or null when absent or null. */
  optionalId(field: string): number | null | undefined {
    const v = this.raw[field]
    return v === undefined || v === null ? null : this.id(field)
  }

  string(field: string, max = 255): string | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return this.add(field, 'blank')
    return this.text(field, v, max)
  }

  optionalString(field: string, max = 255): string | null | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null || v === '') return null
    return this.text(field, v, max)
  }

  private text(field: string, v: unknown, max: number): string | undefined {
    if (typeof v !== 'string' && typeof v !== 'number') return this.add(field, 'invalid')
    const s = String(v).trim()
    if (s.length > max) return this.add(field, 'too_long', max)
    return acceptableText(s, this.prefix + field, this.errors) ? s : undefined
  }

  boolean(field: string, fallback: boolean): boolean | undefined {
    const v = this.raw[field]
    if (v === undefined) return fallback
    return typeof v === 'boolean' ? v : this.add(field, 'inclusion')
  }

  /** A whole number ≥ 0 (a counter) that every backend's integer column holds, 0 when absent. */
  count(field: string): number | undefined {
    const v = this.raw[field]
    if (v === undefined) return 0
    if (v === null) return this.add(field, 'blank')
    return readStoredCount(v, this.prefix + field, this.errors)
  }

  /** As `count`, or null when absent (a card's month or year). */
  optionalCount(field: string): number | null | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null || v === '') return null
    return readStoredCount(v, this.prefix + field, this.errors)
  }

  /** A real date `YYYY-MM-DD` or null; past dates are fine (an import brings history). */
  date(field: string): string | null | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null) return null
    return isDate(v) ? v : this.add(field, 'invalid_date')
  }

  oneOf<T extends string>(field: string, values: readonly T[], fallback: T): T | undefined {
    const v = this.raw[field]
    if (v === undefined) return fallback
    return typeof v === 'string' && (values as readonly string[]).includes(v) ? (v as T) : this.add(field, 'inclusion')
  }

  /**
   * An instant in ISO 8601 with its zone, as C3 writes it (UTC, milliseconds). Absent or null
   * (Spree's core tables allow null timestamps): `fallback`, and the field counts as not given.
   */
  time(field: string, fallback: string): string | undefined {
    const v = this.raw[field]
    if (v === undefined || v === null) {
      this.given.delete(field)
      return fallback
    }
    // Already as C3 writes it (what the export SQL writes): kept as it is, without a Date.
    if (typeof v === 'string' && C3_TIME.test(v) && isDate(v.slice(0, 10))) return v
    const iso = typeof v === 'string' && ISO_TIME.test(v) && isDate(v.slice(0, 10)) ? Date.parse(v) : Number.NaN
    if (!Number.isFinite(iso)) return this.addOwn(field, 'invalid_time')
    return new Date(iso).toISOString()
  }
}

/** C3's own form, `2026-11-22T04:00:00.000Z`: a real date (checked apart) and a real time of day. */
const C3_TIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/
/** `2026-11-22T04:00:00Z`, with seconds and fractions optional, `Z` or an offset: never a local time. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,9})?)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/
