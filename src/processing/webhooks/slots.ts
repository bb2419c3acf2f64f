/**
 * An endpoint's places for requests in flight (issue 25). A receiver that leaves a few requests
 * unanswered must not hold back the rest: were every request to count until it is answered or
 * times out, 3 % of hanging requests would each hold one of the endpoint's few places for the
 * whole 10 s time-out, and delivery to that endpoint would fall a hundredfold.
 *
 * So a request counts against the endpoint's `concurrency` only while it is young. Once it has
 * been in flight for far longer than this receiver usually takes to answer (`STALL_FACTOR` times
 * its typical answer time, at least `MIN_STALL_MS`), it is *stalled*: it keeps its connection
 * until it is answered or times out, but another delivery may start in its place. A receiver
 * that is slow on every request stalls nothing (its typical time is slow too), so it still gets
 * `concurrency` requests at once and no more. What bounds the stalled ones is the socket share:
 * every request in flight holds a socket, and an endpoint never holds more than its share of
 * the dispatcher's sockets (the dispatcher decides the share; this only obeys it).
 *
 * The clock is passed in (ms, monotonic), so this is pure and tested without waiting.
 */

/** A request in flight: stalled once it outlived the threshold, done once it finished. */
export interface Flight {
  readonly startedMs: number
  stalled: boolean
  done: boolean
}

/** A request counts as stalled after this many times the receiver's typical answer time… */
export const STALL_FACTOR = 4
/** …and never sooner than this. */
export const MIN_STALL_MS = 25
/** Until the receiver has answered once, its typical time is taken to be this (a 1 s threshold). */
const UNKNOWN_ANSWER_MS = 250
/** Weight of the newest answer in the typical time (an exponential moving average). */
const SMOOTHING = 0.05

export class Slots {
  private readonly concurrency: number
  private readonly timeoutMs: number
  /** Every request in flight: each holds a socket. */
  inFlight = 0
  /** Requests in flight that are not stalled: these count against `concurrency`. */
  active = 0
  /** The young requests in the order they started; finished ones leave lazily from the front. */
  private readonly young: Flight[] = []
  /** The receiver's typical answer time (ms), from the answers so far; time-outs do not count. */
  private typicalMs: number | undefined

  constructor(concurrency: number, timeoutMs: number) {
    this.concurrency = concurrency
    this.timeoutMs = timeoutMs
  }

  /** How long a request may be in flight before it stops counting against `concurrency`. */
  get stallMs(): number {
    return Math.min(this.timeoutMs, Math.max(MIN_STALL_MS, STALL_FACTOR * (this.typicalMs ?? UNKNOWN_ANSWER_MS)))
  }

  /** Whether another request may start now, given the endpoint's socket share. */
  free(nowMs: number, share: number): boolean {
    this.noteStalls(nowMs)
    return this.active < this.concurrency && this.inFlight < share
  }

  start(nowMs: number): Flight {
    const flight: Flight = { startedMs: nowMs, stalled: false, done: false }
    this.young.push(flight)
    this.inFlight++
    this.active++
    return flight
  }

  /** The request ended; `answered`: a status came back (its time then counts toward the typical). */
  finish(flight: Flight, nowMs: number, answered: boolean): void {
    if (flight.done) return
    flight.done = true
    this.inFlight--
    if (!flight.stalled) this.active--
    if (!answered) return
    const took = nowMs - flight.startedMs
    this.typicalMs = this.typicalMs === undefined ? took : this.typicalMs + SMOOTHING * (took - this.typicalMs)
  }

  /**
   * While every place is taken by young requests but sockets remain: in how many ms the oldest
   * of them stalls (and a place frees unless an answer comes first). Undefined otherwise.
   */
  nextStallInMs(nowMs: number, share: number): number | undefined {
    this.noteStalls(nowMs)
    const oldest = this.young[0]
    if (oldest === undefined || this.active < this.concurrency || this.inFlight >= share) return undefined
    return Math.max(1, Math.ceil(oldest.startedMs + this.stallMs - nowMs))
  }

  private noteStalls(nowMs: number): void {
    const limit = this.stallMs
    while (this.young.length > 0) {
      const oldest = this.young[0] as Flight
      if (!oldest.done && nowMs - oldest.startedMs < limit) return
      this.young.shift()
      if (!oldest.done) {
        oldest.stalled = true
        this.active--
      }
    }
  }
}
