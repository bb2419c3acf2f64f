import { performance } from 'node:perf_hooks'

/**
 * Requests before deliveries (issue 17: "without slowing a request"). serve answers requests and
 * posts webhooks on one event loop; while that loop is nearly saturated *and* requests are being
 * answered (a load peak, a processor run beside traffic), deliveries go at a trickle of `busyRate`
 * per second, so the API keeps its throughput; the moment there is slack again they go at full
 * speed. A loop saturated by deliveries alone (a backlog drained at night) is not held back.
 */
export interface Pacer {
  /** 0: post now; otherwise how many ms to wait before asking again. */
  delay(): number
  readonly busy: boolean
  stop(): void
}

export interface PacerOptions {
  /** Requests answered so far (a counter that only grows). */
  readonly requestsAnswered: () => number
  /** Loop utilisation above which the loop counts as saturated. */
  readonly busyAbove?: number
  /** Deliveries per second while busy. */
  readonly busyRate?: number
  readonly sampleMs?: number
}

export function loadPacer(o: PacerOptions): Pacer {
  const busyAbove = o.busyAbove ?? 0.9
  const busyRate = o.busyRate ?? 200
  let busy = false
  let lastLoop = performance.eventLoopUtilization()
  let lastRequests = o.requestsAnswered()
  const timer = setInterval(() => {
    const loop = performance.eventLoopUtilization()
    const requests = o.requestsAnswered()
    busy = performance.eventLoopUtilization(loop, lastLoop).utilization > busyAbove && requests > lastRequests
    lastLoop = loop
    lastRequests = requests
  }, o.sampleMs ?? 250)
  timer.unref()
  let tokens = 0
  let refilledAt = performance.now()
  return {
    delay() {
      if (!busy) return 0
      const now = performance.now()
      tokens = Math.min(busyRate / 10, tokens + ((now - refilledAt) * busyRate) / 1000)
      refilledAt = now
      if (tokens >= 1) {
        tokens--
        return 0
      }
      return Math.ceil(((1 - tokens) * 1000) / busyRate)
    },
    get busy() {
      return busy
    },
    stop() {
      clearInterval(timer)
    },
  }
}

/**
 * Background work that always yields to requests (C17's mails): a trickle of `rate` per second
 * while any request was answered in the last `windowMs`, full speed otherwise. It looks at the
 * request counter at each ask, not on a timer: a sampled pacer let the drain run at full speed
 * for up to a sample after the requests began, and those first requests waited behind it.
 */
export function requestPacer(o: { readonly requestsAnswered: () => number; readonly rate: number; readonly windowMs?: number }): Pacer {
  const windowMs = o.windowMs ?? 250
  let seen = o.requestsAnswered()
  let lastRequestAt = Number.NEGATIVE_INFINITY
  let tokens = 0
  let refilledAt = performance.now()
  const isBusy = (now: number): boolean => {
    const answered = o.requestsAnswered()
    if (answered !== seen) {
      seen = answered
      lastRequestAt = now
    }
    return now - lastRequestAt < windowMs
  }
  return {
    delay() {
      const now = performance.now()
      if (!isBusy(now)) return 0
      tokens = Math.min(o.rate / 10, tokens + ((now - refilledAt) * o.rate) / 1000)
      refilledAt = now
      if (tokens >= 1) {
        tokens--
        return 0
      }
      return Math.ceil(((1 - tokens) * 1000) / o.rate)
    },
    get busy() {
      return isBusy(performance.now())
    },
    stop() {},
  }
}

/** No pacing: every delivery goes at once (tests, and a dispatcher that serves no requests). */
export const noPacing: Pacer = { delay: () => 0, busy: false, stop() {} }
