import { dateIn } from './domain/dates.ts'

/**
 * The service clock of C8: real time, or with REPLENISH_TODAY that date at the real time of
 * day. `today()` is the date in the configured zone (or REPLENISH_TODAY itself). Record
 * timestamps do not come from here: they are always real time.
 */
export interface Clock {
  now(): Date
  today(): string
}

export function serviceClock(timeZone: string, fixedToday: string | undefined, real: () => Date = () => new Date()): Clock {
  if (fixedToday === undefined) {
    // The date in a zone costs an Intl formatting (2 µs, every write asks). Midnight falls on a
    // whole second in every zone (offsets are whole seconds), so one answer per second is exact.
    let second = Number.NaN
    let date = ''
    return {
      now: real,
      today: () => {
        const t = real()
        const s = Math.floor(t.getTime() / 1000)
        if (s !== second) {
          second = s
          date = dateIn(timeZone, t)
        }
        return date
      },
    }
  }
  return {
    now: () => {
      const t = real()
      return new Date(`${fixedToday}T${t.toISOString().slice(11)}`)
    },
    today: () => fixedToday,
  }
}
