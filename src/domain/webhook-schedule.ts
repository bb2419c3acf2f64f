/**
 * When a webhook delivery is tried again (C10): the first retry after the base delay
 * (`REPLENISH_WEBHOOK_RETRY_BASE_SECONDS`, default 10 s), then six times longer each time, each
 * delay drawn within ±20 % of its nominal value so that a receiver back from an outage is not
 * met by every retry at once, capped at 24 h; a delivery still not accepted 3 days after its event
 * is failed. Pure: the caller supplies the time and the random draw.
 */

/** A receiver has this long to answer with a 2xx (C10). */
export const DELIVERY_TIMEOUT_MS = 10_000
export const RETRY_GROWTH = 6
export const RETRY_JITTER = 0.2
export const MAX_RETRY_DELAY_MS = 24 * 60 * 60 * 1000
export const RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000

/**
 * The delay before the retry that follows the `failures`-th failed scheduled attempt (1 for the
 * first). `random` is a draw in [0, 1): 0.5 gives the nominal delay.
 */
export function retryDelayMs(failures: number, baseSeconds: number, random: number): number {
  const nominal = Math.min(baseSeconds * 1000 * RETRY_GROWTH ** (failures - 1), MAX_RETRY_DELAY_MS)
  const jittered = nominal * (1 - RETRY_JITTER + 2 * RETRY_JITTER * random)
  return Math.round(Math.min(jittered, MAX_RETRY_DELAY_MS))
}

export type AfterFailure = { readonly state: 'pending'; readonly dueMs: number } | { readonly state: 'failed' }

/**
 * What becomes of a delivery whose scheduled attempt just failed: another attempt at `dueMs`, or,
 * when that would fall more than `windowMs` after the delivery was made, failed now.
 */
export function afterFailure(o: {
  readonly createdMs: number
  readonly failures: number
  readonly nowMs: number
  readonly baseSeconds: number
  readonly random: number
  readonly windowMs?: number
}): AfterFailure {
  const dueMs = o.nowMs + retryDelayMs(o.failures, o.baseSeconds, o.random)
  return dueMs - o.createdMs > (o.windowMs ?? RETRY_WINDOW_MS) ? { state: 'failed' } : { state: 'pending', dueMs }
}
