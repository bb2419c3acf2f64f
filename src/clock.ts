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
    return { now: real, today: () => dateIn(timeZone, real()) }
  }
  return {
    now: () => {
      const t = real()
      return new Date(`${fixedToday}T${t.toISOString().slice(11)}`)
    },
    today: () => fixedToday,
  }
}
