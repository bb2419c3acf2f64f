import type { Clock } from '../clock.ts'
import type { Store } from '../store/api.ts'
import { processingMonitor } from './monitor.ts'
import { processingSchedule } from './schedule.ts'

/** What `serve` hangs on processing: the schedule, and the /metrics and /readyz hooks. */
export interface ServeProcessing {
  /** Prometheus text for /metrics. */
  readonly metrics: () => Promise<string>
  /** A problem for /readyz, or undefined. */
  readonly readiness: () => Promise<string | undefined>
  start(): void
  stop(): Promise<void>
}

export function processingForServe(store: Store, clock: Clock, processEvery: number, log: (entry: object) => void, upcomingDays = 0): ServeProcessing {
  const monitor = processingMonitor(store, clock, { processEvery, startedAt: Date.now() })
  const schedule = processingSchedule({ store, clock, processEvery, log, upcomingDays })
  return {
    metrics: () => monitor.metrics(),
    readiness: () => monitor.readiness(),
    start: () => schedule.start(),
    stop: () => schedule.stop(),
  }
}
