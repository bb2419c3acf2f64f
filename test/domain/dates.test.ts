import { test } from 'node:test'
import assert from 'node:assert/strict'
import {
  addDays, addInterval, dateIn, dayOf, daysBetween, daysInMonth, firstOccurrenceAfter, isDate, isIntervalUnit, type IntervalUnit,
} from '../../src/domain/dates.ts'
import { MAX_INTERVAL } from '../../src/domain/subscription-input.ts'
import { prng } from '../helpers/prng.ts'

// ---- an independent oracle: civil date <-> day number (H. Hinnant's algorithm), no Date object ----

function leap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0
}
function monthLength(y: number, m: number): number {
  return [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] as number
}
function dayNumber(y: number, m: number, d: number): number {
  const yy = m <= 2 ? y - 1 : y
  const era = Math.floor(yy / 400)
  const yoe = yy - era * 400
  const doy = Math.floor((153 * (m > 2 ? m - 3 : m + 9) + 2) / 5) + d - 1
  return era * 146097 + yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy
}
function fromDayNumber(n: number): string {
  const era = Math.floor(n / 146097)
  const doe = n - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return ymd(yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
}
function ymd(y: number, m: number, d: number): string {
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`
}
function split(date: string): [number, number, number] {
  return [Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10))]
}

/** The n-th occurrence computed directly, from the definition of C8 (anchor day cut to the month). */
function nthDirect(start: string, anchor: number, length: number, unit: IntervalUnit, n: number): string {
  const [y, m, d] = split(start)
  if (unit === 'day' || unit === 'week') return fromDayNumber(dayNumber(y, m, d) + n * length * (unit === 'week' ? 7 : 1))
  const months = unit === 'month' ? n * length : n * length * 12
  const total = y * 12 + (m - 1) + months
  const year = Math.floor(total / 12)
  const month = (total % 12) + 1
  return ymd(year, month, Math.min(anchor, monthLength(year, month)))
}

const UNITS: readonly IntervalUnit[] = ['day', 'week', 'month', 'year']

interface Case {
  start: string
  anchor: number
  length: number
  unit: IntervalUnit
  n: number
}

/** Random (anchor, start on that anchor, interval, n), with month ends drawn often: they are where drift hides. */
function randomCase(rand: () => number): Case {
  const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1))
  const unit = UNITS[int(0, 3)] as IntervalUnit
  const anchor = rand() < 0.5 ? int(28, 31) : int(1, 31)
  const year = int(1, 7000)
  const month = rand() < 0.3 ? 2 : int(1, 12)
  const start = ymd(year, month, Math.min(anchor, monthLength(year, month)))
  const small = rand() < 0.7
  const length = small ? int(1, 3) : int(1, MAX_INTERVAL[unit])
  const n = int(0, small ? 60 : 12)
  return { start, anchor: unit === 'day' || unit === 'week' ? dayOf(start) : anchor, length, unit, n }
}

const CASES = 20_000

test(`property: for ${CASES} random (anchor date, interval, n) the n-th occurrence step by step equals the direct one, keeps the anchor day and exists`, (t) => {
  const rand = prng(0x5eed_2026)
  let steps = 0
  for (let i = 0; i < CASES; i++) {
    const c = randomCase(rand)
    const label = JSON.stringify(c)
    let date = c.start
    for (let k = 1; k <= c.n; k++) {
      const next = addInterval(date, c.length, c.unit, c.anchor)
      steps++
      assert.ok(isDate(next), `${label}: step ${k} gave ${next}, which is not a calendar date`)
      assert.ok(next > date, `${label}: step ${k} did not move forward`)
      if (c.unit === 'month' || c.unit === 'year') {
        const [y, m] = split(next)
        // Never drifts: the day is the anchor, or the month's last day when the month is shorter.
        assert.equal(dayOf(next), Math.min(c.anchor, monthLength(y, m)), `${label}: step ${k} drifted to ${next}`)
      } else {
        // Days and weeks are exact.
        assert.equal(daysBetween(date, next), c.length * (c.unit === 'week' ? 7 : 1), `${label}: step ${k}`)
      }
      date = next
    }
    const direct = nthDirect(c.start, c.anchor, c.length, c.unit, c.n)
    assert.equal(date, direct, `${label}: step by step ${date}, directly ${direct}`)
    assert.equal(addInterval(c.start, c.n * c.length, c.unit, c.anchor), direct, `${label}: addInterval with n × length`)
  }
  // The closing note reports this: how much was checked.
  assert.ok(steps > 100_000, `only ${steps} steps`)
  t.diagnostic(`${CASES} cases, ${steps} interval steps checked`)
})

test('property: firstOccurrenceAfter is the first occurrence of the series strictly after today (missed periods collapse)', () => {
  const rand = prng(0xdead_beef)
  for (let i = 0; i < 5_000; i++) {
    const c = randomCase(rand)
    const length = Math.min(c.length, c.unit === 'day' ? 40 : c.unit === 'week' ? 8 : c.unit === 'month' ? 6 : 2)
    const [y, m, d] = split(c.start)
    const today = fromDayNumber(dayNumber(y, m, d) + Math.floor(rand() * 800) - 100)
    const label = JSON.stringify({ ...c, length, today })
    let expected = c.start
    while (expected <= today) expected = addInterval(expected, length, c.unit, c.anchor)
    assert.equal(firstOccurrenceAfter(c.start, today, length, c.unit, c.anchor), expected, label)
  }
})

test('monthly on the 31st: Jan 31 → Feb 28 (29 in leap years) → Mar 31 → Apr 30 → May 31', () => {
  const series = (start: string, n: number): string[] => {
    const out = [start]
    for (let i = 0; i < n; i++) out.push(addInterval(out[out.length - 1] as string, 1, 'month', 31))
    return out
  }
  assert.deepEqual(series('2026-01-31', 4), ['2026-01-31', '2026-02-28', '2026-03-31', '2026-04-30', '2026-05-31'])
  assert.deepEqual(series('2028-01-31', 2), ['2028-01-31', '2028-02-29', '2028-03-31'])
  // Without the anchor the day of the given date is used: from Feb 28 that is the 28th.
  assert.equal(addInterval('2026-02-28', 1, 'month'), '2026-03-28')
  assert.equal(addInterval('2026-11-30', 3, 'month', 31), '2027-02-28')
  assert.equal(addInterval('2026-12-31', 1, 'month', 31), '2027-01-31')
  assert.equal(addInterval('2026-01-30', 1, 'month', 30), '2026-02-28')
  assert.equal(addInterval('2026-02-28', 1, 'month', 30), '2026-03-30')
})

test('yearly on Feb 29: → Feb 28 in common years → Feb 29 in the next leap year; 1900 is not leap, 2000 is', () => {
  const out = ['2024-02-29']
  for (let i = 0; i < 4; i++) out.push(addInterval(out[out.length - 1] as string, 1, 'year', 29))
  assert.deepEqual(out, ['2024-02-29', '2025-02-28', '2026-02-28', '2027-02-28', '2028-02-29'])
  assert.equal(addInterval('1896-02-29', 4, 'year', 29), '1900-02-28')
  assert.equal(addInterval('1996-02-29', 4, 'year', 29), '2000-02-29')
  assert.equal(addInterval('2024-02-29', 2, 'year', 29), '2026-02-28')
})

test('days and weeks are exact, across month, year, leap day and DST boundaries', () => {
  assert.equal(addInterval('2026-01-31', 1, 'day'), '2026-02-01')
  assert.equal(addInterval('2028-02-28', 1, 'day'), '2028-02-29')
  assert.equal(addInterval('2026-12-31', 1, 'day'), '2027-01-01')
  assert.equal(addInterval('2026-03-07', 1, 'week'), '2026-03-14') // US DST starts 2026-03-08
  assert.equal(addInterval('2026-10-24', 2, 'week'), '2026-11-07') // EU DST ends 2026-10-25
  assert.equal(addInterval('2026-01-01', 3650, 'day'), '2035-12-30')
  assert.equal(addInterval('2026-01-01', 520, 'week'), '2035-12-20')
  assert.equal(addDays('2026-03-01', -1), '2026-02-28')
  assert.equal(daysBetween('2026-01-01', '2027-01-01'), 365)
  assert.equal(daysBetween('2028-01-01', '2027-01-01'), -365)
  // Years below 100 are real years too (Date.UTC would read them as 19xx).
  assert.equal(addDays('0050-02-28', 1), '0050-03-01')
  assert.equal(daysBetween('0099-12-31', '0100-01-01'), 1)
})

test('isDate accepts only real calendar dates written YYYY-MM-DD', () => {
  for (const good of ['2026-01-31', '2024-02-29', '2000-02-29', '0001-01-01', '9999-12-31']) assert.equal(isDate(good), true, good)
  for (const bad of ['2026-02-29', '1900-02-29', '2026-04-31', '2026-13-01', '2026-00-10', '2026-01-00', '0000-01-01', '2026-1-31',
    '2026-01-31T00:00:00Z', ' 2026-01-31', '20260131', '', null, undefined, 20260131, ['2026-01-31']]) {
    assert.equal(isDate(bad), false, String(bad))
  }
  assert.equal(daysInMonth(2026, 2), 28)
  assert.equal(daysInMonth(2400, 2), 29)
  assert.equal(isIntervalUnit('month'), true)
  assert.equal(isIntervalUnit('months'), false)
})

test('dateIn: "today" is the calendar date in the configured time zone', () => {
  const instant = new Date('2026-03-01T03:00:00.000Z')
  assert.equal(dateIn('UTC', instant), '2026-03-01')
  assert.equal(dateIn('America/New_York', instant), '2026-02-28')
  assert.equal(dateIn('Asia/Tokyo', instant), '2026-03-01')
  assert.equal(dateIn('Pacific/Kiritimati', new Date('2026-12-31T10:00:00.000Z')), '2027-01-01') // UTC+14
  assert.equal(dateIn('Pacific/Pago_Pago', new Date('2027-01-01T10:00:00.000Z')), '2026-12-31') // UTC−11
  // Around the US DST switch (2026-03-08 02:00 EST → 03:00 EDT).
  assert.equal(dateIn('America/New_York', new Date('2026-03-08T04:59:00.000Z')), '2026-03-07')
  assert.equal(dateIn('America/New_York', new Date('2026-03-08T05:00:00.000Z')), '2026-03-08')
  assert.equal(dateIn('America/New_York', new Date('2026-11-02T04:30:00.000Z')), '2026-11-01') // 23:30 EST
})
