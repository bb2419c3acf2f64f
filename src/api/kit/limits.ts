import { HttpError } from '../../http/http-error.ts'
import type { RequestLimits } from './app.ts'

export interface LimitOptions {
  /** Requests per second per key; 0 turns the rate limit off. */
  readonly rate: number
  readonly burst: number
  /** Bad keys per minute from one address before it is refused for a while; 0: off. */
  readonly authFailures: number
  readonly now?: () => number
}

const WINDOW_MS = 60_000
const MAX_TRACKED = 50_000

/**
 * A token bucket per API key (429 with Retry-After when empty), and a failure counter per
 * address so that guessing keys from one place stalls after a few dozen tries (C12).
 */
export function requestLimits(options: LimitOptions): RequestLimits {
  const now = options.now ?? Date.now
  const buckets = new Map<string, { tokens: number; at: number }>()
  const failures = new Map<string, { count: number; since: number }>()

  return {
    take(scope) {
      if (options.rate <= 0) return
      const t = now()
      let b = buckets.get(scope)
      if (!b) {
        if (buckets.size > MAX_TRACKED) buckets.clear()
        b = { tokens: options.burst, at: t }
        buckets.set(scope, b)
      }
      b.tokens = Math.min(options.burst, b.tokens + ((t - b.at) / 1000) * options.rate)
      b.at = t
      if (b.tokens < 1) {
        const wait = Math.max(1, Math.ceil((1 - b.tokens) / options.rate))
        throw new HttpError(429, { error: 'Rate limit exceeded. Try again later.' }, { 'retry-after': String(wait) })
      }
      b.tokens -= 1
    },
    checkAddress(address) {
      if (options.authFailures <= 0) return
      const f = failures.get(address)
      if (!f) return
      const t = now()
      if (t - f.since >= WINDOW_MS) {
        failures.delete(address)
        return
      }
      if (f.count >= options.authFailures) {
        const wait = Math.max(1, Math.ceil((f.since + WINDOW_MS - t) / 1000))
        throw new HttpError(429, { error: 'Too many failed authentication attempts. Try again later.' }, { 'retry-after': String(wait) })
      }
    },
    recordFailure(address) {
      if (options.authFailures <= 0) return
      const t = now()
      const f = failures.get(address)
      if (!f || t - f.since >= WINDOW_MS) {
        if (failures.size > MAX_TRACKED) failures.clear()
        failures.set(address, { count: 1, since: t })
      } else {
        f.count++
      }
    },
  }
}
