import { HttpError } from '../http/http-error.ts'
import type { RequestMetrics } from '../http/metrics.ts'
import type { Route } from '../http/types.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { processMetricsLines } from './process-metrics.ts'

/** Extra lines for /metrics from other parts of the service (processing adds installment gauges). */
export type MetricsSource = () => Promise<string>

/** Why the service cannot do its work now besides the store (processing: a stalled processor), or undefined. */
export type Readiness = () => Promise<string | undefined>

/** /healthz (process up), /readyz (database answers), /metrics (Prometheus text, admin token unless public). */
export function opsRoutes(app: App, metrics: RequestMetrics, sources: readonly MetricsSource[], readiness: Readiness): Route[] {
  return [
    ['GET', '/healthz', () => ({ status: 200, body: { status: 'ok' } })],
    ['GET', '/readyz', async () => {
      let problem: string | undefined
      let oldest: string | null = null
      try {
        // Writes failing (a lock held elsewhere, a full disk, a failed WAL sync) first (C12).
        problem = (await app.store.problem()) ?? (await readiness())
        // C9: the oldest overdue actionable date, as /metrics has it, so that a backlog shows here
        // too when processing runs from cron (`replenish process`), with no schedule to stall.
        if (!problem) oldest = await app.store.installments.oldestDue(app.clock.today())
      } catch {
        problem = 'database did not answer'
      }
      if (problem) throw new HttpError(503, { status: 'not ready', reason: problem })
      return { status: 200, body: { status: 'ready', oldest_overdue_actionable_date: oldest } }
    }],
    ['GET', '/metrics', async (ctx) => {
      if (!app.config.metricsPublic) await authenticateAdmin(app, ctx)
      // The store's gauges (database size, checkpoints) and the sources' are asked at once.
      const texts = await Promise.all([app.store.metricsText(), ...sources.map((s) => s())])
      const mem = process.memoryUsage()
      const lines = [
        metrics.render().trimEnd(),
        ...processMetricsLines(),
        '# HELP replenish_process_resident_memory_bytes Resident set size.',
        '# TYPE replenish_process_resident_memory_bytes gauge',
        `replenish_process_resident_memory_bytes ${mem.rss}`,
        '# HELP replenish_process_heap_used_bytes V8 heap in use.',
        '# TYPE replenish_process_heap_used_bytes gauge',
        `replenish_process_heap_used_bytes ${mem.heapUsed}`,
        ...texts.map((text) => text.trimEnd()).filter((text) => text.length > 0),
      ]
      return { status: 200, body: lines.join('\n') + '\n', contentType: 'text/plain; version=0.0.4; charset=utf-8' }
    }],
  ]
}
