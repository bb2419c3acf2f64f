import type { OffsetSegment } from '../store/api.ts'

const MINUTE_MS = 60_000
const DAY_MS = 86_400_000

const formatters = new Map<string, Intl.DateTimeFormat>()

/** The zone's offset from UTC at instant `ms`, in whole minutes (every zone's offset is whole minutes today). */
export function offsetMinutes(timeZone: string, ms: number): number {
  let f = formatters.get(timeZone)
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric',
    })
    formatters.set(timeZone, f)
  }
  const p = Object.fromEntries(f.formatToParts(ms).map((x) => [x.type, Number(x.value)]))
  const local = Date.UTC(p['year'] ?? 0, (p['month'] ?? 1) - 1, p['day'] ?? 1, p['hour'] ?? 0, p['minute'] ?? 0)
  return Math.round((local - Math.floor(ms / MINUTE_MS) * MINUTE_MS) / MINUTE_MS)
}

/**
 * The zone's offsets over [fromMs, toMs]: one segment, or one more per change to or from summer
 * time. Offsets are sampled once a day (zones change at most twice a year, never twice in a day)
 * and a change is found to the minute by bisection: a few dozen formattings for 90 days, so the
 * database can place each timestamp on its local day with a plain shift (overview-store.ts).
 */
export function offsetSegments(timeZone: string, fromMs: number, toMs: number): OffsetSegment[] {
  // Whole minutes at both ends, so the bisection below always has a minute between its bounds.
  const start = Math.floor(fromMs / MINUTE_MS) * MINUTE_MS
  const end = Math.ceil(toMs / MINUTE_MS) * MINUTE_MS
  let current = offsetMinutes(timeZone, start)
  const out: OffsetSegment[] = [{ from: new Date(start).toISOString(), offset_minutes: current }]
  for (let t = start; t < end; t += DAY_MS) {
    const next = Math.min(t + DAY_MS, end)
    const offset = offsetMinutes(timeZone, next)
    if (offset === current) continue
    let lo = t
    let hi = next
    while (hi - lo > MINUTE_MS) {
      const mid = Math.floor((lo + hi) / 2 / MINUTE_MS) * MINUTE_MS
      if (offsetMinutes(timeZone, mid) === current) lo = mid
      else hi = mid
    }
    out.push({ from: new Date(hi).toISOString(), offset_minutes: offset })
    current = offset
  }
  return out
}
