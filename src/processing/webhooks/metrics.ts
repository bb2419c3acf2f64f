import type { Store } from '../../store/api.ts'

/**
 * /metrics lines for webhook deliveries (issue 17): per endpoint, what waits now and how long the
 * oldest has waited (a receiver's outage shows here, not in /readyz), and the deliveries that
 * reached delivered or failed since the endpoint was registered.
 */
export async function webhookMetricsText(store: Store, nowMs: number): Promise<string> {
  const stats = await store.deliveries.stats()
  const label = (id: number): string => `endpoint_id="${id}"`
  return [
    '# HELP replenish_webhook_deliveries_pending Deliveries waiting for their first or next attempt.',
    '# TYPE replenish_webhook_deliveries_pending gauge',
    ...stats.map((s) => `replenish_webhook_deliveries_pending{${label(s.endpoint_id)}} ${s.pending}`),
    '# HELP replenish_webhook_oldest_pending_delivery_age_seconds Age of the oldest pending delivery (0 when none waits).',
    '# TYPE replenish_webhook_oldest_pending_delivery_age_seconds gauge',
    ...stats.map((s) => `replenish_webhook_oldest_pending_delivery_age_seconds{${label(s.endpoint_id)}} ${s.oldest_pending_ms === null ? 0 : Math.max(0, (nowMs - s.oldest_pending_ms) / 1000).toFixed(3)}`),
    '# HELP replenish_webhook_deliveries_total Deliveries that reached a final state since the endpoint was registered.',
    '# TYPE replenish_webhook_deliveries_total counter',
    ...stats.flatMap((s) => [
      `replenish_webhook_deliveries_total{${label(s.endpoint_id)},state="delivered"} ${s.delivered_total}`,
      `replenish_webhook_deliveries_total{${label(s.endpoint_id)},state="failed"} ${s.failed_total}`,
    ]),
  ].join('\n') + '\n'
}
