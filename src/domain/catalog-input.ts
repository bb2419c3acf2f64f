import { currencyCode } from './currency.ts'
import { isRecord, type FieldErrors } from './field-errors.ts'
import { parseAmount, parsePercent } from './money.ts'

/**
 * A catalog item's money as the admin sends it (C16): `prices`, an object of currency code →
 * amount string, merged by currency into what the item has (`null` as an amount removes that
 * currency; `null` for the whole object removes them all, as `null` removes an address), and
 * `discount_percent`, "0"…"100" with at most 2 decimals (`null` is no discount). Absent fields
 * change nothing. Errors use C16's keys: `prices.USD`, `prices` (an unknown currency), `discount_percent`.
 */
export function readPrices(raw: unknown, current: Readonly<Record<string, string>>, errors: FieldErrors): Map<string, bigint | null> {
  const out = new Map<string, bigint | null>()
  if (raw === undefined) return out
  if (raw === null) {
    for (const code of Object.keys(current)) out.set(code, null)
    return out
  }
  if (!isRecord(raw)) {
    errors.add('prices', 'invalid')
    return out
  }
  for (const [key, value] of Object.entries(raw)) {
    const code = currencyCode(key)
    if (code === undefined) {
      errors.add('prices', 'unknown_currency', key)
      continue
    }
    if (value === null) {
      out.set(code, null)
      continue
    }
    const minor = parseAmount(value, code)
    if (minor === undefined) errors.add(`prices.${code}`, 'invalid_amount')
    else out.set(code, minor)
  }
  return out
}

/** The discount in basis points: `fallback` when absent (or blank, as a form sends an empty field), 0 for null. */
export function readDiscount(raw: unknown, fallback: number, errors: FieldErrors): number {
  if (raw === undefined || raw === '') return fallback
  if (raw === null) return 0
  const read = parsePercent(raw)
  if ('problem' in read) {
    errors.add('discount_percent', read.problem)
    return fallback
  }
  return read.basisPoints
}
