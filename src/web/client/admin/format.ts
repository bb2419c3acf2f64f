/** How values of the API are shown: dates and times in the page's language, states and units from the catalogues. */
import { formatDate, formatDateTime } from '../lib/format.ts'
import { pluralKey } from '../lib/i18n.ts'
import { lang, t, type Key } from './strings.ts'

export const dash = (): string => t('common.none')

export const day = (date: string | null | undefined): string => (date ? formatDate(date, lang()) : dash())

export const when = (iso: string | null | undefined): string => (iso ? formatDateTime(iso, lang()) : dash())

export const num = (n: number): string => new Intl.NumberFormat(lang()).format(n)

/** The catalogue's word for an API value (`state.active`), or the value itself when there is none. */
export function label(prefix: string, value: string): string {
  const key = `${prefix}.${value}` as Key
  const text = t(key)
  return text === key ? value : text
}

export function interval(length: number, units: string): string {
  return t(pluralKey(`every.${units}` as 'every.day', length, lang()), { count: length })
}
