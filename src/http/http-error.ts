/**
 * The one error type a handler throws to answer with a 4xx. Anything else that escapes a handler
 * is a bug: `respond.ts` logs it and answers 500 without its text.
 */
export class HttpError extends Error {
  readonly status: number
  readonly body: object
  readonly headers: Readonly<Record<string, string>> | undefined

  constructor(status: number, body: object, headers?: Record<string, string>) {
    super(`HTTP ${status}`)
    this.name = 'HttpError'
    this.status = status
    this.body = body
    this.headers = headers
  }
}

export const notFound = (): HttpError =>
  new HttpError(404, { error: 'The resource you were looking for could not be found.' })

export const badRequest = (message: string): HttpError => new HttpError(400, { error: message })

/**
 * An error that says the service cannot answer now and will again by itself (its database cannot
 * be reached, or its disk is full): a 503 with Retry-After, not a bug. Known by its shape, not its
 * class, so that http imports nothing of ours; the store's StoreUnavailable has it.
 */
export interface Unavailable {
  /** What is wrong, for the log (never for the client). */
  readonly reason: string
  /** When the outage began (ms since the epoch): its first 503 is logged, the rest are not. */
  readonly since: number
  readonly retryAfterSeconds: number
  /** True when it is this request's alone (a lock waited on in vain), no outage: each is logged. */
  readonly alone?: boolean
}

export function isUnavailable(err: unknown): err is Unavailable {
  const e = err as Partial<Unavailable> | null
  return err instanceof Error && typeof e?.reason === 'string' && typeof e.since === 'number' && typeof e.retryAfterSeconds === 'number'
}
