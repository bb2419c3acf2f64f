import type { IntervalUnit } from './dates.ts'
import { formatAmount } from './money.ts'

/**
 * The arithmetic of C16's reports. Monthly recurring value: each subscription's total times the
 * months its interval covers once (day: 30.4375 / length, week: 30.4375 / (7 × length), month:
 * 1 / length, year: 1 / (12 × length)), summed exactly as fractions of minor units and rounded
 * half-up once, at the end. Churn: canceled ÷ active at the start of the month, 4 decimals.
 */

/** At most this many months in one monthly report (C16). */
export const MAX_REPORT_MONTHS = 36

/** Months per interval as a fraction [numerator, denominator]: 30.4375 days a month is 487/16. */
export function monthsPerInterval(units: IntervalUnit, length: number): readonly [bigint, bigint] {
  const n = BigInt(length)
  switch (units) {
    case 'day': return [487n, 16n * n]
    case 'week': return [487n, 112n * n]
    case 'month': return [1n, n]
    case 'year': return [1n, 12n * n]
  }
}

const gcd = (a: bigint, b: bigint): bigint => {
  let [x, y] = [a < 0n ? -a : a, b]
  while (y !== 0n) [x, y] = [y, x % y]
  return x
}

/** Σ total × months-per-interval over the groups, exact, rounded half-up to the minor unit once; C16's string. */
export function monthlyRecurringValue(groups: readonly { readonly units: IntervalUnit; readonly length: number; readonly total_minor: bigint }[], currency: string): string {
  let num = 0n
  let den = 1n
  for (const g of groups) {
    const [n, d] = monthsPerInterval(g.units, g.length)
    num = num * d + g.total_minor * n * den
    den *= d
    const k = gcd(num, den)
    if (k > 1n) {
      num /= k
      den /= k
    }
  }
  // Half-up for a non-negative value: floor(num / den + 1/2).
  return formatAmount((2n * num + den) / (2n * den), currency)
}

/** canceled ÷ active at the start, as a decimal string with 4 decimals rounded half-up; null when none was active. */
export function churnRate(canceled: number, activeAtStart: number): string | null {
  if (activeAtStart <= 0) return null
  const q = (BigInt(canceled) * 20_000n + BigInt(activeAtStart)) / (2n * BigInt(activeAtStart))
  return `${q / 10_000n}.${(q % 10_000n).toString().padStart(4, '0')}`
}

/** A month as C16 writes it, `YYYY-MM` (UTC), or undefined. */
export function readMonth(value: unknown): string | undefined {
  if (typeof value !== 'string' || !/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) return undefined
  return value
}

/** The month `n` months after `month` (before, for a negative n). */
export function addMonths(month: string, n: number): string {
  const index = Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1 + n
  return `${String(Math.floor(index / 12)).padStart(4, '0')}-${String((index % 12) + 1).padStart(2, '0')}`
}

/** How many months `from` through `to` are, both counted. */
export function monthsBetween(from: string, to: string): number {
  return (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5, 7)) - Number(from.slice(5, 7)) + 1
}
