import type { Clock } from '../clock.ts'
import type { Store } from '../store/api.ts'
import { runProcessor, type RunSummary } from './processor.ts'

/**
 * The processor inside `serve` (C9): one run at start (catching up whatever fell due while the
 * service was down), then one every `processEvery` minutes; 0 turns it off. A tick while a run
 * is still going, or while another process holds the lease, does nothing. `stop` lets the run
 * in progress finish its batch and waits for it, so the database closes after it.
 */
export interface Schedule {
  start(): void
  stop(): Promise<void>
}

export interface ScheduleOptions {
  readonly store: Store
  readonly clock: Clock
  readonly processEvery: number
  /** C17: REPLENISH_UPCOMING_DAYS. */
  readonly upcomingDays?: number
  /** One JSON object per line on stderr: a run that did something, or one that failed. */
  readonly log: (entry: object) => void
  readonly batchSize?: number
}

/** Smaller than the CLI's: a batch holds the event loop, and requests are waiting. */
const SERVE_BATCH = 500

export function processingSchedule(options: ScheduleOptions): Schedule {
  const controller = new AbortController()
  let timer: NodeJS.Timeout | undefined
  let running: Promise<void> | undefined

  const tick = (): void => {
    if (running || controller.signal.aborted) return
    running = runProcessor(options.store, {
      clock: options.clock, batchSize: options.batchSize ?? SERVE_BATCH, signal: controller.signal, upcomingDays: options.upcomingDays,
    })
      .then((s) => report(options.log, s))
      .catch((err: unknown) => {
        options.log({ time: new Date().toISOString(), level: 'error', msg: 'processor run failed', error: err instanceof Error ? err.message : String(err) })
      })
      .finally(() => {
        running = undefined
      })
  }

  return {
    start() {
      if (options.processEvery <= 0 || timer) return
      timer = setInterval(tick, options.processEvery * 60_000)
      timer.unref()
      setImmediate(tick)
    },
    async stop() {
      if (timer) clearInterval(timer)
      controller.abort()
      await running
    },
  }
}

function report(log: (entry: object) => void, s: RunSummary): void {
  if (!s.ran || (s.processed === 0 && s.retriesDue === 0 && s.abandoned === 0 && s.upcoming === 0)) return
  log({
    time: new Date().toISOString(),
    level: 'info',
    msg: 'processor run',
    as_of: s.asOf,
    processed: s.processed,
    installments: s.installments,
    ended: s.ended,
    canceled: s.canceled,
    resumed: s.resumed,
    retries_due: s.retriesDue,
    abandoned: s.abandoned,
    upcoming: s.upcoming,
    completed: s.completed,
    ms: Math.round(s.elapsedMs),
  })
}
