/** /healthz, /readyz and /metrics (C12), as src/admin/ops.ts routes them. */
import { operation, type Entry } from './operation.ts'
import { ref } from './schema-kit.ts'

export const opsPaths: readonly Entry[] = [
  operation('get', '/healthz', {
    id: 'health', tag: 'Operations', summary: 'The process is up', auth: 'none',
    answers: [{ status: '200', description: 'Always, while the process answers.', schema: ref('Health') }],
  }),
  operation('get', '/readyz', {
    id: 'readiness', tag: 'Operations', summary: 'The database answers, writes succeed and the processor is not stalled', auth: 'none',
    answers: [
      { status: '200', description: 'Ready.', schema: ref('Ready') },
      { status: '503', description: 'Not ready, with the reason; 200 again once a write succeeds.', schema: ref('NotReady') },
    ],
  }),
  operation('get', '/metrics', {
    id: 'metrics', tag: 'Operations', summary: 'Prometheus metrics', auth: 'metrics',
    description: 'Requests by route and status, latency, installments, webhook deliveries, the store. Needs an admin token of scope `admin` or `metrics`, unless REPLENISH_METRICS_PUBLIC=1.',
    answers: [{ status: '200', description: 'Prometheus text exposition format 0.0.4.', mediaType: 'text/plain', schema: { type: 'string' } }],
  }),
]
