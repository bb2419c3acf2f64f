import { ADDRESS_FIELDS, type Address } from './types.ts'
import { acceptableText, isRecord, type FieldErrors } from './field-errors.ts'

const REQUIRED = ['firstname', 'address1', 'city', 'zipcode', 'country_iso'] as const
const MAX_LENGTH = 255

/**
 * `shipping_address_attributes` / `billing_address_attributes` (C4). Given fields are merged
 * over the stored address (Rails nested attributes update in place); `null` removes it;
 * absent leaves it as it is (`undefined`).
 */
export function readAddress(
  raw: unknown,
  prefix: 'shipping_address' | 'billing_address',
  current: Address | null,
  errors: FieldErrors,
): Address | null | undefined {
  if (raw === undefined) return undefined
  if (raw === null || raw === '') return null
  if (!isRecord(raw)) return errors.add(prefix, 'invalid')
  const out = {} as Address
  const invalid = new Set<string>()
  for (const field of ADDRESS_FIELDS) {
    const given = raw[field]
    let value: string | null
    if (given === undefined) value = current?.[field] ?? null
    else if (given === null) value = null
    else if (typeof given === 'string') value = given.trim()
    else if (typeof given === 'number' && Number.isFinite(given)) value = String(given)
    else {
      errors.add(`${prefix}.${field}`, 'invalid')
      invalid.add(field)
      continue
    }
    if (value !== null && value.length === 0) value = null
    if (value !== null && value.length > MAX_LENGTH) errors.add(`${prefix}.${field}`, 'too_long', MAX_LENGTH)
    else if (value !== null && !acceptableText(value, `${prefix}.${field}`, errors)) invalid.add(field)
    out[field] = value
  }
  // A field already refused as invalid is not also reported blank: one reason per field is clearer.
  for (const field of REQUIRED) if (!invalid.has(field) && (out[field] === null || out[field] === undefined)) errors.add(`${prefix}.${field}`, 'blank')
  const country = out.country_iso
  if (country) {
    if (/^[A-Za-z]{2}$/.test(country)) out.country_iso = country.toUpperCase()
    else errors.add(`${prefix}.country_iso`, 'invalid')
  }
  return out
}
