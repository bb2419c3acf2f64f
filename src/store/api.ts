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
 */
import type { Actor, EventRecord, PaymentMethod, PaymentSource, PricedLineItem, State, Subscribable, SubscribableFields, Subscription, SubscriptionPatch, User } from '../domain/types.ts'
import type { Attempt, Installment, InstallmentState } from '../domain/installment.ts'
import type { DueFields } from '../domain/processing.ts'
import type { IntervalUnit } from '../domain/dates.ts'
import type { NewSubscription } from '../domain/subscription-input.ts'
import type { ImportRecord, ImportRefusal, StoredImportRow } from '../domain/import/records.ts'
import type { PrefixRange } from '../domain/search.ts'
import type { MailKind, MailState } from '../domain/mail/kinds.ts'
import type { Language } from '../domain/messages.ts'

export type StoreKind = 'sqlite' | 'postgres'

/** A subscription's C3 body as JSON text, with its owner for the C2 check. */
export interface SubscriptionJson {
  readonly user_id: number
  readonly body: string
}

export interface ApiKeyRecord {
  readonly id: number
  readonly user_id: number
  readonly prefix: string
  readonly created_at: string
  readonly updated_at: string
  readonly revoked_at: string | null
  /** Written at most once a minute per key (docs/decisions.md), so exact to about a minute. */
  readonly last_used_at: string | null
}

/** What authentication reads of a key that is not revoked. */
export interface ActiveApiKey {
  readonly id: number
  readonly user_id: number
  readonly last_used_at: string | null
}

/** C13: what an admin token may do. `admin`: everything; `read`: GET/HEAD on the admin API; `metrics`: GET /metrics. */
export const ADMIN_SCOPES = ['admin', 'read', 'metrics'] as const
export type AdminScope = (typeof ADMIN_SCOPES)[number]

/** A stored admin token as it is listed: never the token, only its first characters. */
export interface AdminTokenRecord {
  readonly id: number
  readonly label: string | null
  readonly scope: AdminScope
  readonly prefix: string
  readonly created_at: string
  readonly updated_at: string
  readonly last_used_at: string | null
}

export type PaymentSourceFields = Omit<PaymentSource, 'id' | 'created_at' | 'updated_at'>

export interface StoredResponse {
  readonly fingerprint: string
  readonly status: number
  readonly body: string
}

export interface LeaseHolder {
  readonly holder: string
  readonly expires_at: number
}

export interface AdminSubscriptionFilter {
  readonly after: number
  readonly limit: number
  readonly state?: string | undefined
  readonly userId?: number | undefined
  readonly actionableBefore?: string | undefined
  /** C18: only paused (true) or only not paused (false) ones. */
  readonly paused?: boolean | undefined
}

/**
 * One subscription as the CSV export lists it (C18): its fields, its owner's email and external
 * id, and its line items' quantities and catalog names in C3's order (by line item id).
 */
export interface SubscriptionExportRow {
  readonly subscription: Subscription
  readonly user_email: string | null
  readonly user_external_id: string | null
  readonly items: readonly ExportItem[]
}

export interface ExportItem {
  readonly quantity: number
  readonly sku: string
  readonly name: string
}

export interface AdminInstallmentFilter {
  readonly after: number
  readonly limit: number
  readonly state?: string | undefined
  readonly subscriptionId?: number | undefined
  readonly userId?: number | undefined
  /** Both bounds exclusive, as `actionableBefore` is (decisions.md, "Admin search"). */
  readonly dueAfter?: string | undefined
  readonly dueBefore?: string | undefined
}

/** C13 search: exact matches; `email` ignores case as the unique index does. */
export interface UserFilter {
  readonly email?: string | undefined
  readonly externalId?: string | undefined
  /**
   * C18 `q`: users whose email, external id or email after `@` (each ASCII-folded) falls in this
   * range, that is starts with the folded prefix (src/domain/search.ts); indexed on both stores.
   */
  readonly prefix?: PrefixRange | undefined
}

export interface InstallmentChange {
  readonly state: InstallmentState
  readonly retry_at: string | null
  readonly first_failed_at: string | null
  readonly replayable_attempt_id: number | null
}

/** What the processor needs of a due subscription, and where it sits in the due index (its floor). */
export type DueRow = DueFields & { readonly id: number; readonly has_items: boolean; readonly due_floor: string | null; readonly currency: string }

/** One installment to make, and the subscription's state and next date once it is made. */
export interface BatchPlan {
  readonly subscription_id: number
  readonly due_date: string
  readonly actionable_date: string | null
  readonly state: State
  /**
   * The subscription already has `state` and is not paused: the store may leave both columns
   * alone (SQLite then touches no index keyed by them: migration 10's recurring index).
   */
  readonly keeps_state?: boolean
  /** The subscription's currency, when the caller read it: the store counts the installments made by it (C16's report) without reading them back. */
  readonly currency?: string
}

/** A registered webhook endpoint as the admin API shows it: never with its secrets. */
export interface WebhookEndpoint {
  readonly id: number
  readonly url: string
  /** Event types (C10), or `["*"]` for all. */
  readonly events: readonly string[]
  readonly description: string | null
  /** C18: gets no new deliveries and sends none; what it has pending waits for it. */
  readonly disabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

/** A change to an endpoint (C18: PATCH); what is absent stays as it is. */
export interface WebhookEndpointPatch {
  readonly url?: string
  readonly events?: readonly string[]
  readonly description?: string | null
  readonly disabled?: boolean
}

export interface NewWebhookEndpoint {
  readonly url: string
  readonly events: readonly string[]
  readonly description: string | null
  readonly secret: string
}

/** What a delivery signs with (C10, C13): the secret, and the one before it until it expires. */
export interface WebhookSecrets {
  readonly secret: string
  readonly previous_secret: string | null
  readonly previous_secret_expires_at: string | null
}

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

/** A user's e-mail settings (C17): `locale` null follows REPLENISH_DEFAULT_LOCALE. */
export interface UserSettings {
  readonly locale: Language | null
  readonly email_notifications: boolean
}

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

/** What the processor reads of a subscription to tell whether it is upcoming (C17), in the due index's order. */
export interface UpcomingRow {
  readonly id: number
  readonly state: State
  readonly actionable_date: string | null
  readonly end_date: string | null
  /** Read only for a row dated inside the window and not told of that date yet; false for the others. */
  readonly has_items: boolean
  /** The date a `subscription.upcoming` event was last written for. */
  readonly upcoming_for: string | null
  readonly due_floor: string | null
}

// ---- Repositories: reads (on the Store and in a unit) -------------------------------------

export interface AccountReads {
  findUser(id: number): Promise<User | undefined>
  /** Some user has this email (in any case); `exceptUserId`'s own does not count. */
  emailTaken(email: string, exceptUserId?: number): Promise<boolean>
  listUsers(after: number, limit: number, filter?: UserFilter): Promise<User[]>
  apiKeyHashExists(keyHash: string): Promise<boolean>
  findApiKey(id: number): Promise<ApiKeyRecord | undefined>
  /** A user's keys, revoked ones included, by id after `after`. */
  listApiKeys(userId: number, after: number, limit: number): Promise<ApiKeyRecord[]>
  userIdForKeyHash(keyHash: string): Promise<number | undefined>
  /** The key this hash names, unless revoked (the customer API authenticates with it on a cache miss). */
  activeApiKeyByHash(keyHash: string): Promise<ActiveApiKey | undefined>
  adminTokenExists(tokenHash: string): Promise<boolean>
  /** The token this hash names, unless revoked (authentication reads this on every admin request). */
  adminTokenByHash(tokenHash: string): Promise<AdminTokenRecord | undefined>
  /** A token that is not revoked. */
  findAdminToken(id: number): Promise<AdminTokenRecord | undefined>
  /** Tokens that are not revoked, by id after `after`. */
  listAdminTokens(after: number, limit: number): Promise<AdminTokenRecord[]>
}

/** A question validation asks of the catalog (src/domain's Lookups), answered by `CatalogReads.answer`. */
export type CatalogQuestion =
  | { readonly kind: 'payment'; readonly method: number; readonly source: number; readonly user: number }
  | { readonly kind: 'item'; readonly id: number }

export interface CatalogReads {
  /** Every question at once, answers in the same order: one call (one round trip) per validation. */
  answer(questions: readonly CatalogQuestion[]): Promise<boolean[]>
  findPaymentMethod(id: number): Promise<PaymentMethod | undefined>
  listPaymentMethods(after: number, limit: number): Promise<PaymentMethod[]>
  findPaymentSource(id: number): Promise<PaymentSource | undefined>
  listPaymentSources(userId: number | undefined, after: number, limit: number): Promise<PaymentSource[]>
  /** C6: the method exists and is active; the source exists, is the user's and the method's. */
  paymentIsValid(methodId: number, sourceId: number, userId: number): Promise<boolean>
  findSubscribable(id: number): Promise<Subscribable | undefined>
  subscribableIdForSku(sku: string): Promise<number | undefined>
  listSubscribables(after: number, limit: number): Promise<Subscribable[]>
  isSubscribable(id: number): Promise<boolean>
}

export interface SubscriptionReads {
  /** The GET body (SQLite: from the body cache, never stale). */
  findJson(id: number): Promise<SubscriptionJson | undefined>
  /** GET bodies of these subscriptions, in the order of `ids` (missing ones left out). */
  findJsonMany(ids: readonly number[]): Promise<string[]>
  find(id: number): Promise<Subscription | undefined>
  idsOfUser(userId: number, state: State | undefined, offset: number, limit: number): Promise<number[]>
  countOfUser(userId: number, state: State | undefined): Promise<number>
  adminList(f: AdminSubscriptionFilter): Promise<Subscription[]>
  /** The admin list's page with what the CSV export shows besides (C18): one batch of an export, by id. */
  exportBatch(f: AdminSubscriptionFilter): Promise<SubscriptionExportRow[]>
  /** Line items are answered priced as the catalog says now (C16), in their subscription's currency. */
  lineItems(subscriptionId: number): Promise<PricedLineItem[]>
  lineItemsOfMany(ids: readonly number[]): Promise<Map<number, PricedLineItem[]>>
  /** A line item with its subscription's owner (C2: a line item is owned through its subscription). */
  findLineItem(id: number): Promise<(PricedLineItem & { owner_id: number }) | undefined>
  lineItemById(id: number): Promise<PricedLineItem | undefined>
}

export interface EventReads {
  /** Newest first. */
  ofSubscription(subscriptionId: number, offset: number, limit: number): Promise<EventRecord[]>
  countOfSubscription(subscriptionId: number): Promise<number>
  /** The cursor feed (C10): events after `after`, oldest first. */
  feed(after: number, limit: number, type: string | undefined): Promise<EventRecord[]>
}

export interface IdempotencyReads {
  find(scope: string, key: string, notBefore: string): Promise<StoredResponse | undefined>
}

export interface InstallmentReads {
  find(id: number): Promise<Installment | undefined>
  listOfSubscription(subscriptionId: number, offset: number, limit: number): Promise<Installment[]>
  countOfSubscription(subscriptionId: number): Promise<number>
  adminList(f: AdminInstallmentFilter): Promise<Installment[]>
  /** Attempts of these installments, oldest first. */
  attemptsOf(installmentIds: readonly number[]): Promise<Map<number, Attempt[]>>
  countByState(): Promise<Record<InstallmentState, number>>
  countRetriesDue(nowIso: string): Promise<number>
  /** The oldest date of a subscription that is due and has something to deliver (/metrics, /readyz). */
  oldestDue(today: string): Promise<string | null>
  /**
   * Acting subscriptions whose floor (the due index's key) is up to `today`: the due ones, and
   * those a skip moved past today whose floors were not lifted yet (`liftDueFloors`).
   */
  countDue(today: string): Promise<number>
  maxSubscriptionId(): Promise<number>
}

export interface LeaseReads {
  /** Start of the newest processor run that finished, or null. */
  lastCompletedRunStart(): Promise<string | null>
}

export interface WebhookReads {
  /** An endpoint that exists (a deleted one is gone). */
  findEndpoint(id: number): Promise<WebhookEndpoint | undefined>
  listEndpoints(after: number, limit: number): Promise<WebhookEndpoint[]>
  /** For signing only: never rendered, never logged. */
  secretsOf(id: number): Promise<WebhookSecrets | undefined>
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

/** A portal link just used (C14): whose portal it opens, and where "back to the shop" leads. */
export interface PortalLinkUse {
  readonly user_id: number
  readonly return_url: string | null
}

/** A live portal session (C14): found by the hash of its cookie's id. */
export interface PortalSession {
  readonly id: number
  readonly user_id: number
  readonly csrf_token: string
  readonly return_url: string | null
  /** Idle expiry, ISO 8601: moved on by `touchSession`. */
  readonly expires_at: string
  readonly touched_at: string
}

export interface PortalReads {
  /** The session, unless it expired before `now` or its user was erased. */
  sessionByHash(sessionHash: string, now: string): Promise<PortalSession | undefined>
  /**
   * Where a link leads back to, used or expired alike (C18: the 410 page links there): its
   * `return_url`, or null when it has none, is unknown (pruned a day after expiry) or its user was erased.
   */
  returnUrlOfLink(tokenHash: string): Promise<string | null>
}

/** Ids `after` < id <= `upto`: a range of rows the dashboard's tallies read at a time. */
export interface IdRange {
  readonly after: number
  readonly upto: number
}

/**
 * The staff dashboard's count of a range of subscriptions (src/admin/overview.ts): by state;
 * `paused` among them (active ones); and per actionable date, those that will make an installment
 * on it (C9: acting, with a line item), dates up to the one asked for.
 */
export interface SubscriptionTally {
  readonly by_state: Record<State, number>
  readonly paused: number
  readonly due: Readonly<Record<string, number>>
}

/** Outcomes recorded on one day (installment attempts, C9), by result. */
export interface OutcomeDay {
  readonly date: string
  readonly fulfilled: number
  readonly failed: number
  readonly payment_failed: number
  readonly out_of_stock: number
}

/** From instant `from` (ISO) on, until the next segment, local time is UTC + `offset_minutes`. */
export interface OffsetSegment {
  readonly from: string
  readonly offset_minutes: number
}

/**
 * Reads only the staff dashboard makes: tallies over whole tables, each over a range of ids, so
 * the caller reads a large table in steps and lets other requests run in between.
 */
export interface OverviewReads {
  subscriptionIds(): Promise<IdRange>
  tallySubscriptions(after: number, upto: number, dueThrough: string): Promise<SubscriptionTally>
  /** The installment attempts recorded from `fromIso` on (ids follow time). */
  attemptIds(fromIso: string): Promise<IdRange>
  /** Outcomes of the attempts in the range, per local day (`segments`: the zone's offsets up to `toIso`). */
  tallyOutcomes(after: number, upto: number, segments: readonly OffsetSegment[], toIso: string): Promise<OutcomeDay[]>
  /** The webhook deliveries made from `sinceMs` on. */
  deliveryIds(sinceMs: number): Promise<IdRange>
  /** Deliveries in the range, made from `sinceMs` on, given up on (C10: failed). */
  countFailedDeliveries(after: number, upto: number, sinceMs: number): Promise<number>
  /** Deliveries pending after at least one failed attempt. */
  countRetryingDeliveries(): Promise<number>
  /** A subscription's events, newest first, older than the event `before` (0: from the newest). */
  eventsOfSubscription(subscriptionId: number, before: number, limit: number): Promise<EventRecord[]>
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

/** C16's recurring report: acting, unpaused subscriptions of one currency in a range of ids, by interval. */
export interface RecurringGroup {
  readonly interval_units: IntervalUnit
  readonly interval_length: number
  readonly subscriptions: number
  /** Those with a null total (a line without a price in the currency). */
  readonly unpriced: number
  /** Σ of the others' totals (C16: each line's discount rounded half-up), in minor units, as a decimal string. */
  readonly total_minor: string
}

/** C16's monthly report: one UTC month's counts (report_months, migration 10), every shard summed. */
export interface ReportMonth {
  readonly month: string
  readonly new_subscriptions: number
  readonly canceled_subscriptions: number
  /** Subscriptions that started acting less those that stopped, in the month. */
  readonly active_change: number
  readonly installments_made: number
  readonly installments_fulfilled: number
  /** Σ of the fulfilled installments' frozen totals, in minor units, as a decimal string. */
  readonly fulfilled_total_minor: string
}

/** The reads of the shop's reports (src/admin/reports.ts). */
export interface ReportReads {
  subscriptionIds(): Promise<IdRange>
  recurring(currency: string, after: number, upto: number): Promise<RecurringGroup[]>
  /** The months from `from` through `to` that have counts (others have none), in order, and the active change of every month before `from`. */
  months(currency: string, from: string, to: string): Promise<{ readonly active_before: number; readonly months: readonly ReportMonth[] }>
}

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

// ---- Repositories inside a unit: the reads above, the locking reads, and the writes ------------

export interface AccountsTx extends AccountReads {
  /** `settings` left out: the defaults (the service's locale, notifications on). */
  createUser(email: string, externalId: string | null, settings?: UserSettings): Promise<User>
  updateUser(id: number, email: string | null, externalId: string | null, settings: UserSettings): Promise<User>
  /**
   * The user's part of an erasure (C13): email to null, every key revoked, their payment sources'
   * gateway references and their installments' address snapshots blanked, the answers kept for
   * their own Idempotency-Key replays deleted; what is already erased is left alone. Subscriptions
   * are the caller's: their changes write events.
   */
  eraseUser(id: number): Promise<void>
  createApiKey(userId: number, keyHash: string, prefix: string): Promise<ApiKeyRecord>
  revokeApiKey(id: number): Promise<void>
  /** Sets a key's last_used_at to now; the caller decides how often (docs/decisions.md). */
  touchApiKey(id: number): Promise<void>
  createAdminToken(tokenHash: string, prefix: string, scope?: AdminScope, label?: string | null): Promise<number>
  revokeAdminToken(id: number): Promise<void>
  /** Sets last_used_at to now (C13); the caller decides how often (docs/decisions.md). */
  touchAdminToken(id: number): Promise<void>
}

export interface CatalogTx extends CatalogReads {
  createPaymentMethod(name: string, active: boolean): Promise<PaymentMethod>
  updatePaymentMethod(id: number, name: string, active: boolean): Promise<PaymentMethod>
  createPaymentSource(f: PaymentSourceFields): Promise<PaymentSource>
  deletePaymentSource(id: number): Promise<void>
  /** A new catalog item with its prices (C16); the null ones are left out. */
  createSubscribable(f: SubscribableFields): Promise<Subscribable>
  /** Writes every field; prices merge by currency into the item's, null removing one (C16). */
  updateSubscribable(id: number, f: SubscribableFields): Promise<Subscribable>
  deleteSubscribable(id: number): Promise<void>
}

export interface SubscriptionsTx extends SubscriptionReads {
  /** The row a change is decided from, held until the unit ends (PostgreSQL: FOR UPDATE). */
  lock(id: number): Promise<Subscription | undefined>
  /** Every subscription of a user, in id order, held as by `lock`. */
  lockAllOfUser(userId: number): Promise<Subscription[]>
  /** A line item with its owner, its subscription held as by `lock`. */
  lockLineItem(id: number): Promise<(PricedLineItem & { owner_id: number }) | undefined>
  /** Due date of the subscription's newest installment (C7's interval rule), or null. */
  lastDueDate(id: number): Promise<string | null>
  /** A new subscription with its line items (`s.line_items`, in that order); answers its id. */
  create(userId: number, s: NewSubscription, today: string): Promise<number>
  update(sub: Subscription, patch: SubscriptionPatch): Promise<Subscription>
  /** Moves `updated_at` only (a change to its line items). */
  touch(id: number): Promise<void>
  /**
   * The C3 body as it stands inside the unit. `keepLineItems`: the caller changed this
   * subscription and is likely to change it again (SQLite keeps its rendered line items).
   */
  renderJson(id: number, keepLineItems: boolean): Promise<SubscriptionJson | undefined>
  idsWithPaymentSource(sourceId: number): Promise<number[]>
  clearPaymentSource(sourceId: number): Promise<void>
  /** `oneTime`: C17's one-time add-on, delivered by the next installment only. */
  addLineItem(subscriptionId: number, subscribableId: number, quantity: number, oneTime: boolean): Promise<PricedLineItem>
  /** The item as it now stands, priced; a change of quantity alone keeps the item's price and discount as read. */
  updateLineItem(item: PricedLineItem, subscribableId: number, quantity: number): Promise<PricedLineItem>
  deleteLineItem(id: number): Promise<void>
  lineItemsOfSubscribable(subscribableId: number): Promise<PricedLineItem[]>
  /**
   * C17: deletes the one-time line items of these subscriptions (the installment just made for
   * each delivers them) and answers them as they were, priced, in id order, for their events.
   */
  takeOneTimeLines(subscriptionIds: readonly number[]): Promise<PricedLineItem[]>
}

/**
 * The event log. An event records who made it and in which request (C18) without being told:
 * `record` and `recordJson` stamp it with the running unit's context (`UnitContext`: the actor and
 * request id `Store.write` was given), bound into the same INSERT (no extra statement). So a new
 * event type needs nothing more than a `record` call inside a unit whose writer passed the right
 * context: a request's `call.commit` (src/api/shared/endpoint.ts) passes the caller's; the
 * processor passes PROCESSOR_UNIT; a write given none is SYSTEM_UNIT's. A repository that inserts
 * events with SQL of its own (the processor's bulk `installment.created`) binds the same three
 * columns (`actor_type`, `actor_id`, `request_id`) from the context its repository was given.
 */
/** An event just recorded, and its subscription. */
export interface RecordedEvent {
  readonly subscriptionId: number
  readonly eventId: number
}

export interface EventsTx extends EventReads {
  /** Records an event whose object is already JSON text (the C3 body); answers its id. */
  recordJson(type: string, subscriptionId: number | null, objectJson: string): Promise<number>
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

export interface IdempotencyTx extends IdempotencyReads {
  /**
   * Takes the key for this unit before it acts (C5, across instances): answers the response a
   * request with this key already committed since `notBefore`, or undefined, and then the key is
   * this unit's until it ends. PostgreSQL: a placeholder row, so a concurrent claim of the same key
   * (another instance) waits on its unique index for this unit, then finds its answer and replays.
   * SQLite: the one writer serialises units, so a read is enough.
   */
  claim(scope: string, key: string, fingerprint: string, at: string, notBefore: string): Promise<StoredResponse | undefined>
  save(scope: string, key: string, fingerprint: string, status: number, body: string, at: string): Promise<void>
}

export interface InstallmentsTx extends InstallmentReads {
  /** Due subscriptions with ids in (afterId, uptoId], in id order. */
  dueById(today: string, afterId: number, uptoId: number, limit: number): Promise<DueRow[]>
  /** Due subscriptions after the cursor (due_floor, id), in that order. */
  dueByDate(today: string, afterFloor: string, afterId: number, limit: number): Promise<DueRow[]>
  /** Lifts at most `limit` floors that have come due to their rows' dates; answers how many. */
  liftDueFloors(today: string, limit: number): Promise<number>
  /** Subscriptions whose end date passed before today, after the cursor (end_date, id). */
  endingBatch(today: string, afterDate: string, afterId: number, limit: number): Promise<Subscription[]>
  /** Installments, subscriptions moved on and their events; answers the subscriptions that got one. */
  processMany(plans: readonly BatchPlan[], at: string): Promise<ReadonlySet<number>>
  change(id: number, c: InstallmentChange, at: string): Promise<Installment>
  retriesDue(nowIso: string, limit: number): Promise<Installment[]>
  openOf(subscriptionId: number): Promise<Installment[]>
  latestIdOf(subscriptionId: number): Promise<number | undefined>
  lastAttempt(installmentId: number): Promise<Attempt | undefined>
  addAttempt(installmentId: number, result: string, orderReference: string | null, message: string | null, at: string): Promise<Attempt>
  /** Sets `processing_state`; true when it changed. */
  setProcessingState(subscriptionId: number, state: string, at: string): Promise<boolean>
}

export interface LeasesTx extends LeaseReads {
  /**
   * Takes the lease when it is free, expired, already ours, or its holder `isGone`; answers the
   * holder that keeps it otherwise.
   */
  acquire(name: string, holder: string, expiresAt: number, nowMs: number, isGone: (holder: string) => boolean): Promise<LeaseHolder | undefined>
  renew(name: string, holder: string, expiresAt: number): Promise<boolean>
  release(name: string, holder: string): Promise<void>
  startRun(holder: string, asOf: string, at: string): Promise<number>
  finishRun(id: number, processed: number, at: string): Promise<void>
}

export interface WebhooksTx extends WebhookReads {
  createEndpoint(e: NewWebhookEndpoint): Promise<WebhookEndpoint>
  /** A new secret; the current one becomes the previous, valid for `previousValidMs` from now. */
  rotateSecret(id: number, secret: string, previousValidMs: number): Promise<WebhookEndpoint>
  updateEndpoint(id: number, patch: WebhookEndpointPatch): Promise<WebhookEndpoint>
  /** Gone for the API from now on; its secrets are blanked. */
  deleteEndpoint(id: number): Promise<void>
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

export interface PortalTx extends PortalReads {
  createLink(tokenHash: string, userId: number, returnUrl: string | null, expiresAt: string, now: string): Promise<void>
  /** Marks the link used and answers its user, or undefined when it is unknown, used, expired or its user erased. */
  useLink(tokenHash: string, now: string): Promise<PortalLinkUse | undefined>
  createSession(sessionHash: string, userId: number, csrfToken: string, returnUrl: string | null, expiresAt: string, now: string): Promise<void>
  touchSession(id: number, expiresAt: string, now: string): Promise<void>
  deleteSession(sessionHash: string): Promise<void>
  /** Ends every session and unused link of the user (erasure). */
  endAllOf(userId: number): Promise<void>
  /** Deletes links and sessions that expired before `before`. */
  pruneExpired(before: string): Promise<void>
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

/** The processor's walk for C17's upcoming deliveries, through the due index (floor, id). */
export interface UpcomingTx {
  /** At most `limit` acting subscriptions after the cursor, with floors up to `horizon`. */
  scan(today: string, horizon: string, afterFloor: string, afterId: number, limit: number): Promise<UpcomingRow[]>
  /**
   * Marks each subscription as told of `date`, only while it still acts on that date, has an item
   * and was not told of it yet (a compare-and-set; PostgreSQL steps over rows others hold);
   * answers the ids marked, each of which gets its event.
   */
  mark(plans: readonly { readonly id: number; readonly date: string }[]): Promise<number[]>
}

/** An import (C13, docs/import.md): rows brought in with their ids, dates and counters. */
export interface ImportsTx {
  /** The stored row a record names (by id; an API key by its key), in the record's own shape. */
  stored(record: ImportRecord): Promise<StoredImportRow | undefined>
  /** Writes a record `stored` did not find, as given; or answers what it refers to that is missing or taken. */
  insert(record: ImportRecord): Promise<ImportRefusal | undefined>
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
