import { processingStateOf, renderInstallment, type Installment } from '../domain/installment.ts'
import { decideOutcome, type OutcomeInput } from '../domain/outcome.ts'
import type { Subscription } from '../domain/types.ts'
import type { InstallmentChange, Reads, Tx } from '../store/api.ts'

/**
 * The installment writes the processor, the admin API and a cancel share. Each runs inside a
 * unit of writes, through its `tx`, and records the C10 events of its change, holding the
 * installment after it.
 */

/** The installment with its attempts (C3): a unit's `tx`, or the store for a read outside one. */
export async function presentInstallment(reads: Reads, inst: Installment): Promise<Record<string, unknown>> {
  return renderInstallment(inst, (await reads.installments.attemptsOf([inst.id])).get(inst.id) ?? [])
}

/** Changes an installment, keeps the subscription's `processing_state` on its last one (C3), writes `events`. */
export async function changeInstallment(tx: Tx, inst: Installment, change: InstallmentChange, events: readonly string[], at: string): Promise<Installment> {
  const updated = await tx.installments.change(inst.id, change, at)
  if ((await tx.installments.latestIdOf(updated.subscription_id)) === updated.id) {
    await tx.installments.setProcessingState(updated.subscription_id, processingStateOf(updated.state), at)
  }
  if (events.length > 0) {
    const body = await presentInstallment(tx, updated)
    for (const type of events) await tx.events.record(type, updated.subscription_id, body)
  }
  return updated
}

/**
 * A canceled subscription is never charged again: its pending and retrying installments end now
 * (C9). `keepDueDate` spares the last delivery a pending cancellation still owes the customer.
 */
export async function abandonOpenInstallments(tx: Tx, subscriptionId: number, keepDueDate?: string): Promise<number> {
  const open = (await tx.installments.openOf(subscriptionId)).filter((i) => i.due_date !== keepDueDate)
  const at = new Date().toISOString()
  for (const inst of open) {
    await changeInstallment(tx, inst, { state: 'abandoned', retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id: null }, ['installment.abandoned'], at)
  }
  return open.length
}

/** The cancel hook: abandons the open installments and answers the subscription after that. */
export async function abandonOnCancel(tx: Tx, sub: Subscription): Promise<Subscription> {
  return (await abandonOpenInstallments(tx, sub.id)) > 0 ? ((await tx.subscriptions.find(sub.id)) ?? sub) : sub
}

/** A retry whose time came: due again for the shop (`installment.retry_due`), or abandoned when canceled meanwhile. */
export async function retryDue(tx: Tx, inst: Installment, sub: Subscription | undefined, at: string): Promise<'due' | 'abandoned'> {
  const keep = { retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id: null }
  if (sub === undefined || sub.state === 'canceled') {
    await changeInstallment(tx, inst, { ...keep, state: 'abandoned' }, ['installment.abandoned'], at)
    return 'abandoned'
  }
  await changeInstallment(tx, inst, { ...keep, state: 'pending' }, ['installment.retry_due'], at)
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
 * which the caller does through the ordinary cancel transition, in the same unit.
 */
export async function recordOutcome(tx: Tx, inst: Installment, sub: Subscription, input: OutcomeInput, settings: OutcomeSettings): Promise<{ cancelSubscription: boolean }> {
  const decision = decideOutcome(inst, await tx.installments.lastAttempt(inst.id), input, { ...settings, subscriptionCanceled: sub.state === 'canceled' })
  if (decision.kind === 'replay') return { cancelSubscription: false }
  const at = new Date().toISOString()
  const attempt = await tx.installments.addAttempt(inst.id, input.result, input.order_reference, input.message, at)
  const replayable_attempt_id = attempt.id
  switch (decision.kind) {
    case 'fulfill':
      await changeInstallment(tx, inst, { state: 'fulfilled', retry_at: null, first_failed_at: inst.first_failed_at, replayable_attempt_id }, ['installment.fulfilled'], at)
      return { cancelSubscription: false }
    case 'retry':
      await changeInstallment(tx, inst, { state: 'retrying', retry_at: decision.retryAt, first_failed_at: decision.firstFailedAt, replayable_attempt_id },
        ['installment.failed', 'installment.retry_scheduled'], at)
      return { cancelSubscription: false }
    case 'abandon':
      await changeInstallment(tx, inst, { state: 'abandoned', retry_at: null, first_failed_at: decision.firstFailedAt, replayable_attempt_id }, ['installment.abandoned'], at)
      return { cancelSubscription: decision.cancelSubscription }
  }
}
