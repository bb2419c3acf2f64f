/**
 * The database cannot serve a request now and is expected to again without anyone changing
 * replenish: PostgreSQL cannot be reached, restarts, or does not answer in time; the disk is full.
 * Not a bug of ours, so not a 500: http answers 503 with Retry-After for it (src/http/respond.ts
 * knows it by its shape, `reason` + `since` + `retryAfterSeconds`, and imports nothing of ours),
 * and a command exits 1 (transient). Its message is its reason; the database's own error is its
 * `cause`.
 */
export class StoreUnavailable extends Error {
  override readonly name: string = 'StoreUnavailable'
  /** What is wrong, in an operator's words (logs; never a client's answer). */
  readonly reason: string
  /** When this outage began (ms since the epoch): every failure of one outage carries the same, so it is logged once. */
  readonly since: number
  /** What a 503 tells the client to wait before it tries again. */
  readonly retryAfterSeconds: number

  constructor(reason: string, since: number, retryAfterSeconds: number, cause: unknown) {
    super(reason, { cause })
    this.reason = reason
    this.since = since
    this.retryAfterSeconds = retryAfterSeconds
  }
}

/**
 * Whether the database is in an outage, and since when: the first failure starts one, and a
 * success of something asked after that ends it (an answer already on its way when the server
 * went down says nothing). A store keeps one, so that every failure of an outage reports its start.
 */
export class Outage {
  private start: number | undefined = undefined
  /** performance.now() at the start: asked-at times are taken on the monotonic clock. */
  private startMono = 0

  /** A failure: the start of the outage it belongs to (now, when none was going on). */
  failed(): number {
    if (this.start === undefined) {
      this.start = Date.now()
      this.startMono = performance.now()
    }
    return this.start
  }

  /** A success of something asked at `askedAt` (performance.now()): the outage, if any, is over when it was asked during it. */
  succeeded(askedAt: number): void {
    if (this.start !== undefined && askedAt >= this.startMono) this.start = undefined
  }
}

/**
 * One unit's lock waited on in vain (PostgreSQL's lock_timeout): a 503 with Retry-After like an
 * outage's, since sending the request again soon succeeds, but no outage: the database answered,
 * and http logs each one with its request id.
 */
export class StoreContended extends StoreUnavailable {
  override readonly name = 'StoreContended'
  readonly alone = true
}
