// ╔════════════════════════════════════════════════════════════════════════════════════════════╗
// ║ STAND-IN SHOP: the part you replace. Everything else in this worker can stay as it is.     ║
// ╚════════════════════════════════════════════════════════════════════════════════════════════╝
import { setTimeout as sleep } from 'node:timers/promises'
import { JsonLines } from './jsonl.ts'
import type { Attempt, Installment, Outcome } from './types.ts'

/**
 * What the worker needs from your shop: place the order for one try at an installment (charge,
 * reserve stock, create the order) and say how it went.
 *
 * The one promise it must keep: called again with the same `attempt.key`, it places nothing new
 * and answers what it answered the first time. The worker calls it again after a crash between
 * placing an order and recording that it did. With a real shop: store the key with the order
 * under a unique constraint and look it up first, or pass it as the shop API's idempotency key
 * (Shopify's and Stripe's APIs take one; Solidus: a unique column on the order).
 *
 * Throwing means "the shop could not be asked" (down, time-out): the worker tries again later.
 * A declined card or an empty shelf is not an error but an outcome: replenish retries the
 * installment after REPLENISH_REPROCESSING_INTERVAL_HOURS and sends installment.retry_due.
 */
export interface Shop {
  placeOrder(attempt: Attempt): Promise<Outcome>
}

interface ShopRecord {
  readonly key: string
  readonly installment_id: number
  readonly attempt: number
  readonly outcome: Outcome
  /** The order placed, or null when there is none (a declined card). */
  readonly order: { readonly reference: string; readonly email: string | null; readonly lines: Installment['line_items'] } | null
}

/**
 * A shop that keeps its orders in memory, and also in a file (`stand-in-shop.jsonl`), so that
 * they outlive a restart of the worker the way your shop's database would: the worker's tests
 * kill it with kill -9 and count the orders afterwards.
 *
 * Its payments: a customer whose email is at `declines-once.example` has a card that is declined
 * on its first charge and accepted on the next, like a payment provider's test cards. `latencyMs`
 * stands for the time your shop's API takes to answer.
 */
export class StandInShop implements Shop {
  private readonly byKey = new Map<string, ShopRecord>()
  private readonly log: JsonLines<ShopRecord>
  private readonly latencyMs: number
  private orders = 0

  private constructor(log: JsonLines<ShopRecord>, records: ShopRecord[], latencyMs: number) {
    this.log = log
    this.latencyMs = latencyMs
    for (const r of records) this.remember(r)
  }

  static async open(path: string, options: { latencyMs?: number } = {}): Promise<StandInShop> {
    const { log, records } = await JsonLines.open<ShopRecord>(path)
    return new StandInShop(log, records, options.latencyMs ?? 0)
  }

  async placeOrder(attempt: Attempt): Promise<Outcome> {
    const done = this.byKey.get(attempt.key)
    if (done) return done.outcome // the same key: the same answer, and no second order
    if (this.latencyMs > 0) await sleep(this.latencyMs)
    const { installment } = attempt
    const declined = attempt.number === 1 && (installment.user.email ?? '').endsWith('@declines-once.example')
    const reference = `SO-${String(this.orders + 1).padStart(6, '0')}`
    const record: ShopRecord = declined
      ? { key: attempt.key, installment_id: installment.id, attempt: attempt.number, outcome: { result: 'payment_failed', order_reference: null, message: 'card declined (stand-in test card)' }, order: null }
      : {
          key: attempt.key,
          installment_id: installment.id,
          attempt: attempt.number,
          outcome: { result: 'fulfilled', order_reference: reference, message: null },
          order: { reference, email: installment.user.email, lines: installment.line_items },
        }
    this.remember(record)
    await this.log.append(record)
    return record.outcome
  }

  private remember(record: ShopRecord): void {
    this.byKey.set(record.key, record)
    if (record.order !== null) this.orders++
  }
}
