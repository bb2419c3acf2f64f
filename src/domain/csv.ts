/**
 * CSV as RFC 4180 writes it, for the admin exports (C18): fields separated by commas, records
 * ended by CRLF, a field quoted when it holds a comma, a quote, CR or LF, a quote inside doubled.
 * A text cell that a spreadsheet would run as a formula (it begins with `=`, `+`, `-` or `@`, or
 * with a tab or CR, which some spreadsheets skip before looking) gets a `'` in front (OWASP's
 * "CSV injection"); numbers are written as they are, since no number is a formula.
 */

/** A decimal written as it is (C16 money, `-4.50`): a number, never guarded as text would be. */
export interface Decimal {
  readonly decimal: string
}

export type Cell = string | number | boolean | null | Decimal

/** One column of an export: its header and how a row fills it. Adding a column is one line. */
export type Column<R> = readonly [header: string, value: (row: R) => Cell]

const NEEDS_QUOTES = /[",\r\n]/
const FORMULA_START = /^[=+\-@\t\r]/
const DECIMAL = /^-?\d+(?:\.\d+)?$/

export function csvCell(value: Cell): string {
  if (value === null) return ''
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : ''
  if (typeof value === 'boolean') return value ? 'true' : 'false'
  if (typeof value === 'object' && DECIMAL.test(value.decimal)) return value.decimal
  const text = typeof value === 'object' ? value.decimal : value
  const safe = FORMULA_START.test(text) ? `'${text}` : text
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe
}

/** The header record of `columns`. */
export function csvHeader<R>(columns: readonly Column<R>[]): string {
  return columns.map(([header]) => csvCell(header)).join(',') + '\r\n'
}

/** The records of `rows`, each ended by CRLF. */
export function csvRecords<R>(columns: readonly Column<R>[], rows: readonly R[]): string {
  let out = ''
  for (const row of rows) {
    let line = ''
    for (let i = 0; i < columns.length; i++) line += (i === 0 ? '' : ',') + csvCell((columns[i] as Column<R>)[1](row))
    out += line + '\r\n'
  }
  return out
}
