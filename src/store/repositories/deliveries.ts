/** Webhook deliveries: the outbox, its attempts and its log (C10, C18): the repository's records and interfaces, exported by ../api.ts. */

/** C10: a delivery waits (`pending`), reached its endpoint, gave up after 3 days, or its endpoint was deleted. */
export const DELIVERY_STATES = ['pending', 'delivered', 'failed', 'canceled'] as const

export type DeliveryState = (typeof DELIVERY_STATES)[number]

/** The states the admin API shows and filters by (C3): `canceled` ones belong to deleted endpoints, which are gone. */
export const SHOWN_DELIVERY_STATES = ['pending', 'delivered', 'failed'] as const satisfies readonly DeliveryState[]

/** One try at a delivery, as the delivery log shows it (C3: status_code, duration_ms, error, created_at). */
export interface DeliveryAttempt {
  /** The receiver's status, or null when none came (refused, timed out, reset). */
  readonly status_code: number | null
  readonly duration_ms: number
  /** Why it did not succeed, in words; null for a 2xx. */
  readonly error: string | null
  /** When the attempt was made. */
  readonly created_at: string
  /** At most 1 KiB of what the receiver answered (C10), as text. */
  readonly response_body: string | null
  /** Asked for through `POST /deliveries/:id/redeliver`, not scheduled. */
  readonly redelivery: boolean
}

/**
 * A delivery of one event to one endpoint, with every attempt so far: C3's representation
 * (its keys in C3's order, with `event_type`, `attempt_count` and `delivered_at` beside them).
 */
export interface Delivery {
  readonly id: number
  readonly event_id: number
  readonly webhook_endpoint_id: number
  readonly event_type: string
  readonly state: DeliveryState
  readonly attempt_count: number
  /** When the next scheduled attempt is due, while pending. */
  readonly next_attempt_at: string | null
  readonly delivered_at: string | null
  readonly attempts: readonly DeliveryAttempt[]
  readonly created_at: string
  readonly updated_at: string
}

/** A delivery due for a scheduled attempt, with the body to post: its event as the feed shows it. */
export interface DueDelivery {
  readonly id: number
  readonly event_id: number
  readonly created_ms: number
  /** Scheduled attempts that failed so far. */
  readonly retries: number
  readonly body: string
}

/** The result of a scheduled attempt, and what the delivery becomes. */
export interface DeliveryOutcome {
  readonly id: number
  readonly endpoint_id: number
  readonly attempt: DeliveryAttempt
  readonly state: 'pending' | 'delivered' | 'failed'
  readonly due_ms: number | null
  readonly retries: number
  readonly at_ms: number
}

/** For /metrics: an endpoint's deliveries waiting now, the oldest of them, and the totals reached. */
export interface EndpointDeliveryStats {
  readonly endpoint_id: number
  readonly pending: number
  readonly oldest_pending_ms: number | null
  readonly delivered_total: number
  readonly failed_total: number
}

export interface DeliveryFilter {
  /** One endpoint's; absent: every endpoint's that is not deleted (C18). */
  readonly endpointId?: number | undefined
  readonly after: number
  readonly limit: number
  readonly state?: DeliveryState | undefined
}

export interface DeliveryReads {
  /** Deliveries of an endpoint, or of every endpoint not deleted, by id after `after`. */
  list(f: DeliveryFilter): Promise<Delivery[]>
  /** A delivery of an endpoint that exists. */
  find(id: number): Promise<Delivery | undefined>
  /** The body a delivery posts (its event), unless the event was pruned. */
  bodyOf(id: number): Promise<string | undefined>
  /** When the endpoint's earliest pending delivery is due (ms), or null when none is pending. */
  nextDueMs(endpointId: number): Promise<number | null>
  /** Every endpoint that exists, with its pending, oldest pending and totals. */
  stats(): Promise<EndpointDeliveryStats[]>
  /** When the oldest pending delivery was made (ms): events from then on are kept (retention). */
  oldestPendingMs(): Promise<number | null>
}

export interface DeliveriesTx extends DeliveryReads {
  /** Pending deliveries of the endpoint (not deleted, not disabled) due by `nowMs`, the earliest first, skipping `skip` (in flight). */
  due(endpointId: number, nowMs: number, limit: number, skip: readonly number[]): Promise<DueDelivery[]>
  /**
   * A delivery of the event to this endpoint alone, pending and first due at `dueMs` (a test
   * event, which the outbox trigger does not fan out); answers its id.
   */
  add(endpointId: number, eventId: number, eventType: string, createdMs: number, dueMs: number): Promise<number>
  /** Scheduled attempts' results; a delivery no longer pending (redelivered, canceled) only logs its attempt. */
  recordOutcomes(outcomes: readonly DeliveryOutcome[]): Promise<void>
  /** A redelivery's attempt: a 2xx makes the delivery delivered; a failure leaves its state as it was. */
  recordRedelivery(id: number, attempt: DeliveryAttempt, succeeded: boolean, atMs: number): Promise<Delivery>
  /** Pending deliveries of deleted endpoints become canceled, at most `limit`; answers how many. */
  cancelOfDeletedEndpoints(limit: number, atMs: number): Promise<number>
  /**
   * Deliveries `due` handed out that a stopping dispatcher will not post (fetched but not sent, or
   * cut off): due again at `atMs` for any instance (PostgreSQL ends their claim; SQLite never
   * claims, so nothing changes there).
   */
  release(ids: readonly number[], atMs: number): Promise<void>
}
