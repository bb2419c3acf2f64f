import type { Child } from '../lib/dom.ts'

/** What a page is given: where it is, whether it may offer changes, and how to show their result. */
export interface PageCtx {
  /** The route's segments after the section (`['12']` for `#/subscriptions/12`). */
  readonly params: readonly string[]
  readonly query: URLSearchParams
  /** False for a `read` token: no write control is drawn (and the API would refuse it: 403). */
  readonly canWrite: boolean
  /** Draws the page again, with `message` announced above it (after a change); `failed`: as a failure. */
  refresh(message?: string, failed?: boolean): void
}

export interface PageView {
  readonly title: string
  readonly content: Child
}

export type Page = (ctx: PageCtx) => Promise<PageView>
