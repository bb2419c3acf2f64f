/** Subscriptions and their line items: the repository's records and interfaces, exported by ../api.ts. */
import type { NewSubscription } from '../../domain/subscription-input.ts'
import type { PricedLineItem, State, Subscription, SubscriptionPatch } from '../../domain/types.ts'

/** A subscription's C3 body as JSON text, with its owner for the C2 check. */
export interface SubscriptionJson {
  readonly user_id: number
  readonly body: string
  /** The credentials' generation read in the same statement, when asked for (ActiveApiKey.generation). */
  readonly generation?: number
}

/** A page of a customer's subscriptions: their C3 bodies as JSON text, the count of all of them. */
export interface SubscriptionPage {
  readonly bodies: readonly string[]
  readonly total: number
  /** The credentials' generation read in the same statement, when asked for (ActiveApiKey.generation). */
  readonly generation?: number
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
  /** C16: the catalog's unit amount in the subscription's currency (minor units), null without one. */
  readonly unit_price: number | null
  readonly discount_bp: number
}

/** An ExportItem as both dialects' SQL answers it: `[quantity, sku, name, unit_price, discount_bp]`. */
export type ExportItemValues = [number, string, string, number | null, number]

export interface SubscriptionReads {
  /**
   * The GET body (SQLite: from the body cache, never stale; PostgreSQL: a kept body once the
   * database confirms its rows are unchanged, postgres/kept-bodies.ts). `withGeneration`: PostgreSQL also
   * answers the credentials' generation, read in the same statement (SQLite has none to read).
   */
  findJson(id: number, withGeneration?: boolean): Promise<SubscriptionJson | undefined>
  find(id: number): Promise<Subscription | undefined>
  /**
   * A page of a customer's subscriptions (in `state`, if given) as their GET bodies, in id order,
   * and how many there are in all. `withGeneration`: PostgreSQL also answers the credentials'
   * generation, read in the same statement (as findJson).
   */
  pageOfUser(userId: number, state: State | undefined, offset: number, limit: number, withGeneration?: boolean): Promise<SubscriptionPage>
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

export interface SubscriptionsTx extends SubscriptionReads {
  /**
   * The row a change is decided from, held until the unit ends (PostgreSQL: FOR UPDATE).
   * `forBody`: the unit will answer the subscription's body after changing only its row (a
   * lifecycle step, an update): PostgreSQL reads its line items with it and renders the body
   * from what it holds, without reading it back.
   */
  lock(id: number, forBody?: boolean): Promise<Subscription | undefined>
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
