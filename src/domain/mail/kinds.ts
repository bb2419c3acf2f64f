/**
 * Which events a customer is told of by e-mail (C17), and as which kind of mail. Pure: the
 * outbox (src/processing/mail/outbox.ts) asks it for every event a unit records.
 */
export const MAIL_KINDS = ['upcoming', 'payment_failed', 'canceled'] as const
export type MailKind = (typeof MAIL_KINDS)[number]

/** The states of a mail in the outbox, as the log shows them (C17). */
export const MAIL_STATES = ['pending', 'sent', 'failed'] as const
export type MailState = (typeof MAIL_STATES)[number]

export function isMailKind(value: unknown): value is MailKind {
  return typeof value === 'string' && (MAIL_KINDS as readonly string[]).includes(value)
}

/**
 * The kind of mail an event makes, or undefined. `object` is the event's `data.object`, asked for
 * only for `installment.failed` (a function, so that a subscription event's JSON text is never
 * parsed): its newest attempt says whether the failure was the payment's.
 */
export function mailKindOf(type: string, object: () => unknown): MailKind | undefined {
  switch (type) {
    case 'subscription.upcoming':
      return 'upcoming'
    case 'subscription.canceled':
      return 'canceled'
    case 'installment.failed':
      return lastResult(object()) === 'payment_failed' ? 'payment_failed' : undefined
    default:
      return undefined
  }
}

function lastResult(installment: unknown): unknown {
  const attempts = (installment as { attempts?: unknown } | null)?.attempts
  if (!Array.isArray(attempts) || attempts.length === 0) return undefined
  return (attempts[attempts.length - 1] as { result?: unknown } | null)?.result
}
