import { FieldErrors, ValidationFailed, readId } from '../domain/field-errors.ts'

/** Small readers for admin bodies; each adds a C4 message to `errors` and answers undefined on failure. */
export function requiredString(attrs: Record<string, unknown>, field: string, errors: FieldErrors, max = 255): string | undefined {
  const v = attrs[field]
  if (v === undefined || v === null || (typeof v === 'string' && v.trim() === '')) return errors.add(field, 'blank')
  if (typeof v !== 'string' && typeof v !== 'number') return errors.add(field, 'invalid')
  const s = String(v).trim()
  if (s.length > max) return errors.add(field, 'too_long', max)
  return s
}

export function optionalString(attrs: Record<string, unknown>, field: string, errors: FieldErrors, max = 255): string | null {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return null
  if (typeof v !== 'string' && typeof v !== 'number') return errors.add(field, 'invalid') ?? null
  const s = String(v).trim()
  if (s.length > max) return errors.add(field, 'too_long', max) ?? null
  return s
}

export function optionalBoolean(attrs: Record<string, unknown>, field: string, fallback: boolean, errors: FieldErrors): boolean {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return fallback
  if (v === true || v === 'true' || v === '1' || v === 1) return true
  if (v === false || v === 'false' || v === '0' || v === 0) return false
  errors.add(field, 'inclusion')
  return fallback
}

export function optionalInteger(attrs: Record<string, unknown>, field: string, errors: FieldErrors): number | null {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return null
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v
  if (typeof v === 'string' && /^\d{1,9}$/.test(v)) return Number(v)
  return errors.add(field, 'not_a_number') ?? null
}

export function requiredId(attrs: Record<string, unknown>, field: string, errors: FieldErrors): number | undefined {
  const v = attrs[field]
  if (v === undefined || v === null || v === '') return errors.add(field, 'blank')
  return readId(v) ?? errors.add(field, 'invalid')
}

export function check(errors: FieldErrors): void {
  if (!errors.empty) throw new ValidationFailed(errors)
}
