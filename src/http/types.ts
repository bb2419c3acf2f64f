import type { IncomingMessage } from 'node:http'
import type { Encoded } from './compression.ts'

/**
 * What a handler sees of a request. The body is parsed before the handler runs, but a body that
 * could not be (C1's 400 and 415) is refused only when `body` or `bodyKind` is read, or
 * `checkBody` called: C2's order puts authentication, 404 and 401 first.
 */
export interface Ctx {
  readonly req: IncomingMessage
  readonly method: string
  readonly path: string
  /** The route template, e.g. `/api/v1/subscriptions/:id` (logs and metrics use it). */
  readonly route: string
  readonly params: Readonly<Record<string, string>>
  readonly query: URLSearchParams
  /** Parsed JSON or form body; `undefined` when the request had no body. */
  readonly body: unknown
  /**
   * How the body was encoded: JSON bodies get Rails-style root wrapping (C1), forms do not. `raw`:
   * the route takes its body unparsed (RouteOptions.rawBodyType), in `rawBody` only.
   */
  readonly bodyKind: 'json' | 'form' | 'none' | 'raw'
  /** The raw body bytes (idempotency fingerprints hash them). */
  readonly rawBody: Buffer
  /** The body could not be parsed: `checkBody`, `body` and `bodyKind` throw its refusal. */
  readonly bodyRefused: boolean
  /** Throws the body's refusal (400 unparseable, 415 media type), if it had one. */
  checkBody(): void
  readonly requestId: string
  /** Set by authentication so the access log can name the caller. */
  userId: number | null
}

export interface Reply {
  status: number
  body: unknown
  headers?: Record<string, string>
  /** A pre-serialised JSON body (idempotent replays send the stored bytes). */
  raw?: string
  /** Content type for non-JSON answers (`/metrics`, assets; `body` is then a string or a Buffer). */
  contentType?: string
  /**
   * `body` compressed each way already (assets, compression.ts `precompress`): one of them is
   * sent as the client's Accept-Encoding asks, and nothing is compressed per request.
   */
  encoded?: Encoded
  /**
   * The body in pieces, for an answer of any length (C18's CSV exports): each piece is asked for
   * once the client has taken the ones before (backpressure), so memory stays the same however
   * long it runs; compressed on the way when the client accepts it. Not read for HEAD.
   */
  stream?: AsyncIterable<string>
}

export type Handler = (ctx: Ctx) => Reply | Promise<Reply>

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE'

/**
 * What one route changes of the server's body handling: an import takes megabytes of JSON Lines
 * where every other route takes 64 KiB of JSON or form.
 */
export interface RouteOptions {
  /** Largest body this route accepts (413 above), instead of the server's `maxBodyBytes`. */
  readonly maxBodyBytes?: number
  /** The one content type the route takes, handed over unparsed (bodyKind `raw`); any other non-empty body is a 415. */
  readonly rawBodyType?: string
  /**
   * Runs before the body is read (authentication): a route that takes a large body refuses a
   * stranger before holding it in memory. `ctx.body` is not read yet here.
   */
  readonly beforeBody?: (ctx: Ctx) => void | Promise<void>
  /**
   * Headers the handler would have put on its answer, for an answer the server gives before the
   * handler runs (the body refused: 400, 413, 415; `beforeBody`'s refusal): C18's dry runs say
   * `Replenish-Dry-Run: 1` on every answer, these included.
   */
  readonly earlyAnswerHeaders?: (req: IncomingMessage) => Record<string, string> | undefined
}

/** `[method, path template, handler, options?]`: PATCH routes answer PUT too (C1). */
export type Route = readonly [Method, string, Handler, RouteOptions?]

/** What the server reports of each answer; the log line adds its `time` (only when it is written). */
export interface AccessLogEntry {
  method: string
  route: string
  status: number
  ms: number
  request_id: string
  user_id: number | null
}
