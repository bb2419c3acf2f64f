/** Dates as the page's language writes them. API dates are calendar dates: shown in UTC so they never shift a day. */
export function formatDate(date: string, language: string): string {
  const d = new Date(`${date}T00:00:00Z`)
  return Number.isNaN(d.getTime()) ? date : new Intl.DateTimeFormat(language, { dateStyle: 'long', timeZone: 'UTC' }).format(d)
}

/** A timestamp (`2026-11-22T04:00:00.000Z`) in the browser's own time zone. */
export function formatDateTime(iso: string, language: string): string {
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : new Intl.DateTimeFormat(language, { dateStyle: 'medium', timeStyle: 'short' }).format(d)
}

/** `YYYY-MM-DD` plus `days`, for date inputs' `min`. */
export function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`)
  d.setUTCDate(d.getUTCDate() + days)
  return d.toISOString().slice(0, 10)
}

/**
 * A C16 amount (an exact decimal string, `"12.50"`) in its currency as the page's language writes
 * it. The string goes to Intl as it is, so no float ever rounds it.
 */
export function formatMoney(amount: string, currency: string, language: string): string {
  try {
    return new Intl.NumberFormat(language, { style: 'currency', currency }).format(amount as `${number}`)
  } catch {
    return `${amount} ${currency}`
  }
}

/** A C16 discount percent (`"12.5"`) as the language writes a percentage: "12.5%", "12,5 %". */
export function formatPercent(percent: string, language: string): string {
  return new Intl.NumberFormat(language, { style: 'percent', maximumFractionDigits: 2 }).format(Number(percent) / 100)
}
