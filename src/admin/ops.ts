import { HttpError } from '../http/http-error.ts'
import type { RequestMetrics } from '../http/metrics.ts'
import type { Route } from '../http/types.ts'
import type { App } from '../api/shared/app.ts'
import { authenticateAdmin } from '../api/shared/auth.ts'
import { processMetricsLines } from './process-metrics.ts'

/** Extra lines for /metrics from other parts of the service (processing adds installment gauges). */
export type MetricsSource = () => string

/** /healthz (process up), /readyz (database answers), /metrics (Prometheus text, admin token unless public). */
export function opsRoutes(app: App, metrics: RequestMetrics, sources: readonly MetricsSource[], readiness: () => string | undefined): Route[] {
  return [
    ['GET', '/healthz', () => ({ status: 200, body: { status: 'ok' } })],
    ['GET', '/readyz', () => {
      let problem: string | undefined
      try {
        // Writes failing (a lock held elsewhere, a full disk, a failed WAL sync) first (C12).
        problem = app.store.writeProblem() ?? (app.store.ping() ? readiness() : 'database did not answer')
      } catch {
        problem = 'database did not answer'
      }
      if (problem) throw new HttpError(503, { status: 'not ready', reason: problem })
      return { status: 200, body: { status: 'ready' } }
    }],
    ['GET', '/metrics', (ctx) => {
      if (!app.config.metricsPublic) authenticateAdmin(app, ctx)
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
        '# HELP replenish_database_size_bytes Size of the SQLite database.',
        '# TYPE replenish_database_size_bytes gauge',
        `replenish_database_size_bytes ${app.store.sizeBytes()}`,
        ...checkpointLines(app),
        ...sources.map((s) => s().trimEnd()).filter((text) => text.length > 0),
      ]
      return { status: 200, body: lines.join('\n') + '\n', contentType: 'text/plain; version=0.0.4; charset=utf-8' }
    }],
  ]
}

/** Background WAL checkpoints (serve only): how many ran where, and the WAL's length. */
function checkpointLines(app: App): string[] {
  const c = app.store.checkpoints()
  if (!c) return []
  return [
    '# HELP replenish_wal_checkpoints_total WAL checkpoints: in the background thread, or inline to let the WAL restart.',
    '# TYPE replenish_wal_checkpoints_total counter',
    `replenish_wal_checkpoints_total{where="background"} ${c.background}`,
    `replenish_wal_checkpoints_total{where="inline"} ${c.inline}`,
    '# HELP replenish_wal_frames WAL frames (pages) at the last background checkpoint.',
    '# TYPE replenish_wal_frames gauge',
    `replenish_wal_frames ${c.walFrames}`,
  ]
}
