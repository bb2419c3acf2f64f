import { codesByDigits } from '../domain/currency.ts'

/**
 * C16's money rendered by the database, in SQL both dialects read alike (SQLite renders the
 * bodies it caches and the snapshots it makes in SQL; PostgreSQL its snapshots), with the
 * arithmetic of src/domain/money.ts: integers in minor units, the discount half-up per line.
 * Every amount here is ≤ 9999 × 10^10 and every product with a discount ≤ 10^18, inside 64 bits.
 */

const list = (codes: readonly string[]): string => codes.map((c) => `'${c}'`).join(', ')

/** The currency's minor unit as a power of ten (JPY 1, USD 100, BHD 1000), from the digits Intl gives each code. */
export function unitOf(currency: string): string {
  const whens = [...codesByDigits()].map(([digits, codes]) => `WHEN ${currency} IN (${list(codes)}) THEN ${10 ** digits}`)
  return `(CASE ${whens.join(' ')} ELSE 100 END)`
}

/** A non-negative amount in minor units as C16's string, given the currency's unit (`unitOf`); null stays null. */
export function moneyText(amount: string, unit: string): string {
  const a = `(${amount})`
  return `(CASE WHEN ${unit} = 1 THEN CAST(${a} AS TEXT)
    ELSE CAST(${a} / ${unit} AS TEXT) || '.' || substr(CAST(${unit} + ${a} % ${unit} AS TEXT), 2) END)`
}

/**
 * SQLite's `moneyText`, with printf (a third cheaper than concatenating, on a million snapshots).
 * `unit` is the currency's minor unit (1, 100, 1000, 10000…); null for no price, which answers null.
 */
export function sqliteMoneyText(amount: string, unit: string): string {
  const a = `(${amount})`
  return `(CASE WHEN ${unit} = 100 THEN printf('%d.%02d', ${a} / 100, ${a} % 100) WHEN ${unit} = 1 THEN printf('%d', ${a})
    WHEN ${unit} = 1000 THEN printf('%d.%03d', ${a} / 1000, ${a} % 1000) WHEN ${unit} > 1000 THEN printf('%d.%0*d', ${a} / ${unit}, length(${unit}) - 1, ${a} % ${unit}) END)`
}

/** The discount on a line amount, half-up to the minor unit (percentOf). */
export const discountOf = (amount: string, bp: string): string => `((${amount}) * (${bp}) + 5000) / 10000`

/**
 * A line item `li` priced as the catalog says now (C16): the catalog item `c` (its discount) and
 * the price `p` in the currency `currency` (a SQL expression), none when the catalog has no
 * price there. Selects `unit_price` (minor units or null) and `discount_bp`.
 */
export const priceJoin = (currency: string): string => `JOIN subscribables c ON c.id = li.subscribable_id
  LEFT JOIN subscribable_prices p ON p.subscribable_id = li.subscribable_id AND p.currency = ${currency}`

/**
 * A sum over the priced lines of one delivery (alias `l`, with `l.unit` null where there is no
 * price) as C16's string: null when any line has no price, zero without lines. The sum is cast
 * back to an integer: PostgreSQL sums bigints as numeric.
 */
export const totalText = (expr: string, unit: string, format = moneyText): string =>
  `CASE WHEN count(l.unit) = count(*) THEN ${format(`CAST(coalesce(sum(${expr}), 0) AS BIGINT)`, unit)} END`
