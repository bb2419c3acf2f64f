import { Budgeted } from '../budgeted.ts'
import { priceJoin } from '../money-sql.ts'

/**
 * The versions of every row subscription `o`'s body is made of, as one text: the subscription's
 * own row, and for each of its line items (by id) the item's row, its catalog item's and its
 * price's in the subscription's currency (`-` without one). `xmin` is the transaction that wrote
 * a row version, so any write to any of these rows, a line item added or deleted, a price set or
 * removed, changes the text, whichever instance, script or tool wrote it. Two versions of one row
 * share an `xmin` only when one transaction wrote both, and no other transaction ever sees the
 * first of them.
 */
export const versionsOf = (o: string): string => `${o}.xmin::text || '/' || coalesce((
    SELECT string_agg(li.id || '.' || li.xmin || '.' || c.xmin || '.' || coalesce(p.xmin::text, '-'), ',' ORDER BY li.id)
    FROM line_items li ${priceJoin(`${o}.currency`)} WHERE li.subscription_id = ${o}.id), '')`

/** A GET body this instance rendered, with the versions it was rendered from. */
export interface KeptBody {
  readonly userId: number
  readonly body: string
  readonly versions: string
  /** When it was rendered (ms since the epoch). */
  readonly at: number
}

/**
 * Kept bodies live at most this long. Transaction ids wrap around after 2^32; a version text read
 * within ten minutes of the one it is compared with cannot come from 4 billion transactions later
 * (that would be 7 million transactions a second).
 */
export const KEPT_BODY_MS = 10 * 60 * 1000

/**
 * Rendered GET bodies of subscriptions on PostgreSQL (issue 30), by id. Unlike SQLite's body
 * cache, nothing here is ever answered on its own word: every GET still reads the versions of the
 * rows its body is made of (`versionsOf`), in the statement that reads the credentials'
 * generation, and the kept body is answered only when they are the ones it was rendered from.
 * So every instance answers what the database holds now (C15); what a hit saves is the body's
 * read and its rendering: a row of three columns instead of twenty-three and the line items' JSON.
 */
export class KeptBodies {
  private readonly bodies: Budgeted<KeptBody>
  private readonly now: () => number
  /** Answers given from a kept body (tests, and the bench's figures). */
  hits = 0

  constructor(maxBytes: number, now: () => number = Date.now) {
    this.bodies = new Budgeted(maxBytes, (kept) => kept.body.length + kept.versions.length)
    this.now = now
  }

  /** The body kept for `id` within KEPT_BODY_MS, or undefined. */
  get(id: number): KeptBody | undefined {
    const kept = this.bodies.get(id)
    if (kept === undefined || this.now() - kept.at <= KEPT_BODY_MS) return kept
    this.bodies.delete(id)
    return undefined
  }

  keep(id: number, userId: number, body: string, versions: string): void {
    this.bodies.set(id, { userId, body, versions, at: this.now() })
  }

  forget(id: number): void {
    this.bodies.delete(id)
  }

  get size(): number {
    return this.bodies.size
  }
}
