import type { Api } from '../lib/api.ts'
import type { SharedKey, Translate } from '../lib/i18n.ts'
import type { PortalKey } from './strings.ts'
import type { PageContext } from '../lib/page.ts'

/** Every key the portal's pages use: the shared ones and its own. */
export type Key = SharedKey | PortalKey

/** GET /portal/api/session (src/web/portal/session-api.ts). */
export interface SessionInfo {
  readonly user: { readonly id: number; readonly email: string | null; readonly locale: string; readonly email_notifications: boolean }
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

export interface LineItem {
  readonly id: number
  readonly subscribable_id: number
  readonly quantity: number
}

/** The C3 subscription, as much of it as the portal shows. */
export interface Subscription {
  readonly id: number
  readonly state: 'active' | 'pending_cancellation' | 'canceled' | 'inactive'
  readonly paused: boolean
  readonly interval_length: number
  readonly interval_units: 'day' | 'week' | 'month' | 'year'
  readonly actionable_date: string | null
  readonly shipping_address: Address | null
  readonly line_items: readonly LineItem[]
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
