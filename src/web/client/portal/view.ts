import type { Writes } from '../lib/api.ts'
import type { ConfirmSpec } from '../lib/dialog.ts'
import { h, type Child } from '../lib/dom.ts'
import type { FormFields } from './feedback.ts'
import { slot } from './feedback.ts'
import type { EventItem, Installment, Key, Portal, Subscription } from './portal.ts'

/**
 * One change the customer makes on a subscription's page: a request to the customer API (C5),
 * optionally previewed first as a dry run (C18) in a confirmation that says what it will do.
 */
export interface Change {
  /** The form or button it is made from (its id): the message about it is drawn beside it. */
  readonly at: string
  /** The card it is in: where the message goes when the change took the form or button away. */
  readonly card: string
  /** The API's fields the form edits, with their inputs and labels: a 422 marks them. */
  readonly fields?: FormFields
  /** What to say when it is done. */
  readonly done: Key | ((after: Subscription) => Key)
  /**
   * Ask first: what to ask, given the subscription now and as the dry run answered it. Set only
   * for changes whose `send` answers the subscription.
   */
  readonly confirm?: (before: Subscription, preview: Subscription) => ConfirmSpec
  /** The request, through `api` or through its dry runs; answers the subscription when the route does (else it is read again). */
  readonly send: (api: Writes) => Promise<Subscription | undefined>
}

/** What the cards of a subscription's page are drawn from, and how they ask for a change. */
export interface SubscriptionView {
  readonly portal: Portal
  readonly sub: Subscription
  readonly events: readonly EventItem[]
  readonly installments: readonly Installment[]
  /** Whether older installments than those loaded exist. */
  readonly moreInstallments: boolean
  /** `/api/v1/subscriptions/:id` + suffix. */
  path(suffix?: string): string
  change(change: Change): void
  /** A form's own refusal, before any request (a field it needs left empty): said like the API's. */
  refuse(where: Pick<Change, 'at' | 'card' | 'fields'>, lines: readonly string[]): void
  loadOlderInstallments(): void
}

/** A card of the page, headed, with its own place for messages (`<id>-outcome`) right under the heading. */
export function card(id: string, title: string, children: Child[]): HTMLElement {
  return h('section', { class: 'card', id, 'aria-labelledby': `${id}-heading` }, h('h2', { id: `${id}-heading` }, title), slot(id), children)
}
