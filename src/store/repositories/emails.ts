/** The mail outbox and its log (C17): the repository's records and interfaces, exported by ../api.ts. */
import type { MailKind, MailState } from '../../domain/mail/kinds.ts'
import type { Language } from '../../domain/messages.ts'

/** One try at sending a mail, as the mail log shows it (C17). */
export interface MailAttempt {
  /** What the SMTP server last answered (`250 2.0.0 Ok: queued as …`, `451 4.7.1 …`), or null when none answered. */
  readonly smtp_reply: string | null
  /** Why it was not sent, in words; null once sent. */
  readonly error: string | null
  readonly created_at: string
}

/** A mail in the outbox, C17's representation: never its body, never its link. */
export interface Email {
  readonly id: number
  readonly user_id: number
  readonly kind: MailKind
  readonly event_id: number
  /** The address it went (or goes) to; null once the customer is erased. */
  readonly to: string | null
  /** Known from the first attempt on: a mail is rendered when it is sent. */
  readonly subject: string | null
  readonly state: MailState
  readonly attempts: readonly MailAttempt[]
  readonly created_at: string
  readonly updated_at: string
}

export interface EmailFilter {
  readonly after: number
  readonly limit: number
  readonly userId?: number | undefined
  readonly state?: MailState | undefined
}

/** A mail due for an attempt, with what rendering it needs, as things stand now. */
export interface DueEmail {
  readonly id: number
  readonly user_id: number
  readonly kind: MailKind
  readonly event_id: number
  readonly created_ms: number
  /** Attempts that failed so far (the backoff's exponent). */
  readonly retries: number
  /** The customer's address now: null once erased. */
  readonly email: string | null
  readonly locale: Language | null
  readonly email_notifications: boolean
  /** The event's data (`{"object": …}`) as JSON text; null when the event is gone (retention). */
  readonly data: string | null
}

/** An attempt's result, and what the mail becomes. */
export interface EmailOutcome {
  readonly id: number
  readonly state: MailState
  readonly due_ms: number | null
  readonly retries: number
  readonly attempt: MailAttempt
  readonly to: string | null
  readonly subject: string | null
  readonly at_ms: number
}

/** For /metrics: mails waiting now (and the oldest), and the totals sent and given up. */
export interface EmailStats {
  readonly pending: number
  readonly oldest_pending_ms: number | null
  readonly sent_total: number
  readonly failed_total: number
}

/** The mail outbox as the log API, /metrics and the sender read it (C17). */
export interface EmailReads {
  /** By id after `after`, optionally one user's or one state's. */
  list(f: EmailFilter): Promise<Email[]>
  /** When the earliest pending mail is due (ms), or null when none is pending. */
  nextDueMs(): Promise<number | null>
  stats(): Promise<EmailStats>
  /** The oldest pending mail's creation (ms): its event is kept until it is settled (retention). */
  oldestPendingMs(): Promise<number | null>
}

/** The mail outbox (C17): written with the events it tells of, read and settled by the sender. */
export interface EmailsTx extends EmailReads {
  /**
   * A mail of `kind` to the owner of the subscription, for the event just recorded, made at the
   * event's time (`atMs` when it has none) and due at once; none when the owner has no address
   * (erased) or has turned e-mail off. Answers whether one was made.
   */
  enqueue(kind: MailKind, subscriptionId: number, eventId: number, atMs: number): Promise<boolean>
  /**
   * Pending mails due by `nowMs`, the earliest first, but `skip` (in flight here). PostgreSQL
   * claims them for a while (another instance skips them meanwhile); SQLite has one sender.
   */
  claim(nowMs: number, limit: number, skip: readonly number[]): Promise<DueEmail[]>
  /** Attempts' results; a mail no longer pending only logs its attempt. */
  recordOutcomes(outcomes: readonly EmailOutcome[]): Promise<void>
  /** Mails `claim` handed out that a stopping sender did not try: due again at `atMs` for any instance. */
  release(ids: readonly number[], atMs: number): Promise<void>
  /**
   * Erasure (C13): the user's pending mails are failed (never sent), and the address is blanked
   * from every mail of theirs.
   */
  forgetUser(userId: number, atMs: number): Promise<void>
  /** Retention: at most `limit` of the oldest mails made before `beforeMs` that are no longer pending; answers how many. */
  pruneBefore(beforeMs: number, limit: number): Promise<number>
}
