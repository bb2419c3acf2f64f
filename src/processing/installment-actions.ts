import { processingStateOf, renderInstallment, type Installment } from '../domain/installment.ts'
import { decideOutcome, type OutcomeInput } from '../domain/outcome.ts'
import type { Subscription } from '../domain/types.ts'
import type { InstallmentChange } from '../store/installments-store.ts'
import type { Store } from '../store/store.ts'

/**
 * The installment writes the processor, the admin API and a cancel share. Each runs inside a
 * unit of writes and records the C10 events of its change, holding the installment after it.
 */
export function presentInstallment(store: Store, inst: Installment): Record<string, unknown> {
  return renderInstallment(inst, store.installments.attemptsOf([inst.id]).get(inst.id) ?? [])
}

/** Changes an installment, keeps the subscription's `processing_state` on its last one (C3), writes `events`. */
export function changeInstallment(store: Store, inst: Installment, change: InstallmentChange, events: readonly string[], at: string): Installment {
  const updated = store.installments.change(inst.id, change, at)
  if (store.installments.latestIdOf(updated.subscription_id) === updated.id) {
    store.installments.setProcessingState(updated.subscription_id, processingStateOf(updated.state), at)
  }
  if (events.length > 0) {
    const body = presentInstallment(store, updated)
    for (const type of events) store.events.record(type, updated.subscription_id, body)
  }
  return updated
}

/**
 * A canceled subscription is never charged again: its pending and retrying installments end now
 * (C9). `keepDueDate` spares the last delivery a pending cancellation still owes the customer.
 */
export function abandonOpenInstallments(store: Store, subscriptionId: number, keepDueDate?: string): number {
  const open = store.installments.openOf(subscriptionId).filter((i) => i.due_date !== keepDueDate)
  const at = new Date().toISOString()
  for (const inst of open) {
    changeInstallment(store, inst, { state: 'abandoned', retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id: null }, ['installment.abandoned'], at)
  }
  return open.length
}

/** The cancel hook: abandons the open installments and answers the subscription after that. */
export function abandonOnCancel(store: Store, sub: Subscription): Subscription {
  return abandonOpenInstallments(store, sub.id) > 0 ? (store.subscriptions.find(sub.id) ?? sub) : sub
}

/** A retry whose time came: due again for the shop (`installment.retry_due`), or abandoned when canceled meanwhile. */
export function retryDue(store: Store, inst: Installment, sub: Subscription | undefined, at: string): 'due' | 'abandoned' {
  const keep = { retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id: null }
  if (sub === undefined || sub.state === 'canceled') {
    changeInstallment(store, inst, { ...keep, state: 'abandoned' }, ['installment.abandoned'], at)
    return 'abandoned'
  }
  changeInstallment(store, inst, { ...keep, state: 'pending' }, ['installment.retry_due'], at)
  return 'due'
}

export interface OutcomeSettings {
  /** Service-clock now. */
  readonly now: Date
  readonly reprocessingIntervalHours: number
  readonly maxReprocessingDays: number | undefined
}

/**
 * Records the shop's outcome (C9): every attempt is kept; an identical repeat changes nothing.
 * Answers whether the subscription must now be canceled (the reprocessing window ran out),
 * which the caller does through the ordinary cancel transition.
 */
export function recordOutcome(store: Store, inst: Installment, sub: Subscription, input: OutcomeInput, settings: OutcomeSettings): { cancelSubscription: boolean } {
  const decision = decideOutcome(inst, store.installments.lastAttempt(inst.id), input, { ...settings, subscriptionCanceled: sub.state === 'canceled' })
  if (decision.kind === 'replay') return { cancelSubscription: false }
  const at = new Date().toISOString()
  const attempt = store.installments.addAttempt(inst.id, input.result, input.order_reference, input.message, at)
  const replayable_attempt_id = attempt.id
  switch (decision.kind) {
    case 'fulfill':
      changeInstallment(store, inst, { state: 'fulfilled', retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id }, ['installment.fulfilled'], at)
      return { cancelSubscription: false }
    case 'retry':
      changeInstallment(store, inst, { state: 'retrying', retry_at: decision.retryAt, first_failed_at: decision.firstFailedAt, replayable_attempt_id },
        ['installment.failed', 'installment.retry_scheduled'], at)
      return { cancelSubscription: false }
    case 'abandon':
      changeInstallment(store, inst, { state: 'abandoned', retry_at: null, first_failed_at: decision.firstFailedAt, replayable_attempt_id }, ['installment.abandoned'], at)
      return { cancelSubscription: decision.cancelSubscription }
  }
}
