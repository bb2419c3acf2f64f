import { afterFailure } from '../../domain/webhook-schedule.ts'
import { attemptSigner, signingSecrets, type SignatureHeaders } from '../../domain/webhook-signature.ts'
import type { DeliveryOutcome, DueDelivery, Store, WebhookEndpoint } from '../../store/api.ts'
import { DELIVERY_TIMEOUT_MS } from '../../domain/webhook-schedule.ts'
import { newTarget, post, type Sent, type Target } from './send.ts'
import { noPacing, type Pacer } from '../pacer.ts'
import { Slots } from './slots.ts'

/**
 * The webhook dispatcher inside `serve` (C10). Each endpoint has its own worker with its own
 * keep-alive connections, so a slow or dead receiver holds back nothing but its own deliveries.
 * A worker has `concurrency` requests going at once; one its receiver leaves unanswered for far
 * longer than it usually takes stops counting there (slots.ts), so a few hanging requests do not
 * stop the rest. Every request in flight holds a socket, and an endpoint holds at most its share
 * of `sockets` (the dispatcher's, split evenly between the endpoints). A worker takes due
 * deliveries from the outbox a few dozen at a time, the earliest due first, and posts them; their
 * results are written in batches (one unit for many deliveries). Due deliveries are read inside
 * a unit of writes, so a delivery is never posted before the event it carries has committed.
 *
 * At least once: a delivery stays pending until its result commits, so one posted just before a
 * crash (or a stop) is posted again after the restart. In flight ones are held in memory only,
 * which is right for one process per database (SQLite); see docs/webhooks.md.
 */
export interface DispatcherOptions {
  readonly store: Store
  readonly retryBaseSeconds: number
  readonly log: (entry: object) => void
  /** Requests going at once per endpoint, not counting stalled ones (slots.ts). */
  readonly concurrency?: number
  /** Sockets of the whole dispatcher; an endpoint holds at most its even share (and at least `concurrency`). */
  readonly sockets?: number
  /** How often an idle worker looks for due deliveries (ms). */
  readonly pollMs?: number
  /** How often the list of endpoints and their secrets is read again (ms). */
  readonly refreshMs?: number
  readonly timeoutMs?: number
  readonly retryWindowMs?: number
  readonly random?: () => number
  /** Holds deliveries back while requests need the event loop (pacer.ts); none by default. */
  readonly pacer?: Pacer
}

export interface Dispatcher {
  start(): void
  /**
   * Reads the endpoints again now (an endpoint was registered, changed, deleted or rotated here);
   * resolves once a read begun after this call has ended (it never rejects: a failed read is logged).
   */
  refresh(): Promise<void>
  /** Stops posting; waits up to `graceMs` for requests in flight, records what finished. */
  stop(graceMs?: number): Promise<void>
}

const DEFAULT_CONCURRENCY = 8
/**
 * Enough for 1,000 deliveries/s to a receiver that leaves 3 % unanswered for the 10 s time-out
 * (300 sockets) with room to spare; Node raises its limit of open files to the hard limit at start.
 */
const DEFAULT_SOCKETS = 1024
const DEFAULT_POLL_MS = 100
const DEFAULT_REFRESH_MS = 1000
/** Due deliveries read per unit: few units while a backlog drains. */
const FETCH_BATCH = 128
const REFILL_BELOW = FETCH_BATCH / 2
/** Results written per unit, at most; a partial batch waits this long for company. */
const OUTCOME_BATCH = 512
const OUTCOME_WAIT_MS = 10
/** Deliveries of an endpoint whose endpoint was deleted, canceled per unit. */
const CANCEL_BATCH = 5000

export function webhookDispatcher(o: DispatcherOptions): Dispatcher {
  const concurrency = o.concurrency ?? DEFAULT_CONCURRENCY
  const sockets = Math.max(concurrency, o.sockets ?? DEFAULT_SOCKETS)
  const timeoutMs = o.timeoutMs ?? DELIVERY_TIMEOUT_MS
  const pollMs = o.pollMs ?? DEFAULT_POLL_MS
  const random = o.random ?? Math.random
  const pacer = o.pacer ?? noPacing
  const workers = new Map<number, Worker>()
  let outcomes: { outcome: DeliveryOutcome; worker: Worker }[] = []
  let flushTimer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()
  let refreshTimer: NodeJS.Timeout | undefined
  let refreshing: Promise<void> | undefined
  let stopped = false
  /** Deliveries fetched but never posted, or cut off by the stop: handed back when it ends. */
  const unposted: number[] = []
  let cancelNeeded = true

  const logError = (msg: string, err: unknown): void =>
    o.log({ time: new Date().toISOString(), level: 'error', msg, error: err instanceof Error ? err.message : String(err) })

  const flush = (): Promise<void> => {
    if (flushTimer) clearTimeout(flushTimer)
    flushTimer = undefined
    if (outcomes.length === 0) return flushing
    const batch = outcomes
    outcomes = []
    flushing = flushing
      .then(() => o.store.write((tx) => tx.deliveries.recordOutcomes(batch.map((b) => b.outcome))))
      .catch((err: unknown) => logError('webhook delivery results could not be written; those deliveries will be posted again', err))
      .then(() => {
        for (const { outcome, worker } of batch) worker.recorded(outcome.id)
      })
    return flushing
  }

  const recordLater = (outcome: DeliveryOutcome, worker: Worker): void => {
    outcomes.push({ outcome, worker })
    if (outcomes.length >= OUTCOME_BATCH) void flush()
    else flushTimer ??= setTimeout(() => void flush(), OUTCOME_WAIT_MS)
  }

  /** An endpoint's share of the sockets: an even split, never below `concurrency`. */
  const share = (): number => Math.max(concurrency, Math.floor(sockets / Math.max(1, workers.size)))

  class Worker {
    readonly target: Target
    /** Signs with the endpoint's secrets as last read (refresh). */
    sign: (eventId: number, unixSeconds: number, body: string) => SignatureHeaders = attemptSigner([])
    private readonly queue: DueDelivery[] = []
    /**
     * Posted or being posted, result not yet committed: not to be fetched again meanwhile. Shared
     * with the worker this one replaces (the endpoint's address changed) until those are recorded.
     */
    readonly unrecorded: Set<number>
    private readonly slots = new Slots(concurrency, timeoutMs)
    private fetching = false
    private timer: NodeJS.Timeout | undefined
    private paceTimer: NodeJS.Timeout | undefined
    private stallTimer: NodeJS.Timeout | undefined
    closed = false
    readonly idle = new Set<() => void>()

    readonly endpoint: WebhookEndpoint

    constructor(endpoint: WebhookEndpoint, unrecorded = new Set<number>()) {
      this.endpoint = endpoint
      this.unrecorded = unrecorded
      // The agent never queues: the worker keeps within the share itself. Idle sockets kept: as
      // many as answer at once.
      this.target = newTarget(endpoint.url, sockets, concurrency)
    }

    pump(): void {
      // Closed: nothing more starts; a fetch that was under way when it closed may have been the
      // last thing a stop waits for.
      if (this.closed || stopped) return this.settleIfIdle()
      const myShare = share()
      while (this.queue.length > 0 && this.slots.free(performance.now(), myShare)) {
        const wait = pacer.delay()
        if (wait > 0) {
          this.paceTimer ??= setTimeout(() => {
            this.paceTimer = undefined
            this.pump()
          }, wait)
          break
        }
        this.send(this.queue.shift() as DueDelivery)
      }
      // Every place is taken and none may answer soon: look again when the oldest would stall.
      const stallIn = this.queue.length > 0 ? this.slots.nextStallInMs(performance.now(), myShare) : undefined
      if (stallIn !== undefined && !this.stallTimer) {
        this.stallTimer = setTimeout(() => {
          this.stallTimer = undefined
          this.pump()
        }, stallIn)
      }
      // Read more while half a batch is left, so the places do not wait on the read.
      if (this.queue.length < REFILL_BELOW && !this.fetching && !this.timer) void this.fetch()
    }

    private async fetch(): Promise<void> {
      this.fetching = true
      let found = 0
      try {
        const now = Date.now()
        if (this.slots.inFlight === 0 && this.queue.length === 0) {
          // Idle: a read of the pending index first; a unit only when something is due.
          const next = await o.store.deliveries.nextDueMs(this.endpoint.id)
          if (next === null || next > now) return this.sleep(next === null ? pollMs : Math.min(pollMs, next - now))
        }
        const skip = [...this.unrecorded, ...this.queue.map((d) => d.id)]
        const rows = await o.store.write((tx) => tx.deliveries.due(this.endpoint.id, now, FETCH_BATCH, skip))
        found = rows.length
        if (!this.closed) this.queue.push(...rows)
      } catch (err) {
        logError('webhook deliveries could not be read', err)
        return this.sleep(pollMs * 10)
      } finally {
        this.fetching = false
        // The returns above went to sleep() while this was still fetching: a stop waiting for
        // the worker to be idle was not told, and waited for ever.
        this.settleIfIdle()
      }
      // Nothing more is due (beyond what is in flight): look again after a pause, not in a loop.
      if (found === 0) return this.sleep(pollMs)
      this.pump()
    }

    private sleep(ms: number): void {
      if (this.closed || stopped) return this.settleIfIdle()
      this.timer = setTimeout(() => {
        this.timer = undefined
        this.pump()
      }, Math.max(1, ms))
      this.settleIfIdle()
    }

    private send(d: DueDelivery): void {
      const flight = this.slots.start(performance.now())
      this.unrecorded.add(d.id)
      const signed = this.sign(d.event_id, Math.floor(Date.now() / 1000), d.body)
      void post(this.target, d.body, signed, { redelivery: false, timeoutMs })
        .then((sent) => {
          this.slots.finish(flight, performance.now(), sent.attempt.status_code !== null)
          this.sent(d, sent)
        })
    }

    private sent(d: DueDelivery, sent: Sent): void {
      if (stopped && sent.attempt.status_code === null) {
        // Cut off by the stop: not a failure of the receiver's; it stays due and goes again after the restart.
        this.unrecorded.delete(d.id)
        unposted.push(d.id)
      } else {
        const now = Date.now()
        const next = sent.succeeded
          ? ({ state: 'delivered', due_ms: null, retries: d.retries } as const)
          : failedAttempt(d, now)
        recordLater({ id: d.id, endpoint_id: this.endpoint.id, attempt: sent.attempt, at_ms: now, ...next }, this)
      }
      this.pump()
      this.settleIfIdle()
    }

    recorded(id: number): void {
      this.unrecorded.delete(id)
      this.settleIfIdle()
    }

    private settleIfIdle(): void {
      if (this.slots.inFlight === 0 && !this.fetching) for (const f of this.idle) f()
    }

    get busy(): boolean {
      return this.slots.inFlight > 0 || this.fetching
    }

    /** Posts nothing more; answers the deliveries it fetched and had not posted yet. */
    close(): number[] {
      this.closed = true
      const fetched = this.queue.map((d) => d.id)
      this.queue.length = 0
      if (this.timer) clearTimeout(this.timer)
      if (this.paceTimer) clearTimeout(this.paceTimer)
      if (this.stallTimer) clearTimeout(this.stallTimer)
      this.timer = undefined
      this.paceTimer = undefined
      this.stallTimer = undefined
      return fetched
    }

    destroy(): void {
      this.close()
      this.target.agent.destroy()
    }
  }

  const failedAttempt = (d: DueDelivery, now: number): Pick<DeliveryOutcome, 'state' | 'due_ms' | 'retries'> => {
    const retries = d.retries + 1
    const next = afterFailure({
      createdMs: d.created_ms, failures: retries, nowMs: now, baseSeconds: o.retryBaseSeconds, random: random(),
      ...(o.retryWindowMs !== undefined ? { windowMs: o.retryWindowMs } : {}),
    })
    return next.state === 'failed' ? { state: 'failed', due_ms: null, retries } : { state: 'pending', due_ms: next.dueMs, retries }
  }

  /**
   * Nothing more is posted through the endpoint's worker: what is in flight finishes, then its
   * connections go. What it fetched and had not posted is handed back at once (PostgreSQL: its
   * claim ends), so that it goes as soon as the endpoint is posted to again.
   */
  const retire = (id: number): Worker | undefined => {
    const worker = workers.get(id)
    if (!worker) return undefined
    workers.delete(id)
    const fetched = worker.close()
    whenIdle(worker).then(() => worker.destroy(), () => worker.destroy())
    if (fetched.length > 0) {
      o.store.write((tx) => tx.deliveries.release(fetched, Date.now()))
        .catch((err: unknown) => logError('webhook deliveries fetched but not posted could not be handed back; they go again when their claim runs out', err))
    }
    return worker
  }

  const readEndpoints = async (): Promise<void> => {
    const seen = new Set<number>()
    let after = 0
    for (;;) {
      const page = await o.store.webhooks.listEndpoints(after, 100)
      for (const endpoint of page) {
        seen.add(endpoint.id)
        // Disabled (C18): sends nothing; its pending deliveries wait for it to be enabled again.
        if (endpoint.disabled) {
          retire(endpoint.id)
          continue
        }
        const secrets = await o.store.webhooks.secretsOf(endpoint.id)
        if (!secrets) continue
        let worker = workers.get(endpoint.id)
        if (worker && worker.endpoint.url !== endpoint.url) {
          // A new address: new connections, and what is in flight to the old one is not fetched again.
          worker = new Worker(endpoint, retire(endpoint.id)?.unrecorded)
          workers.set(endpoint.id, worker)
        }
        if (!worker) {
          worker = new Worker(endpoint)
          workers.set(endpoint.id, worker)
        }
        worker.sign = attemptSigner(signingSecrets(secrets, Date.now()))
        worker.pump()
      }
      if (page.length < 100) break
      after = page[page.length - 1]!.id
    }
    for (const id of [...workers.keys()]) {
      if (seen.has(id)) continue
      // Deleted: nothing more is posted to it, and its pending deliveries are canceled below.
      cancelNeeded = true
      retire(id)
    }
    // Once at start (an endpoint deleted while serve was down) and after a deletion is seen: not a
    // write every second.
    while (cancelNeeded && !stopped) {
      const canceled = await o.store.write((tx) => tx.deliveries.cancelOfDeletedEndpoints(CANCEL_BATCH, Date.now()))
      if (canceled < CANCEL_BATCH) cancelNeeded = false
      else await new Promise((resolve) => setImmediate(resolve))
    }
  }

  const refresh = (): Promise<void> => {
    if (stopped) return Promise.resolve()
    // After the read under way, if any: that one may have read the endpoints before the change.
    const next: Promise<void> = (refreshing ?? Promise.resolve())
      .then(() => (stopped ? undefined : readEndpoints()))
      .catch((err: unknown) => logError('webhook endpoints could not be read', err))
      .finally(() => {
        if (refreshing === next) refreshing = undefined
      })
    refreshing = next
    return next
  }

  return {
    start() {
      if (refreshTimer || stopped) return
      void refresh()
      // The periodic read skips a tick while one is under way: reads slower than the period
      // must not pile up behind each other.
      refreshTimer = setInterval(() => void (refreshing ?? refresh()), o.refreshMs ?? DEFAULT_REFRESH_MS)
      refreshTimer.unref()
    },
    refresh,
    async stop(graceMs = 2000) {
      stopped = true
      if (refreshTimer) clearInterval(refreshTimer)
      await refreshing
      const all = [...workers.values()]
      for (const w of all) unposted.push(...w.close())
      const idle = Promise.all(all.map(whenIdle))
      let timer: NodeJS.Timeout | undefined
      await Promise.race([idle, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))])
      clearTimeout(timer)
      // Past the grace, what is still in flight is cut off and stays pending.
      for (const w of all) w.target.agent.destroy()
      await idle
      await flush()
      // What was fetched but not posted goes back at once: another instance need not wait out
      // this one's claims (PostgreSQL), nor this one's restart.
      if (unposted.length > 0) {
        await o.store.write((tx) => tx.deliveries.release(unposted, Date.now()))
          .catch((err: unknown) => logError('webhook deliveries fetched but not posted could not be handed back; they go again when their claim runs out', err))
      }
      for (const w of all) w.destroy()
      workers.clear()
    },
  }

  function whenIdle(w: Worker): Promise<void> {
    if (!w.busy) return Promise.resolve()
    return new Promise((resolve) => {
      const f = (): void => {
        w.idle.delete(f)
        resolve()
      }
      w.idle.add(f)
    })
  }
}
