import type { Clock } from '../clock.ts'
import { INSTALLMENT_STATES } from '../domain/installment.ts'
import type { Store } from '../store/api.ts'

/**
 * What an operator sees of processing (C9, C12): gauges for /metrics, and a readiness check
 * that fails when something has been due for more than two schedule periods, in whichever
 * process the processor runs (the run log is in the database).
 */
export interface ProcessingMonitor {
  metrics(): Promise<string>
  readiness(): Promise<string | undefined>
}

export interface MonitorOptions {
  /** Minutes between scheduled runs; 0: no schedule here, so no stall to report. */
  readonly processEvery: number
  /** Real time (ms) the schedule started: a fresh start has two periods to catch up. */
  readonly startedAt: number
  readonly now?: () => number
}

export function processingMonitor(store: Store, clock: Clock, options: MonitorOptions): ProcessingMonitor {
  const now = options.now ?? Date.now
  return {
    async metrics() {
      const today = clock.today()
      const [counts, retriesDue, oldest, lastRun] = await Promise.all([
        store.installments.countByState(),
        store.installments.countRetriesDue(clock.now().toISOString()),
        store.installments.oldestDue(today),
        store.leases.lastCompletedRunStart(),
      ])
      const lines = [
        '# HELP replenish_installments Installments by state.',
        '# TYPE replenish_installments gauge',
        ...INSTALLMENT_STATES.map((s) => `replenish_installments{state="${s}"} ${counts[s]}`),
        '# HELP replenish_installments_retry_due Retrying installments whose retry time has come.',
        '# TYPE replenish_installments_retry_due gauge',
        `replenish_installments_retry_due ${retriesDue}`,
        '# HELP replenish_processing_oldest_overdue_actionable_date_seconds Oldest actionable date that is due and not yet processed, as a Unix time (midnight UTC); 0 when none.',
        '# TYPE replenish_processing_oldest_overdue_actionable_date_seconds gauge',
        `replenish_processing_oldest_overdue_actionable_date_seconds ${oldest === null ? 0 : Date.parse(`${oldest}T00:00:00Z`) / 1000}`,
        '# HELP replenish_processing_last_completed_run_timestamp_seconds Start of the newest processor run that finished; 0 when none.',
        '# TYPE replenish_processing_last_completed_run_timestamp_seconds gauge',
        `replenish_processing_last_completed_run_timestamp_seconds ${lastRun === null ? 0 : Date.parse(lastRun) / 1000}`,
      ]
      return lines.join('\n') + '\n'
    },
    async readiness() {
      if (options.processEvery <= 0) return undefined
      const oldest = await store.installments.oldestDue(clock.today())
      if (oldest === null) return undefined
      // Everything due when a run started was handled by it; what is due now has waited at
      // most since the newest finished run began (or since this schedule started).
      const lastRun = await store.leases.lastCompletedRunStart()
      const since = Math.max(lastRun === null ? 0 : Date.parse(lastRun), options.startedAt)
      const periods = 2 * options.processEvery * 60_000
      if (now() - since <= periods) return undefined
      return `processor stalled: subscriptions due since ${oldest} are not processed (last finished run started ${lastRun ?? 'never'})`
    },
  }
}
