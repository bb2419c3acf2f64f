import type { AccessLogEntry } from './types.ts'

const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const
const BUCKET_LABELS = BUCKETS_MS.map((ms) => String(ms / 1000))

/** What one method and route template saw: answers by status, and its latency histogram. */
class RouteStats {
  readonly statuses = new Map<number, number>()
  /** Answers per bucket, not yet cumulative (one increment per request); the last slot is over 5 s. */
  readonly buckets = new Array<number>(BUCKETS_MS.length + 1).fill(0)
  count = 0
  sumMs = 0
}

/**
 * Request counters and a latency histogram by method and route template (the pattern, never
 * the raw path: unknown paths are all `unmatched`), rendered in the Prometheus text format 0.0.4.
 */
export class RequestMetrics {
  // method → route template → stats: no label string is built and hashed per request.
  private readonly byMethod = new Map<string, Map<string, RouteStats>>()

  observe(e: AccessLogEntry): void {
    let routes = this.byMethod.get(e.method)
    if (!routes) this.byMethod.set(e.method, (routes = new Map()))
    let stats = routes.get(e.route)
    if (!stats) routes.set(e.route, (stats = new RouteStats()))
    stats.statuses.set(e.status, (stats.statuses.get(e.status) ?? 0) + 1)
    stats.count++
    stats.sumMs += e.ms
    let i = 0
    while (i < BUCKETS_MS.length && e.ms > (BUCKETS_MS[i] as number)) i++
    stats.buckets[i]!++
  }

  render(): string {
    const counters = [
      '# HELP replenish_http_requests_total HTTP requests answered, by method, route template and status.',
      '# TYPE replenish_http_requests_total counter',
    ]
    const histogram = [
      '# HELP replenish_http_request_duration_seconds Time from request to answer, by method and route template.',
      '# TYPE replenish_http_request_duration_seconds histogram',
    ]
    for (const [method, routes] of this.byMethod) {
      for (const [route, stats] of routes) {
        const labels = `method="${labelValue(method)}",route="${labelValue(route)}"`
        for (const [status, n] of stats.statuses) counters.push(`replenish_http_requests_total{${labels},status="${status}"} ${n}`)
        let cumulative = 0
        for (let i = 0; i < BUCKETS_MS.length; i++) {
          cumulative += stats.buckets[i] as number
          histogram.push(`replenish_http_request_duration_seconds_bucket{${labels},le="${BUCKET_LABELS[i]}"} ${cumulative}`)
        }
        histogram.push(
          `replenish_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${stats.count}`,
          // Each ms is in whole µs: rounding the sum to µs drops only the float noise of adding them.
          `replenish_http_request_duration_seconds_sum{${labels}} ${Math.round(stats.sumMs * 1000) / 1e6}`,
          `replenish_http_request_duration_seconds_count{${labels}} ${stats.count}`,
        )
      }
    }
    return counters.join('\n') + '\n' + histogram.join('\n') + '\n'
  }
}

/** A label value as the text format wants it: backslash, double quote and newline escaped. */
export function labelValue(value: string): string {
  return /[\\"\n]/.test(value) ? value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n') : value
}
