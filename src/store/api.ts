/**
 * The store as the rest of the service sees it, whichever database is behind it (decisions.md,
 * "The store interface"). Everything returns a promise, because a server database answers over
 * a socket; the embedded SQLite backend answers at once and keeps its speed by running each
 * unit of writes without waiting on anything.
 *
 * Rules a backend meets (and callers rely on):
 * - Reads on the Store see only committed work, or work of units that have finished (SQLite's
 *   group commit shows a finished unit before its batch's COMMIT; never a unit in progress).
 * - Every change happens inside `write(unit)`, through the unit's `tx`: its reads see the unit's
 *   own writes, and what it decides from them holds until it commits (SQLite: the one writer;
 *   PostgreSQL: row locks taken by `lock*` reads). The unit commits or rolls back as one.
 * - A unit awaits only its `tx`: no timer, no network, no file. SQLite refuses a unit that
 *   awaits anything else (it would hold every other writer back) and rolls it back.
 * - A unit may be run again by a backend that retries on a conflict (PostgreSQL), so it has no
 *   effect outside `tx` until `write` resolves.
 * - Repositories answer domain values (src/domain/types.ts) or JSON text that is already the
 *   C3 representation; rendering rules live in src/domain/representation.ts, once.
 *
 * Each repository's records and interfaces are in src/store/repositories/, one file each, and
 * exported from here: callers import the store's types from this file alone.
 */
import type { Actor } from '../domain/types.ts'
import type { AccountReads, AccountsTx } from './repositories/accounts.ts'
import type { CatalogReads, CatalogTx } from './repositories/catalog.ts'
import type { DeliveriesTx, DeliveryReads } from './repositories/deliveries.ts'
import type { EmailReads, EmailsTx } from './repositories/emails.ts'
import type { EventReads, EventsTx } from './repositories/events.ts'
import type { IdempotencyReads, IdempotencyTx } from './repositories/idempotency.ts'
import type { ImportsTx } from './repositories/imports.ts'
import type { InstallmentReads, InstallmentsTx } from './repositories/installments.ts'
import type { LeaseReads, LeasesTx } from './repositories/leases.ts'
import type { OverviewReads } from './repositories/overview.ts'
import type { PortalReads, PortalTx } from './repositories/portal.ts'
import type { ReportReads } from './repositories/reports.ts'
import type { SubscriptionReads, SubscriptionsTx } from './repositories/subscriptions.ts'
import type { UpcomingTx } from './repositories/upcoming.ts'
import type { WebhookReads, WebhooksTx } from './repositories/webhooks.ts'

export * from './repositories/accounts.ts'
export * from './repositories/catalog.ts'
export * from './repositories/subscriptions.ts'
export * from './repositories/events.ts'
export * from './repositories/idempotency.ts'
export * from './repositories/installments.ts'
export * from './repositories/leases.ts'
export * from './repositories/webhooks.ts'
export * from './repositories/deliveries.ts'
export * from './repositories/emails.ts'
export * from './repositories/upcoming.ts'
export * from './repositories/portal.ts'
export * from './repositories/overview.ts'
export * from './repositories/reports.ts'
export * from './repositories/imports.ts'

export type StoreKind = 'sqlite' | 'postgres'

export interface Reads {
  readonly accounts: AccountReads
  readonly catalog: CatalogReads
  readonly subscriptions: SubscriptionReads
  readonly events: EventReads
  readonly idempotency: IdempotencyReads
  readonly installments: InstallmentReads
  readonly leases: LeaseReads
  readonly webhooks: WebhookReads
  readonly deliveries: DeliveryReads
  readonly portal: PortalReads
  readonly overview: OverviewReads
  readonly emails: EmailReads
  readonly reports: ReportReads
}

/** Everything a unit of writes may do. Writes exist only here: a write outside a unit does not compile. */
export interface Tx {
  readonly accounts: AccountsTx
  readonly catalog: CatalogTx
  readonly subscriptions: SubscriptionsTx
  readonly events: EventsTx
  readonly idempotency: IdempotencyTx
  readonly installments: InstallmentsTx
  readonly leases: LeasesTx
  readonly webhooks: WebhooksTx
  readonly deliveries: DeliveriesTx
  readonly imports: ImportsTx
  readonly portal: PortalTx
  readonly overview: OverviewReads
  readonly emails: EmailsTx
  readonly upcoming: UpcomingTx
  readonly reports: ReportReads
}

export type Unit<T> = (tx: Tx) => Promise<T>

/**
 * What a unit runs on behalf of (C18). `actor` and `requestId` go on every event the unit writes
 * (bulk statements included); `dryRun` makes the unit run, answer, and roll back: nothing it did
 * is kept (SQLite: its savepoint is rolled back, and the body cache neither serves it nor learns
 * from it; PostgreSQL: its transaction is rolled back; sequences, which are not transactional,
 * keep the ids it took).
 */
export interface UnitContext {
  readonly actor: Actor
  readonly requestId: string | null
  readonly dryRun: boolean
  /**
   * PostgreSQL: the request was admitted on a cached API key, not yet checked. The unit checks the
   * credentials' generation in its first round trip (with BEGIN) and marks it `verified`, or
   * rejects with CredentialsMoved before it runs (api/kit/auth.ts).
   */
  readonly credentials?: CredentialCheck | undefined
}

/** A cached key's generation (ActiveApiKey.generation), and whether a statement has confirmed it. */
export interface CredentialCheck {
  readonly generation: number
  verified: boolean
}

/** The credentials' generation moved since the request's key was cached: the request runs again with its key read anew. */
export class CredentialsMoved extends Error {
  constructor() {
    super('an API key was revoked since this key was cached')
  }
}

/** Work no request asked for and that is not processing: the CLI, imports, retention (C18 `system`). */
export const SYSTEM_UNIT: UnitContext = Object.freeze({ actor: Object.freeze({ type: 'system', id: null }), requestId: null, dryRun: false })

/** The processor's units (C18 `processor`). */
export const PROCESSOR_UNIT: UnitContext = Object.freeze({ actor: Object.freeze({ type: 'processor', id: null }), requestId: null, dryRun: false })

export interface Store extends Reads {
  readonly kind: StoreKind
  /**
   * Runs `unit` as one unit of work: it commits, durably, before the promise resolves, or rolls
   * back whole and rejects. SQLite: a savepoint of the shared batch (group commit). `context`
   * (SYSTEM_UNIT when absent) names who it runs for; a dry one is rolled back once it answers.
   */
  write<T>(unit: Unit<T>, context?: UnitContext): Promise<T>
  /**
   * True when units asked for together (without awaiting one another) run in the order asked and
   * share commits: SQLite's one writer. Without it (PostgreSQL: a pooled connection per unit) they
   * run concurrently in no promised order, so a caller that needs an order awaits each unit
   * before asking for the next (issue 25: bulk outcomes).
   */
  readonly writesInOrder?: true
  /** A long batch job (a processor run): SQLite checkpoints its WAL less often meanwhile. */
  bulk<T>(job: () => Promise<T>): Promise<T>
  /** Why the store cannot serve now (/readyz), or undefined when it can. */
  problem(): Promise<string | undefined>
  /** Backend gauges for /metrics, in the Prometheus text format. */
  metricsText(): Promise<string>
  /** A consistent online copy into a file (SQLite); other backends refuse with their own tool's name. */
  backup(target: string): Promise<void>
  /**
   * Changes whenever another connection (another process) commits: a long job that shares the
   * database with a server leaves it room while this moves (SQLite's `data_version`; a server
   * database, whose writers do not wait for one another, may answer a constant).
   */
  externalChanges(): number
  /**
   * For `serve`: a tiny real write whenever nothing was written for `idleMs`, so `problem()`
   * learns that writes fail (a full disk, a lock held elsewhere) even when no client writes.
   */
  startHeartbeat(idleMs: number): void
  /** Ends background work (SQLite's checkpoint thread) before `close`. */
  stopBackground(): Promise<void>
  close(): Promise<void>
}
