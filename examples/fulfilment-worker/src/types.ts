/**
 * The parts of replenish's installment (docs/webhooks.md, "installment.created") this worker
 * reads. The webhook carries more (addresses, payment ids, currency): your shop will want them.
 */
export interface Installment {
  readonly id: number
  readonly subscription_id: number
  readonly user: { readonly id: number; readonly email: string | null; readonly external_id: string | null }
  readonly due_date: string
  readonly line_items: readonly { readonly sku: string; readonly name: string; readonly quantity: number }[]
  /** The outcomes reported so far: one per earlier attempt. */
  readonly attempts: readonly unknown[]
}

/** What a try at delivering an installment came to: the body of one entry of POST /installments/outcomes. */
export interface Outcome {
  readonly result: 'fulfilled' | 'failed' | 'payment_failed' | 'out_of_stock'
  readonly order_reference: string | null
  readonly message: string | null
}

/**
 * One try at one installment: `installment.created` is its first, each `installment.retry_due`
 * the next. The key names it for good, so it is what the worker and the shop deduplicate on: the
 * same event delivered twice, or an old one delivered late, has the key of a try already handled.
 */
export interface Attempt {
  readonly key: string
  readonly number: number
  readonly installment: Installment
}

export function attemptOf(installment: Installment): Attempt {
  const number = installment.attempts.length + 1
  return { key: `installment-${installment.id}-attempt-${number}`, number, installment }
}
