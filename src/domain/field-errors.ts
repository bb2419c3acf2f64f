import { translate, type Language, type MessageKey } from './messages.ts'

interface FieldError {
  readonly key: MessageKey
  readonly count: number | string | undefined
}

/**
 * Validation collects stable message keys per field (`quantity`, `line_items.quantity`) and
 * renders them in the caller's language only at the end, Rails-style: `{field: [message, …]}`.
 */
export class FieldErrors {
  private readonly fields = new Map<string, FieldError[]>()

  add(field: string, key: MessageKey, count?: number | string): undefined {
    const list = this.fields.get(field) ?? []
    if (!list.some((e) => e.key === key && e.count === count)) list.push({ key, count })
    this.fields.set(field, list)
    return undefined
  }

  merge(other: FieldErrors): void {
    for (const [field, list] of other.fields) for (const e of list) this.add(field, e.key, e.count)
  }

  get empty(): boolean {
    return this.fields.size === 0
  }

  render(language: Language): Record<string, string[]> {
    const out: Record<string, string[]> = {}
    for (const [field, list] of this.fields) out[field] = list.map((e) => translate(e.key, language, e.count))
    return out
  }
}

/** Thrown by domain code when a request breaks a rule; the API layer answers 422 with it. */
export class ValidationFailed extends Error {
  override readonly name = 'ValidationFailed'
  readonly errors: FieldErrors
  constructor(errors: FieldErrors) {
    super('validation failed')
    this.errors = errors
  }
}

export function fail(field: string, key: MessageKey, count?: number): never {
  const errors = new FieldErrors()
  errors.add(field, key, count)
  throw new ValidationFailed(errors)
}

/**
 * Integer input as Rails' numericality sees it: JSON numbers and integer strings (`"11"`);
 * `1.5` is not an integer; anything else is not a number.
 */
export function readInteger(raw: unknown, field: string, errors: FieldErrors): number | undefined {
  let n: number
  if (typeof raw === 'number') n = raw
  else if (typeof raw === 'string' && /^\s*[+-]?\d+\s*$/.test(raw)) n = Number(raw.trim())
  else if (typeof raw === 'string' && /^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$/.test(raw)) n = Number(raw.trim())
  else return errors.add(field, 'not_a_number')
  if (!Number.isFinite(n)) return errors.add(field, 'not_a_number')
  if (!Number.isInteger(n)) return errors.add(field, 'not_an_integer')
  return n
}

/** An integer in `1…max`, with C4's messages. */
export function readBoundedInteger(raw: unknown, field: string, max: number | undefined, errors: FieldErrors): number | undefined {
  const n = readInteger(raw, field, errors)
  if (n === undefined) return undefined
  if (n <= 0) return errors.add(field, 'greater_than_0')
  if (max !== undefined && n > max) return errors.add(field, 'less_than_or_equal_to', max)
  return n
}

/**
 * The largest number a counter or small number column holds on both backends (PostgreSQL's
 * `integer`; SQLite would take more). A client's integer is bounded by it before it reaches SQL,
 * so a value past it is the same 422 everywhere instead of a 500 on PostgreSQL (issue 25).
 */
export const MAX_STORED_INTEGER = 2_147_483_647

/** A stored whole number a client may set (a counter, a card's month or year): 0…MAX_STORED_INTEGER, with C4's messages. */
export function readStoredCount(raw: unknown, field: string, errors: FieldErrors): number | undefined {
  const n = readInteger(raw, field, errors)
  if (n === undefined) return undefined
  if (n < 0) return errors.add(field, 'greater_than_or_equal_to_0')
  if (n > MAX_STORED_INTEGER) return errors.add(field, 'less_than_or_equal_to', MAX_STORED_INTEGER)
  return n
}

/**
 * The one rule every text a client gives is held to, whatever the field (issue 25): it holds no
 * NUL character (U+0000). No field needs one, PostgreSQL's text cannot store it and SQLite
 * would, so it is refused before any SQL, alike on both: `{"field": ["must not contain a NUL
 * character"]}`. Answers whether the text passed; a refusal is added to `errors`.
 */
export function acceptableText(text: string, field: string, errors: FieldErrors): boolean {
  if (!text.includes('\u0000')) return true
  errors.add(field, 'nul_character')
  return false
}

/** An id given by a client: a positive integer or integer string; anything else is no id. */
export function readId(raw: unknown): number | undefined {
  if (typeof raw === 'number') return Number.isSafeInteger(raw) && raw > 0 ? raw : undefined
  if (typeof raw === 'string' && /^\s*\d{1,15}\s*$/.test(raw)) {
    const n = Number(raw)
    return n > 0 ? n : undefined
  }
  return undefined
}

/** A JSON-ish object (not null, not an array). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Rails treats `true`, `"1"`, `"true"` as true for flags like `_destroy`. */
export function isTruthyFlag(value: unknown): boolean {
  return value === true || value === 1 || value === '1' || value === 'true' || value === 'on'
}
