/** How values of the API are shown: dates, times and money in the page's language, states and units from the catalogues. */
import { formatDate, formatDateTime } from '../lib/format.ts'
import { pluralKey } from '../lib/i18n.ts'
import { lang, t, type Key } from './strings.ts'

export const dash = (): string => t('common.none')

export const day = (date: string | null | undefined): string => (date ? formatDate(date, lang()) : dash())

export const when = (iso: string | null | undefined): string => (iso ? formatDateTime(iso, lang()) : dash())

export const num = (n: number): string => new Intl.NumberFormat(lang()).format(n)

/** A chart's axis date, short (`Nov 25`, `25 nov`, `25.11.`), in UTC as API dates are. */
export const shortDay = (date: string): string =>
  new Intl.DateTimeFormat(lang(), { month: 'short', day: 'numeric', timeZone: 'UTC' }).format(new Date(`${date}T00:00:00Z`))

/** A report's month (`2026-11`) as the language writes it: `Nov 2026`. */
export const month = (ym: string, style: 'short' | 'long' = 'short'): string =>
  new Intl.DateTimeFormat(lang(), { month: style, year: 'numeric', timeZone: 'UTC' }).format(new Date(`${ym}-01T00:00:00Z`))

/**
 * Money (C16) from the API's exact decimal string, in the page's language: `"1234.50"` USD →
 * `$1,234.50`, `1.234,50 $`… The string is formatted as it is (Intl.NumberFormat takes decimal
 * strings exactly): it is never turned into a float, and the page does no arithmetic on money.
 */
export function money(amount: string | null | undefined, currency: string | null | undefined): string {
  if (amount === null || amount === undefined || amount === '') return dash()
  if (!currency) return amount
  try {
    return new Intl.NumberFormat(lang(), { style: 'currency', currency }).format(amount as Intl.StringNumericLiteral)
  } catch {
    return `${amount} ${currency}`
  }
}

/** A rate the API gives as a decimal string (`"0.0250"`) as a percentage: `2.5 %`. Display only. */
export function percentOf(rate: string | null | undefined): string {
  if (rate === null || rate === undefined) return dash()
  return new Intl.NumberFormat(lang(), { style: 'percent', maximumFractionDigits: 2 }).format(rate as Intl.StringNumericLiteral)
}

/**
 * A discount the API gives in percent (`"12.5"`) as the language writes a percentage (`12.5%`,
 * `12,5 %`): the decimal point is moved two places in the text (`"0.125"`), never by arithmetic.
 */
export function discount(percent: string | null | undefined): string {
  if (percent === null || percent === undefined || /^0*(\.0*)?$/.test(percent)) return dash()
  const [whole = '0', fraction = ''] = percent.split('.')
  const padded = whole.padStart(3, '0')
  const rate = `${padded.slice(0, -2)}.${padded.slice(-2)}${fraction}`
  return new Intl.NumberFormat(lang(), { style: 'percent', maximumFractionDigits: 2 }).format(rate as Intl.StringNumericLiteral)
}

/** The catalogue's word for an API value (`state.active`), or the value itself when there is none. */
export function label(prefix: string, value: string): string {
  const key = `${prefix}.${value}` as Key
  const text = t(key)
  return text === key ? value : text
}

/** An event type's name: the shared catalogue's, the dashboard's for the newer ones, else the type itself. */
export function eventName(type: string): string {
  const shared = label('event', type)
  return shared === type ? label('admin.event', type) : shared
}

export function interval(length: number, units: string): string {
  return t(pluralKey(`every.${units}` as 'every.day', length, lang()), { count: length })
}
