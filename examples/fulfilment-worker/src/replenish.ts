import { createHash } from 'node:crypto'
import type { Outcome } from './types.ts'

export interface OutcomeEntry extends Outcome {
  readonly installment_id: number
}

/** One entry's answer: 200 with the installment, or 404/422 with the errors the single call would give. */
export interface OutcomeResult {
  readonly installment_id: number | null
  readonly status: number
  readonly errors?: unknown
}

/** Most entries one request may carry (replenish refuses more than 500). */
export const MAX_ENTRIES = 500

/**
 * POST /admin/api/v1/installments/outcomes: the outcomes of many installments in one request,
 * each entry applied on its own (a refused entry changes nothing of the others), answered in
 * order. Needs an admin token of scope `admin`.
 *
 * The Idempotency-Key is derived from the body, so a request sent again after a lost answer (a
 * time-out, a reset connection) carries the same key, and replenish replays its first answer
 * instead of acting twice. After a restart the worker may send the same outcomes in another
 * batch, under another key: that is safe too, since replenish answers an outcome identical to
 * the installment's last one with a 200 that changes nothing.
 *
 * Throws when there is no answer for the batch as a whole (replenish unreachable, 5xx, 429, a
 * token it refuses): the worker keeps the outcomes and tries again later.
 */
export async function reportOutcomes(baseUrl: string, adminToken: string, entries: readonly OutcomeEntry[]): Promise<OutcomeResult[]> {
  const body = JSON.stringify({ outcomes: entries })
  const response = await fetch(new URL('/admin/api/v1/installments/outcomes', baseUrl), {
    method: 'POST',
    headers: {
      authorization: `Bearer ${adminToken}`,
      'content-type': 'application/json',
      'idempotency-key': `fulfilment-worker-${createHash('sha256').update(body).digest('hex').slice(0, 48)}`,
    },
    body,
    signal: AbortSignal.timeout(30_000),
  })
  if (response.status !== 200) throw new Error(`replenish answered ${response.status} to the outcomes: ${(await response.text()).slice(0, 300)}`)
  const { results } = (await response.json()) as { results: OutcomeResult[] }
  return results
}
