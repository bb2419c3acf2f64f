import { FieldErrors, ValidationFailed, acceptableText, readId, readStoredCount } from '../domain/field-errors.ts'
import { isDate } from '../domain/dates.ts'

/** Small readers for admin bodies; each adds a C4 message to `errors` and answers undefined on failure. */
export function requiredString(attrs: Record<string, unknown>, field: string, errors: FieldErrors, max = 255): string | undefined {
  const v = attrs[field]
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return errors.add(field, 'blank')
  if (typeof v !== 'string' && typeof v !== 'number') return errors.add(field, 'invalid')
  const s = String(v).trim()
  if (s.length > max) return errors.add(field, 'too_long', max)
  return acceptableText(s, field, errors) ? s : undefined
}

export function optionalString(attrs: Record<string, unknown>, field: string, errors: FieldErrors, max = 255): string | null {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return null
  if (typeof v !== 'string' && typeof v !== 'number') return errors.add(field, 'invalid') ?? null
  const s = String(v).trim()
  if (s.length > max) return errors.add(field, 'too_long', max) ?? null
  return acceptableText(s, field, errors) ? s : null
}

export function optionalBoolean(attrs: Record<string, unknown>, field: string, fallback: boolean, errors: FieldErrors): boolean {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return fallback
  if (v === true || v === 'true' || v === '1' || v === 1) return true
  if (v === false || v === 'false' || v === '0' || v === 0) return false
  errors.add(field, 'inclusion')
  return fallback
}

/** A whole number 0 or more that fits every backend's integer column (a card's month or year). */
export function optionalInteger(attrs: Record<string, unknown>, field: string, errors: FieldErrors): number | null {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return null
  return readStoredCount(v, field, errors) ?? null
}

export function requiredId(attrs: Record<string, unknown>, field: string, errors: FieldErrors): number | undefined {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return errors.add(field, 'blank')
  return readId(v) ?? errors.add(field, 'invalid')
}

export function check(errors: FieldErrors): void {
  if (!errors.empty) throw new ValidationFailed(errors)
}

// ---- list query parameters (C13: strict on the admin API) ---------------------------------------

/** What one filter of an admin list accepts; its value reaches the handler typed (`id` → number). */
export type ParamRule =
  | { readonly kind: 'id' }
  | { readonly kind: 'date' }
  | { readonly kind: 'text' }
  | { readonly kind: 'boolean' }
  | { readonly kind: 'one_of'; readonly values: readonly string[] }

// Literal types (not widened to ParamRule), so a list's filters come back as number or string.
export const ID_PARAM = { kind: 'id' } as const satisfies ParamRule
export const DATE_PARAM = { kind: 'date' } as const satisfies ParamRule
export const TEXT_PARAM = { kind: 'text' } as const satisfies ParamRule
/** `true` or `false`, written so; anything else is a 422 (C18 `paused`). */
export const BOOLEAN_PARAM = { kind: 'boolean' } as const satisfies ParamRule
export const oneOf = (values: readonly string[]) => ({ kind: 'one_of', values }) as const satisfies ParamRule

type ParamValue<R extends ParamRule> = R extends { kind: 'id' } ? number : R extends { kind: 'boolean' } ? boolean : string

export type ListQuery<S extends Record<string, ParamRule>> = {
  readonly after: number
  readonly limit: number
} & { readonly [K in keyof S]: ParamValue<S[K]> | undefined }

export const DEFAULT_LIMIT = 25
export const MAX_LIMIT = 100

/** An integer as a query string writes it; `1.5`, `1e3`, ` 7` and `abc` are not numbers. */
function integerParam(raw: string, name: string, errors: FieldErrors): number | undefined {
  if (!/^-?\d{1,15}$/.test(raw)) return errors.add(name, 'not_a_number')
  return Number(raw)
}

function readParam(raw: string, name: string, rule: ParamRule, errors: FieldErrors): number | string | boolean | undefined {
  switch (rule.kind) {
    case 'id': {
      const n = integerParam(raw, name, errors)
      return n !== undefined && n < 1 ? errors.add(name, 'greater_than_0') : n
    }
    case 'date':
      return isDate(raw) ? raw : errors.add(name, 'invalid_date')
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : errors.add(name, 'inclusion')
    case 'one_of':
      return rule.values.includes(raw) ? raw : errors.add(name, 'inclusion')
    case 'text':
      return acceptableText(raw, name, errors) ? raw : undefined
  }
}

/**
 * The one reader of every admin list's query (C13): `after` and `limit` (keyset paging), then the
 * list's own filters as `filters` names them. A malformed value is a 422 naming every bad
 * parameter at once, never a silent default (the customer API's lenient C3 paging lives in
 * src/api/kit/params.ts and does not come here). Names not in `filters` are ignored, and an
 * empty value counts as absent: an HTML form sends its blank fields as `name=`.
 */
export function readListQuery<S extends Record<string, ParamRule>>(query: URLSearchParams, filters: S): ListQuery<S> {
  return readQuery(query, filters, true) as ListQuery<S>
}

/**
 * The query of an export (C18): the list's `after` and filters, read as strictly as the list
 * reads them. No `limit`: an export is every row from `after` on, so `limit` is no parameter of
 * it (ignored, as any unknown name is).
 */
export function readExportQuery<S extends Record<string, ParamRule>>(query: URLSearchParams, filters: S): Omit<ListQuery<S>, 'limit'> {
  return readQuery(query, filters, false)
}

function readQuery<S extends Record<string, ParamRule>>(query: URLSearchParams, filters: S, paged: boolean): Omit<ListQuery<S>, 'limit'> & { limit?: number } {
  const errors = new FieldErrors()
  const given = (name: string): string | undefined => {
    const raw = query.get(name)
    return raw === null || raw === '' ? undefined : raw
  }
  const afterRaw = given('after')
  let after = afterRaw === undefined ? 0 : integerParam(afterRaw, 'after', errors)
  if (after !== undefined && after < 0) after = errors.add('after', 'greater_than_or_equal_to_0')
  const limitRaw = paged ? given('limit') : undefined
  let limit = limitRaw === undefined ? DEFAULT_LIMIT : integerParam(limitRaw, 'limit', errors)
  if (limit !== undefined && (limit < 1 || limit > MAX_LIMIT)) limit = errors.add('limit', 'between_1_and', MAX_LIMIT)
  const out: Record<string, number | string | boolean | undefined> = {}
  for (const [name, rule] of Object.entries(filters)) {
    const raw = given(name)
    out[name] = raw === undefined ? undefined : readParam(raw, name, rule, errors)
  }
  check(errors)
  return { ...out, after: after as number, ...(paged ? { limit: limit as number } : {}) } as Omit<ListQuery<S>, 'limit'> & { limit?: number }
}
