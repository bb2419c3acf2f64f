import type { Address } from './types.ts'

/**
 * An installment: one delivery request made from a due subscription (C9). Its line items,
 * addresses and payment ids are a snapshot taken when it was made, so a later change to the
 * subscription or the catalog does not rewrite what the shop was asked to deliver.
 */
export const INSTALLMENT_STATES = ['pending', 'retrying', 'fulfilled', 'abandoned'] as const
export type InstallmentState = (typeof INSTALLMENT_STATES)[number]

/**
 * A line as the installment froze it (C16: with its price, discount and total then). Installments
 * made before prices existed (schema version 10) have none of the three: they show as no price.
 */
export interface SnapshotLine {
  readonly subscribable_id: number
  readonly sku: string
  readonly name: string
  readonly quantity: number
  readonly price?: string | null
  readonly discount_percent?: string
  readonly total?: string | null
}

/**
 * Who an installment is for (C13): the subscription's owner as it stands now, so the shop can
 * create an order without two more requests. An erased user keeps its id; its `email` is null.
 */
export interface InstallmentUser {
  readonly id: number
  readonly email: string | null
  readonly external_id: string | null
}

export interface Installment {
  readonly id: number
  readonly subscription_id: number
  readonly user: InstallmentUser
  readonly due_date: string
  readonly state: InstallmentState
  readonly retry_at: string | null
  /** Service-clock instant of the first failure: the start of C9's reprocessing window. */
  readonly first_failed_at: string | null
  /** The attempt an identical repeat replays as a no-op; null once anything else happened. */
  readonly replayable_attempt_id: number | null
  readonly line_items: readonly SnapshotLine[]
  readonly shipping_address: Address | null
  readonly billing_address: Address | null
  readonly payment_method_id: number | null
  readonly payment_source_id: number | null
  readonly currency: string
  /** C16, frozen when the installment was made: the amounts the shop charges (null without prices). */
  readonly subtotal: string | null
  readonly discount_total: string | null
  readonly total: string | null
  readonly created_at: string
  readonly updated_at: string
}

export interface Attempt {
  readonly id: number
  readonly installment_id: number
  readonly result: string
  readonly order_reference: string | null
  readonly message: string | null
  readonly created_at: string
}

/**
 * C3's installment object, attempts oldest first. The processor builds the same object in SQL
 * for `installment.created` (installments-store.ts `createdEvents`): a change of keys or of their
 * order here is made there too (test/processing/processor.test.ts holds the two together).
 */
export function renderInstallment(i: Installment, attempts: readonly Attempt[]): Record<string, unknown> {
  return {
    id: i.id,
    subscription_id: i.subscription_id,
    user: { id: i.user.id, email: i.user.email, external_id: i.user.external_id },
    due_date: i.due_date,
    state: i.state,
    retry_at: i.retry_at,
    line_items: i.line_items.map(renderSnapshotLine),
    shipping_address: i.shipping_address,
    billing_address: i.billing_address,
    payment_method_id: i.payment_method_id,
    payment_source_id: i.payment_source_id,
    currency: i.currency,
    subtotal: i.subtotal,
    discount_total: i.discount_total,
    total: i.total,
    attempts: attempts.map((a) => ({ result: a.result, order_reference: a.order_reference, message: a.message, created_at: a.created_at })),
    created_at: i.created_at,
    updated_at: i.updated_at,
  }
}

/** A snapshot line in C3's key order, C16's money after the quantity (none before prices existed: no price). */
function renderSnapshotLine(l: SnapshotLine): Record<string, unknown> {
  return {
    subscribable_id: l.subscribable_id,
    sku: l.sku,
    name: l.name,
    quantity: l.quantity,
    price: l.price ?? null,
    discount_percent: l.discount_percent ?? '0',
    total: l.total ?? null,
  }
}

/** C3: the subscription's `processing_state` follows its last installment. */
export function processingStateOf(state: InstallmentState): 'pending' | 'success' | 'failed' {
  if (state === 'pending') return 'pending'
  return state === 'fulfilled' ? 'success' : 'failed'
}
