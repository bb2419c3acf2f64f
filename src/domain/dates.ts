/**
 * Calendar dates as `YYYY-MM-DD` strings (they sort as text) and the interval arithmetic of C8:
 * months and years keep the anchor day (Jan 31 → Feb 28/29 → Mar 31), days and weeks are exact.
 * Pure: "today" is always passed in.
 */
export const INTERVAL_UNITS = ['day', 'week', 'month', 'year'] as const
export type IntervalUnit = (typeof INTERVAL_UNITS)[number]

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/
const DAY_MS = 86_400_000

export function isIntervalUnit(value: unknown): value is IntervalUnit {
  return typeof value === 'string' && (INTERVAL_UNITS as readonly string[]).includes(value)
}

/** A real calendar date written as `YYYY-MM-DD` (no 2026-02-30, no 2026-2-3). */
export function isDate(value: unknown): value is string {
  if (typeof value !== 'string') return false
  const m = DATE.exec(value)
  if (!m) return false
  const month = Number(m[2])
  const day = Number(m[3])
  return Number(m[1]) >= 1 && month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(Number(m[1]), month)
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

export function dayOf(date: string): number {
  return Number(date.slice(8, 10))
}

function parts(date: string): [number, number, number] {
  return [Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))]
}

function format(year: number, month: number, day: number): string {
  return `${String(year).padStart(4, '0')}-${month < 10 ? '0' : ''}${month}-${day < 10 ? '0' : ''}${day}`
}

/** Milliseconds of the date's UTC midnight. setUTCFullYear, because Date.UTC maps years 0–99 to 1900–1999. */
function epochMs(date: string): number {
  const [y, m, d] = parts(date)
  const t = new Date(0)
  t.setUTCFullYear(y, m - 1, d)
  return t.getTime()
}

export function addDays(date: string, days: number): string {
  const t = new Date(epochMs(date) + days * DAY_MS)
  return format(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate())
}

/** Days from `a` to `b` (positive when b is later). */
export function daysBetween(a: string, b: string): number {
  return Math.round((epochMs(b) - epochMs(a)) / DAY_MS)
}

/**
 * `date` moved by `length` units. For months and years the day is the anchor day, cut to the
 * month's length, so a plan on the 31st comes back to the 31st after a short month.
 */
export function addInterval(date: string, length: number, unit: IntervalUnit, anchorDay: number = dayOf(date)): string {
  switch (unit) {
    case 'day':
      return addDays(date, length)
    case 'week':
      return addDays(date, 7 * length)
    case 'month': {
      const [y, m] = parts(date)
      const total = y * 12 + (m - 1) + length
      const year = Math.floor(total / 12)
      const month = (total % 12) + 1
      return format(year, month, Math.min(anchorDay, daysInMonth(year, month)))
    }
    case 'year': {
      const [y, m] = parts(date)
      return format(y + length, m, Math.min(anchorDay, daysInMonth(y + length, m)))
    }
  }
}

/** The first occurrence strictly after `today`, stepping from `date` (missed periods collapse into one). */
export function firstOccurrenceAfter(date: string, today: string, length: number, unit: IntervalUnit, anchorDay: number): string {
  let next = date
  if (unit === 'day' || unit === 'week') {
    const step = unit === 'day' ? length : 7 * length
    const behind = daysBetween(next, today)
    if (behind >= 0) next = addDays(next, (Math.floor(behind / step) + 1) * step)
    return next
  }
  while (next <= today) next = addInterval(next, length, unit, anchorDay)
  return next
}

/** The calendar date in `timeZone` at instant `now`. */
export function dateIn(timeZone: string, now: Date): string {
  return formatterFor(timeZone).format(now)
}

const formatters = new Map<string, Intl.DateTimeFormat>()
function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone)
  if (!f) {
    // en-CA formats as YYYY-MM-DD.
    f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' })
    formatters.set(timeZone, f)
  }
  return f
}
