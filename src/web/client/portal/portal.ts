import type { Api } from '../lib/api.ts'
import type { SharedKey, Translate } from '../lib/i18n.ts'
import type { PortalKey } from './strings.ts'
import type { PageContext } from '../lib/page.ts'

/** Every key the portal's pages use: the shared ones and its own. */
export type Key = SharedKey | PortalKey

/** GET /portal/api/session (src/web/portal/session-api.ts). */
export interface SessionInfo {
  readonly user: {
    readonly id: number
    readonly email: string | null
    /** C17's e-mail settings: the settings card saves them and updates this copy. */
    locale: string
    email_notifications: boolean
  }
  readonly csrf_token: string
  readonly return_url: string | null
  readonly today: string
  readonly catalogue: readonly CatalogueItem[]
}

export interface CatalogueItem {
  readonly id: number
  readonly sku: string
  readonly name: string
  readonly subscribable: boolean
}

export interface Address {
  readonly [field: string]: string | null
}

/**
 * C16's money on a line: the unit price in the subscription's currency, the item's discount and
 * the line's total (null when the catalog has no price). Optional: a server without prices (before
 * C16) answers none, and the portal then shows none.
 */
export interface Priced {
  readonly price?: string | null
  readonly discount_percent?: string
  readonly total?: string | null
}

export interface LineItem extends Priced {
  readonly id: number
  readonly subscribable_id: number
  readonly quantity: number
  /** C17: on the next delivery only, then removed by the installment that carries it. */
  readonly one_time: boolean
}

/** C16's totals of a subscription or an installment: null when a line has no price. */
export interface Totals {
  readonly currency: string
  readonly subtotal?: string | null
  readonly discount_total?: string | null
  readonly total?: string | null
}

/** The C3 subscription, as much of it as the portal shows. */
export interface Subscription extends Totals {
  readonly id: number
  readonly state: 'active' | 'pending_cancellation' | 'canceled' | 'inactive'
  readonly paused: boolean
  readonly interval_length: number
  readonly interval_units: 'day' | 'week' | 'month' | 'year'
  readonly actionable_date: string | null
  readonly shipping_address: Address | null
  readonly line_items: readonly LineItem[]
  readonly updated_at: string
}

/** A line of an installment: the item as it was when the delivery was made (C9), with its frozen money (C16). */
export interface SnapshotLine extends Priced {
  readonly subscribable_id: number
  readonly name: string
  readonly quantity: number
}

/** An installment (C9) as GET /api/v1/subscriptions/:id/installments answers it, newest due date first. */
export interface Installment extends Totals {
  readonly id: number
  readonly due_date: string
  readonly state: 'pending' | 'retrying' | 'fulfilled' | 'abandoned'
  readonly retry_at: string | null
  readonly line_items: readonly SnapshotLine[]
}

/** A page of the customer API's lists (C3). */
export interface ListPage {
  readonly current_page: number
  readonly pages: number
  readonly total_count: number
}

export interface EventItem {
  readonly id: number
  readonly type: string
  readonly created_at: string
}

/** What every view of the portal gets. */
export interface Portal {
  readonly page: PageContext
  readonly t: Translate<Key>
  readonly api: Api
  readonly session: SessionInfo
  /** The page after the session ended (401): nothing of the customer's stays on screen. */
  sessionEnded(): void
  /** Whether the session still holds: tells "not yours" (401 from the API) from "signed out". */
  stillSignedIn(): Promise<boolean>
}
