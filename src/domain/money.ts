import { minorDigits } from './currency.ts'

/**
 * Money as C16 writes it: a JSON string with exactly the currency's minor-unit digits ("12.50" in
 * USD, "1250" in JPY, "1.250" in BHD), never a number. Every sum and product here is in integer
 * minor units, as BigInt: 9999 × 1000000.0000 × a discount in basis points passes 2^53, and a
 * float would lose the cent. The SQL that renders bodies and snapshots (src/store/money-sql.ts)
 * does the same arithmetic in 64-bit integers; tests hold the two together.
 */

/** The largest catalog amount, in major units (C16: "above 1000000" is refused). */
export const MAX_AMOUNT = 1_000_000
/** A discount of 100 % in basis points: discounts are kept as hundredths of a percent. */
export const FULL_DISCOUNT = 10_000

const TEN = 10n
const pow10 = (digits: number): bigint => TEN ** BigInt(digits)

/** A plain decimal: digits, then optionally a point and digits. No sign, exponent, space or bare point. */
const DECIMAL = /^(\d+)(?:\.(\d+))?$/

/**
 * An amount a client sent, in minor units, or undefined when it is not one (C16's "is not a valid
 * amount"): not a string (a JSON number is refused: it may already have lost digits), not a plain
 * decimal (`"1e3"`, `"-1"`, `" 5"`, `".5"`), more fraction digits than the currency has, or above
 * 1000000. Fewer fraction digits are fine: `"12.5"` in USD is 1250.
 */
export function parseAmount(value: unknown, currency: string): bigint | undefined {
  if (typeof value !== 'string') return undefined
  const m = DECIMAL.exec(value)
  if (!m) return undefined
  const digits = minorDigits(currency)
  const fraction = m[2] ?? ''
  if (fraction.length > digits) return undefined
  const minor = BigInt(m[1] as string) * pow10(digits) + BigInt(fraction.padEnd(digits, '0') || '0')
  return minor > BigInt(MAX_AMOUNT) * pow10(digits) ? undefined : minor
}

/** The currency's minor unit as a power of ten: 1 for JPY, 100 for USD, 1000 for BHD. */
export function minorUnitOf(currency: string): number {
  return 10 ** minorDigits(currency)
}

/** Minor units as C16's string: exactly the currency's digits after the point (none for JPY). */
export function formatAmount(minor: bigint | number, currency: string): string {
  const digits = minorDigits(currency)
  let n = BigInt(minor)
  const sign = n < 0n ? '-' : ''
  if (n < 0n) n = -n
  if (digits === 0) return sign + n.toString()
  const unit = pow10(digits)
  return `${sign}${n / unit}.${(n % unit).toString().padStart(digits, '0')}`
}

/** `quantity × unit`, exactly. */
export function multiply(unit: bigint, quantity: number): bigint {
  return unit * BigInt(quantity)
}

/** `basisPoints` hundredths of a percent of `amount`, rounded half-up to the minor unit (amounts are never negative). */
export function percentOf(amount: bigint, basisPoints: number): bigint {
  return (amount * BigInt(basisPoints) + BigInt(FULL_DISCOUNT / 2)) / BigInt(FULL_DISCOUNT)
}

/** Why a discount is refused, as a message key of messages.ts. */
export type PercentProblem = 'not_a_number' | 'percent_decimals' | 'between_0_and_100'

/**
 * A discount percent (C16: "0"…"100", at most 2 decimals) in basis points, or the problem. A JSON
 * number is read as the decimal it prints as (10 → "10"); a decimal string is read exactly.
 */
export function parsePercent(value: unknown): { basisPoints: number } | { problem: PercentProblem } {
  const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value
  if (typeof text !== 'string') return { problem: 'not_a_number' }
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text)
  if (!m) return { problem: 'not_a_number' }
  const fraction = m[3] ?? ''
  if (fraction.length > 2) return { problem: 'percent_decimals' }
  const whole = (m[2] as string).replace(/^0+(?=\d)/, '')
  if (m[1] === '-' || whole.length > 3) return { problem: 'between_0_and_100' }
  const basisPoints = Number(whole) * 100 + Number(fraction.padEnd(2, '0'))
  return basisPoints > FULL_DISCOUNT ? { problem: 'between_0_and_100' } : { basisPoints }
}

/** Basis points as C16's decimal string, without trailing zeros: 1250 → "12.5", 1000 → "10", 5 → "0.05". */
export function formatPercent(basisPoints: number): string {
  const whole = Math.trunc(basisPoints / 100)
  const cents = basisPoints % 100
  if (cents === 0) return String(whole)
  return cents % 10 === 0 ? `${whole}.${cents / 10}` : `${whole}.${String(cents).padStart(2, '0')}`
}

/** What a line costs, in minor units: its amount (quantity × price) and its discount; null without a price. */
export interface LineCost {
  readonly amount: bigint | null
  readonly discount: bigint | null
}

/** A line's C16 fields: the unit `price`, the item's `discount_percent`, and the line's `total`. */
export interface LineMoney {
  readonly price: string | null
  readonly discount_percent: string
  readonly total: string | null
}

/** A line of `quantity` at `unit` (minor units, or null when the catalog has no price) less `basisPoints`: its cost. */
export function costOf(quantity: number, unit: bigint | number | null, basisPoints: number): LineCost {
  if (unit === null) return { amount: null, discount: null }
  const amount = multiply(BigInt(unit), quantity)
  return { amount, discount: percentOf(amount, basisPoints) }
}

/** The line's C16 fields, the discount rounded half-up on the line (not per unit). */
export function lineMoney(quantity: number, unit: bigint | number | null, basisPoints: number, currency: string): LineMoney {
  const { amount, discount } = costOf(quantity, unit, basisPoints)
  return {
    price: unit === null ? null : formatAmount(unit, currency),
    discount_percent: formatPercent(basisPoints),
    total: amount === null || discount === null ? null : formatAmount(amount - discount, currency),
  }
}

/** A subscription's (or installment's) C16 totals. */
export interface Totals {
  readonly subtotal: string | null
  readonly discount_total: string | null
  readonly total: string | null
}

/** Σ amounts, Σ discounts, and their difference; all null when any line has no price (no lines: all zero). */
export function totalsOf(lines: readonly LineCost[], currency: string): Totals {
  let subtotal = 0n
  let discounts = 0n
  for (const line of lines) {
    if (line.amount === null || line.discount === null) return { subtotal: null, discount_total: null, total: null }
    subtotal += line.amount
    discounts += line.discount
  }
  return { subtotal: formatAmount(subtotal, currency), discount_total: formatAmount(discounts, currency), total: formatAmount(subtotal - discounts, currency) }
}

/** Minor units of an amount string this service wrote (exactly the currency's digits), or null for null. */
export function minorOf(amount: string | null): bigint | null {
  return amount === null ? null : BigInt(amount.replace('.', ''))
}

/** Basis points of a percent string this service wrote (formatPercent's). */
export function basisPointsOf(percent: string): number {
  const read = parsePercent(percent)
  if ('problem' in read) throw new Error(`not a stored discount: ${percent}`)
  return read.basisPoints
}
