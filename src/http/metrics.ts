import type { AccessLogEntry } from './types.ts'

const BUCKETS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000] as const

/** Request counters and a latency histogram, rendered in the Prometheus text format. */
export class RequestMetrics {
  private readonly counts = new Map<string, number>()
  private readonly buckets = new Array<number>(BUCKETS_MS.length).fill(0)
  private count = 0
  private sumMs = 0

  observe(e: AccessLogEntry): void {
    const key = `method="${e.method}",route="${e.route}",status="${e.status}"`
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1)
    this.count++
    this.sumMs += e.ms
    for (let i = 0; i < BUCKETS_MS.length; i++) if (e.ms <= (BUCKETS_MS[i] as number)) this.buckets[i]!++
  }

  render(): string {
    const lines = [
      '# HELP replenish_http_requests_total HTTP requests answered, by method, route template and status.',
      '# TYPE replenish_http_requests_total counter',
    ]
    for (const [labels, n] of this.counts) lines.push(`replenish_http_requests_total{${labels}} ${n}`)
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
