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
 *
 * Transaction ids are 32 bits and wrap around; a frozen row keeps the id that wrote it. So the
 * text is NULL (nothing is kept) when any of the rows was written 2^31 or more transactions ago
 * as `age()` counts (or is a permanent id): a kept text is then from under 2^31 transactions
 * before it was read, and a later write can only reuse one of its ids after 2^31 more, which
 * KEPT_BODY_MS (ten minutes) rules out.
 */
export const recent = (xmin: string): string => `age(${xmin}) BETWEEN 0 AND 2147483646`
export const versionsOf = (o: string): string => `(SELECT CASE
    WHEN ${recent(`${o}.xmin`)} AND coalesce(bool_and(${recent('li.xmin')} AND ${recent('c.xmin')} AND (p.xmin IS NULL OR ${recent('p.xmin')})), true)
    THEN ${o}.xmin::text || '/' || coalesce(string_agg(li.id || '.' || li.xmin || '.' || c.xmin || '.' || coalesce(p.xmin::text, '-'), ',' ORDER BY li.id), '') END
  FROM line_items li ${priceJoin(`${o}.currency`)} WHERE li.subscription_id = ${o}.id)`

/** A GET body this instance rendered, with the versions it was rendered from. */
export interface KeptBody {
  readonly userId: number
  readonly body: string
  readonly versions: string
  /** When it was rendered (ms since the epoch). */
  readonly at: number
}

/**
 * Kept bodies live at most this long: a version text is compared only with one read within ten
 * minutes of it, which 2^31 transactions cannot fit in (that would be 3.6 million a second).
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
