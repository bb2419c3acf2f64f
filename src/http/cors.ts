/**
 * CORS (C13): lets a storefront's own JavaScript, served from a listed origin, call the customer
 * API. Only the listed origins get any CORS header, and only under the path prefix the composition
 * root names (`/api/v1/`): the admin API, /healthz, /readyz and /metrics never do, so a browser
 * page can never read them cross-origin.
 */
import type { Reply } from './types.ts'

export interface CorsOptions {
  /** Normalised origins (`https://shop.example`, as browsers send them); config.ts checks them. */
  readonly origins: readonly string[]
  /** Requests under this prefix may get CORS headers; no other. */
  readonly pathPrefix: string
}

export interface Cors {
  /** The request's origin when it is listed and the path is under the prefix, else undefined. */
  allowedOrigin(path: string, origin: string | undefined): string | undefined
  /** The headers of a preflight's 204; `allow` is the router's Allow list for the path. */
  preflightHeaders(origin: string, allow: string): Record<string, string>
  /** The reply with the headers an actual request from a listed origin gets. */
  decorate(reply: Reply, origin: string): Reply
}

/** What a browser may send beyond the CORS-safelisted headers (X-Request-Id is echoed, C1). */
const ALLOW_HEADERS = 'Authorization, Content-Type, Idempotency-Key, Accept-Language, X-Request-Id, Replenish-Dry-Run'
/** What a page may read beyond the safelisted response headers: the ones our answers mean something by. */
const EXPOSE_HEADERS = 'X-Request-Id, Retry-After, Idempotent-Replayed, WWW-Authenticate, Replenish-Dry-Run'
/**
 * Two hours: Chromium caps a preflight cache at 7200 s, so longer buys nothing there, and it
 * bounds how long a browser keeps an old method list after an upgrade changes the routes.
 * Removing an origin needs no wait: its actual answers lose Access-Control-Allow-Origin at once.
 */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200

/** Undefined when no origin is listed, so the server's hot path pays one check and nothing more. */
export function createCors(options: CorsOptions): Cors | undefined {
  if (options.origins.length === 0) return undefined
  const origins = new Set(options.origins)
  const { pathPrefix } = options
  return {
    allowedOrigin: (path, origin) =>
      origin !== undefined && origins.has(origin) && path.startsWith(pathPrefix) ? origin : undefined,
    preflightHeaders: (origin, allow) => ({
      'access-control-allow-origin': origin,
      'access-control-allow-methods': allow,
      'access-control-allow-headers': ALLOW_HEADERS,
      'access-control-max-age': String(PREFLIGHT_MAX_AGE_SECONDS),
      vary: 'Origin',
    }),
    decorate: (reply, origin) => {
      const vary = reply.headers?.['vary']
      return {
        ...reply,
        headers: {
          ...reply.headers,
          'access-control-allow-origin': origin,
          'access-control-expose-headers': EXPOSE_HEADERS,
          vary: vary === undefined ? 'Origin' : `${vary}, Origin`,
        },
      }
    },
  }
}
