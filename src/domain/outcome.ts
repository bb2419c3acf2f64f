import { FieldErrors, ValidationFailed, acceptableText } from './field-errors.ts'
import type { Attempt, Installment } from './installment.ts'

/**
 * Outcomes the shop reports for an installment (C9, C11), and what each does, as pure
 * decisions. Times are service-clock instants passed in.
 */
export const OUTCOME_RESULTS = ['fulfilled', 'failed', 'payment_failed', 'out_of_stock'] as const
export type OutcomeResult = (typeof OUTCOME_RESULTS)[number]

export interface OutcomeInput {
  readonly result: OutcomeResult
  readonly order_reference: string | null
  readonly message: string | null
}

const MAX_REFERENCE = 255
const MAX_MESSAGE = 1000
const HOUR_MS = 3_600_000
const DAY_MS = 86_400_000

function optionalText(attrs: Record<string, unknown>, field: string, max: number, errors: FieldErrors): string | null {
  const v = attrs[field]
  if (v === undefined || v === null) return null
  if (typeof v !== 'string' && typeof v !== 'number') return errors.add(field, 'invalid') ?? null
  const text = String(v).trim()
  if (text.length > max) return errors.add(field, 'too_long', max) ?? null
  if (!acceptableText(text, field, errors)) return null
  return text === '' ? null : text
}

/** The `outcome` object: `result` from the list (else `is not included in the list`), optional texts. */
export function readOutcome(attrs: Record<string, unknown>): OutcomeInput {
  const errors = new FieldErrors()
  const raw = attrs['result']
  const result = typeof raw === 'string' && (OUTCOME_RESULTS as readonly string[]).includes(raw) ? (raw as OutcomeResult) : undefined
  if (result === undefined) errors.add('result', 'invalid_outcome')
  const order_reference = optionalText(attrs, 'order_reference', MAX_REFERENCE, errors)
  const message = optionalText(attrs, 'message', MAX_MESSAGE, errors)
  if (!errors.empty || result === undefined) throw new ValidationFailed(errors)
  return { result, order_reference, message }
}

export type OutcomeDecision =
  /** The identical last outcome again, nothing happened since: answer as it is, change nothing. */
  | { readonly kind: 'replay' }
  | { readonly kind: 'fulfill' }
  | { readonly kind: 'retry'; readonly retryAt: string; readonly firstFailedAt: string }
  /** Retries end: the subscription is canceled already, or (cancelSubscription) the window ran out. */
  | { readonly kind: 'abandon'; readonly firstFailedAt: string; readonly cancelSubscription: boolean }

export interface OutcomeContext {
  /** Service-clock now. */
  readonly now: Date
  readonly reprocessingIntervalHours: number
  readonly maxReprocessingDays: number | undefined
  readonly subscriptionCanceled: boolean
}

export function decideOutcome(inst: Installment, last: Attempt | undefined, input: OutcomeInput, ctx: OutcomeContext): OutcomeDecision {
  const identical =
    last !== undefined && inst.replayable_attempt_id === last.id && last.result === input.result && last.order_reference === input.order_reference
  if (identical) return { kind: 'replay' }
  if (inst.state === 'fulfilled' || inst.state === 'abandoned') {
    const errors = new FieldErrors()
    errors.add('state', 'installment_closed', inst.state)
    throw new ValidationFailed(errors)
  }
  if (input.result === 'fulfilled') return { kind: 'fulfill' }
  const nowMs = ctx.now.getTime()
  const firstFailedAt = inst.first_failed_at ?? ctx.now.toISOString()
  // A canceled subscription is never charged again: no retry is scheduled for it.
  if (ctx.subscriptionCanceled) return { kind: 'abandon', firstFailedAt, cancelSubscription: false }
  const max = ctx.maxReprocessingDays
  if (max !== undefined && inst.first_failed_at !== null && nowMs - Date.parse(inst.first_failed_at) >= max * DAY_MS) {
    return { kind: 'abandon', firstFailedAt, cancelSubscription: true }
  }
  return { kind: 'retry', retryAt: new Date(nowMs + ctx.reprocessingIntervalHours * HOUR_MS).toISOString(), firstFailedAt }
}
