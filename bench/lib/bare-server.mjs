import http from 'node:http'

/**
 * The ceiling of the runtime: node:http answering every request with the same JSON body, the
 * size of one subscription with three line items (C3), and nothing else: no routing, no auth,
 * no database. Replenish's numbers are read as a fraction of this one's, measured in the same run.
 */
export const SAMPLE_BODY = JSON.stringify(sampleSubscription())

function sampleSubscription() {
  const at = '2026-01-15T09:30:00.000Z'
  const lineItem = (id, subscribable) => ({ id, subscription_id: 1234, subscribable_id: subscribable, quantity: 1, created_at: at, updated_at: at })
  return {
    id: 1234, user_id: 124, state: 'active', paused: false,
    interval_length: 1, interval_units: 'month',
    actionable_date: '2026-02-15', end_date: null,
    skip_count: 0, successive_skip_count: 0,
    payment_method_id: null, payment_source_id: null,
    currency: 'USD', processing_state: 'pending',
    shipping_address: null, billing_address: null,
    line_items: [lineItem(3700, 1), lineItem(3701, 2), lineItem(3702, 3)],
    created_at: at, updated_at: at,
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const headers = { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(SAMPLE_BODY) }
  const server = http.createServer((req, res) => {
    res.writeHead(200, headers)
    res.end(SAMPLE_BODY)
  })
  server.listen(0, '127.0.0.1', () => {
    process.stdout.write(`bare listening on http://127.0.0.1:${server.address().port}\n`)
  })
  process.once('SIGTERM', () => server.close(() => process.exit(0)))
  process.once('SIGINT', () => server.close(() => process.exit(0)))
}
