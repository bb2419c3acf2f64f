/** The event log (C10, C18): the repository's records and interfaces, exported by ../api.ts. */
import type { EventRecord } from '../../domain/types.ts'

/** An event just recorded, and its subscription. */
export interface RecordedEvent {
  readonly subscriptionId: number
  readonly eventId: number
}

export interface EventReads {
  /** Newest first. */
  ofSubscription(subscriptionId: number, offset: number, limit: number): Promise<EventRecord[]>
  countOfSubscription(subscriptionId: number): Promise<number>
  /** The cursor feed (C10): events after `after`, oldest first. */
  feed(after: number, limit: number, type: string | undefined): Promise<EventRecord[]>
}

/**
 * The event log. An event records who made it and in which request (C18) without being told:
 * `record` and `recordJson` stamp it with the running unit's context (`UnitContext`: the actor and
 * request id `Store.write` was given), bound into the same INSERT (no extra statement). So a new
 * event type needs nothing more than a `record` call inside a unit whose writer passed the right
 * context: a request's `call.commit` (src/api/kit/endpoint.ts) passes the caller's; the
 * processor passes PROCESSOR_UNIT; a write given none is SYSTEM_UNIT's. A repository that inserts
 * events with SQL of its own (the processor's bulk `installment.created`) binds the same three
 * columns (`actor_type`, `actor_id`, `request_id`) from the context its repository was given.
 */
export interface EventsTx extends EventReads {
  /** Records an event whose object is already JSON text (the C3 body); answers its id. */
  recordJson(type: string, subscriptionId: number | null, objectJson: string): Promise<number>
  /**
   * `recordJson` for a caller that needs no id: on PostgreSQL the INSERT waits and goes with the
   * unit's next statement or its COMMIT (store/postgres/unit-sql.ts), one round trip fewer.
   */
  append(type: string, subscriptionId: number | null, objectJson: string): Promise<void>
  record(type: string, subscriptionId: number | null, object: object): Promise<number>
  /**
   * Records `type` for each of `subscriptionIds` that exists, its object the subscription's C3
   * body as it now stands: the processor's events in bulk (C17's upcoming deliveries), one
   * statement where the backend renders bodies itself. Answers each event with its subscription,
   * in id order. A subscription event only: whether it makes a mail follows from its type alone
   * (domain/mail/kinds.ts), so the outbox needs no object.
   */
  recordSubscriptions(type: `subscription.${string}`, subscriptionIds: readonly number[]): Promise<RecordedEvent[]>
  /**
   * Retention (C13): deletes at most `limit` of the oldest events made before `beforeIso`, with
   * the deliveries of them (none pending: the caller's bound is older than every pending one);
   * answers how many events went.
   */
  pruneBefore(beforeIso: string, limit: number): Promise<number>
}
