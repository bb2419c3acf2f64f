import type { Language } from '../messages.ts'

/**
 * Dates, times and amounts as each language writes them (Intl, so the binary carries no tables
 * of its own). A calendar date is a day, never shifted by a time zone; an instant is shown in
 * the service's zone (REPLENISH_TIME_ZONE), with the zone named. Formatters are made once per
 * language (and zone, or currency) and kept: making one costs more than rendering a whole mail.
 */
const formatters = new Map<string, Intl.DateTimeFormat | Intl.NumberFormat>()

function formatter<F extends Intl.DateTimeFormat | Intl.NumberFormat>(key: string, make: () => F): F {
  let f = formatters.get(key) as F | undefined
  if (!f) formatters.set(key, (f = make()))
  return f
}

const day = (date: string): Date => new Date(`${date}T00:00:00Z`)

/** `Friday, March 14` / `viernes, 14 de marzo`: short enough for a subject line. */
export function formatDay(date: string, language: Language): string {
  return formatter(`day|${language}`, () => new Intl.DateTimeFormat(language, { weekday: 'long', month: 'long', day: 'numeric', timeZone: 'UTC' }))
    .format(day(date))
}

/** `Friday, March 14, 2026` / `Freitag, 14. März 2026`. */
export function formatDate(date: string, language: Language): string {
  return formatter(`date|${language}`, () => new Intl.DateTimeFormat(language, { weekday: 'long', year: 'numeric', month: 'long', day: 'numeric', timeZone: 'UTC' }))
    .format(day(date))
}

/** `March 17, 2026 at 10:00 AM UTC` / `17 mars 2026 à 10:00 UTC`. */
export function formatInstant(iso: string, language: Language, timeZone: string): string {
  return formatter(`instant|${language}|${timeZone}`, () => new Intl.DateTimeFormat(language, {
    year: 'numeric', month: 'long', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short', timeZone,
  })).format(new Date(iso))
}

/**
 * A C16 amount (a decimal string with the currency's digits, `"12.50"`) as money: `$12.50`,
 * `12,50 €`. Only shown, never computed with, so a double is exact enough for any amount C16
 * allows (at most 1,000,000 per unit).
 */
export function formatMoney(amount: string, currency: string, language: Language): string {
  try {
    return formatter(`money|${language}|${currency}`, () => new Intl.NumberFormat(language, { style: 'currency', currency })).format(Number(amount))
  } catch {
    return `${amount} ${currency}`
  }
}
