import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { SUBSCRIPTION_COLUMNS, prepareValues } from './rows.ts'
import type { SubscriptionJson } from '../api.ts'
import { Budgeted } from '../budgeted.ts'
export type { SubscriptionJson }

/** The line items' part of a subscription's body: the items as JSONB, and C16's totals of the next delivery. */
export interface LineItemsPart {
  readonly items: Uint8Array
  readonly subtotal: string | null
  readonly discount_total: string | null
  readonly total: string | null
}

const partBytes = (p: LineItemsPart): number => p.items.byteLength + 3 * 16

/**
 * Rendered GET bodies of subscriptions, by id, so an authorized read of an unchanged subscription
 * runs no SQL but one `PRAGMA data_version` (issue 6: about 8 µs of a 37 µs GET). Beside them, the
 * line items' part of a body (JSONB, as SQLite builds it), which changes far less often than the
 * subscription's own columns: a write that renders a subscription it changed (a skip, a pause, an
 * update) then renders only those columns (2.4 µs of a skip's 6.5 µs of rendering).
 *
 * A stale answer is never given, however the data changed:
 * - this connection's writes fire TEMP triggers (they exist for this connection only) on
 *   `subscriptions` and `line_items`, which drop what the changed row is part of, whatever code
 *   path or bulk statement wrote it: a subscription's columns drop its body, a line item drops
 *   its subscription's body and line items, a deleted subscription (or a new currency) both;
 * - a body shows the catalog's prices now (C16): a write to a price or to a catalog item's
 *   discount drops everything (a rare admin write; which subscriptions hold the item is not
 *   indexed: migration 3), so the next read renders each body with the new price;
 * - another process's commits (`replenish process` beside `serve`) change `PRAGMA data_version`,
 *   which is read before every lookup, or once for the GETs of one turn of the event loop, after
 *   they all came in (cache-turn.ts): then everything goes;
 * - a rolled-back unit or batch (`invalidateAll`, called by the writer) may have left entries that
 *   were read from writes that never committed: everything goes.
 *
 * Entries are evicted oldest first once their bytes pass the budget: `maxBytes` for the bodies,
 * half of it again for the line items.
 *
 * While a dry unit runs (C18) the cache is `suspended`: it answers nothing (its entries predate
 * the unit's changes) and takes nothing in, not even the triggers' drops (the unit's changes are
 * rolled back, so what it holds stays true). It comes out of the dry run exactly as it went in.
 */
export class BodyCache {
  private readonly entries: Budgeted<SubscriptionJson>
  private readonly items: Budgeted<LineItemsPart>
  private readonly dataVersion: StatementSync
  private version = -1
  /** Inside `confirmFor`: `data_version` was read after every read now running was asked for. */
  private confirmed = false
  /** A dry unit is running (the writer's `onDryRun`). */
  suspended = false

  constructor(db: DatabaseSync, maxBytes: number) {
    this.entries = new Budgeted(maxBytes, (entry) => entry.body.length)
    this.items = new Budgeted(maxBytes / 2, partBytes)
    this.dataVersion = prepareValues(db, 'PRAGMA data_version')
    db.function('replenish_body_changed', { deterministic: false }, (id) => {
      if (!this.suspended) this.entries.delete(Number(id))
      return null
    })
    db.function('replenish_items_changed', { deterministic: false }, (id) => {
      if (this.suspended) return null
      this.entries.delete(Number(id))
      this.items.delete(Number(id))
      return null
    })
    db.function('replenish_catalog_changed', { deterministic: false }, () => {
      this.invalidateAll()
      return null
    })
    // Created before any statement is prepared on the connection: a schema change would make
    // SQLite re-prepare them all once. A subscription's update counts when it changes one of
    // its own columns, not when only the event chain's bookkeeping moves (migration 2).
    db.exec(`
      CREATE TEMP TRIGGER body_cache_subscription_updated AFTER UPDATE OF ${SUBSCRIPTION_COLUMNS.join(', ')} ON main.subscriptions
        BEGIN SELECT replenish_body_changed(OLD.id); END;
      CREATE TEMP TRIGGER body_cache_subscription_deleted AFTER DELETE ON main.subscriptions
        BEGIN SELECT replenish_items_changed(OLD.id); END;
      CREATE TEMP TRIGGER body_cache_line_item_inserted AFTER INSERT ON main.line_items
        BEGIN SELECT replenish_items_changed(NEW.subscription_id); END;
      CREATE TEMP TRIGGER body_cache_line_item_updated AFTER UPDATE ON main.line_items
        BEGIN SELECT replenish_items_changed(OLD.subscription_id); SELECT replenish_items_changed(NEW.subscription_id); END;
      CREATE TEMP TRIGGER body_cache_line_item_deleted AFTER DELETE ON main.line_items
        BEGIN SELECT replenish_items_changed(OLD.subscription_id); END;
      CREATE TEMP TRIGGER body_cache_currency_changed AFTER UPDATE OF currency ON main.subscriptions
        BEGIN SELECT replenish_items_changed(OLD.id); END;
      CREATE TEMP TRIGGER body_cache_price_inserted AFTER INSERT ON main.subscribable_prices
        BEGIN SELECT replenish_catalog_changed(); END;
      CREATE TEMP TRIGGER body_cache_price_updated AFTER UPDATE ON main.subscribable_prices
        BEGIN SELECT replenish_catalog_changed(); END;
      CREATE TEMP TRIGGER body_cache_price_deleted AFTER DELETE ON main.subscribable_prices
        BEGIN SELECT replenish_catalog_changed(); END;
      CREATE TEMP TRIGGER body_cache_discount_changed AFTER UPDATE OF discount_bp ON main.subscribables WHEN OLD.discount_bp <> NEW.discount_bp
        BEGIN SELECT replenish_catalog_changed(); END;
    `)
  }

  /** The cached body, or undefined; first forgets everything if another connection committed. */
  get(id: number): SubscriptionJson | undefined {
    return !this.suspended && this.current() ? this.entries.get(id) : undefined
  }

  /** The kept line items' part of a subscription's body, checked like `get`. */
  lineItems(id: number): LineItemsPart | undefined {
    return !this.suspended && this.current() ? this.items.get(id) : undefined
  }

  /** `get` for several ids: the other connections' commits are checked once for them all. */
  getMany(ids: readonly number[]): (SubscriptionJson | undefined)[] {
    if (ids.length === 0) return []
    if (this.suspended) return ids.map(() => undefined)
    const first = this.get(ids[0] as number)
    return ids.map((id, i) => (i === 0 ? first : this.entries.get(id)))
  }

  set(id: number, value: SubscriptionJson): void {
    if (!this.suspended) this.entries.set(id, value)
  }

  /** Keeps a subscription's line items (read by the caller after `lineItems` found none). */
  keepLineItems(id: number, part: LineItemsPart): void {
    if (!this.suspended) this.items.set(id, part)
  }

  invalidateAll(): void {
    this.entries.clear()
    this.items.clear()
  }

  /** For tests and metrics. */
  get size(): number {
    return this.entries.size
  }

  /** Subscriptions whose line items are kept (tests). */
  get lineItemsSize(): number {
    return this.items.size
  }

  /**
   * Runs `reads` behind one look at the other connections' commits instead of one look each
   * (cache-turn.ts): only for reads that were all asked for before this call.
   */
  confirmFor(reads: () => void): void {
    this.current()
    this.confirmed = true
    try {
      reads()
    } finally {
      this.confirmed = false
    }
  }

  /** False, after forgetting everything, when another connection has committed since the last look. */
  private current(): boolean {
    if (this.confirmed) return true
    const version = (this.dataVersion.get() as unknown as [number])[0]
    if (version === this.version) return true
    this.invalidateAll()
    this.version = version
    return false
  }
}
