import type { AccessLogEntry } from './types.ts'

const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const

/** Request counters and a latency histogram, rendered in the Prometheus text format. */
export class RequestMetrics {
  // method → route template → status → count: no label string is built and hashed per request.
  private readonly counts = new Map<string, Map<string, Map<number, number>>>()
  private readonly buckets = new Array<number>(BUCKETS_MS.length).fill(0)
  private count = 0
  private sumMs = 0

  observe(e: AccessLogEntry): void {
    let routes = this.counts.get(e.method)
    if (!routes) this.counts.set(e.method, (routes = new Map()))
    let statuses = routes.get(e.route)
    if (!statuses) routes.set(e.route, (statuses = new Map()))
    statuses.set(e.status, (statuses.get(e.status) ?? 0) + 1)
    this.count++
    this.sumMs += e.ms
    for (let i = 0; i < BUCKETS_MS.length; i++) if (e.ms <= (BUCKETS_MS[i] as number)) this.buckets[i]!++
  }

  render(): string {
    const lines = [
      '# HELP replenish_http_requests_total HTTP requests answered, by method, route template and status.',
      '# TYPE replenish_http_requests_total counter',
    ]
    for (const [method, routes] of this.counts) {
      for (const [route, statuses] of routes) {
        for (const [status, n] of statuses) lines.push(`replenish_http_requests_total{method="${method}",route="${route}",status="${status}"} ${n}`)
      }
    }
    lines.push(
      '# HELP replenish_http_request_duration_seconds Time from request to answer.',
      '# TYPE replenish_http_request_duration_seconds histogram',
    )
    BUCKETS_MS.forEach((le, i) => lines.push(`replenish_http_request_duration_seconds_bucket{le="${le / 1000}"} ${this.buckets[i]}`))
    lines.push(`replenish_http_request_duration_seconds_bucket{le="+Inf"} ${this.count}`)
    lines.push(`replenish_http_request_duration_seconds_sum ${this.sumMs / 1000}`)
    lines.push(`replenish_http_request_duration_seconds_count ${this.count}`)
    return lines.join('\n') + '\n'
  }
}
