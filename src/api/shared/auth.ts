import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../../http/http-error.ts'
import type { Ctx } from '../../http/types.ts'
import type { App } from './app.ts'
import type { AdminScope, AdminTokenRecord } from '../../store/api.ts'

const CHALLENGE = { 'www-authenticate': 'Bearer realm="replenish"' }
const KEY_CACHE_MS = 10_000

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/** `Bearer <token>` (scheme case-insensitive, RFC 7235), or undefined. Never read from the query string. */
export function bearerToken(ctx: Ctx): string | undefined {
  const header = ctx.req.headers.authorization
  if (typeof header !== 'string') return undefined
  const m = /^\s*bearer\s+(\S+)\s*$/i.exec(header)
  return m?.[1]
}

/**
 * The address bad keys are counted against. Behind a reverse proxy every request comes from the
 * proxy, so with REPLENISH_TRUST_PROXY=1 it is the last X-Forwarded-For entry: the one our own
 * proxy appended (earlier entries are whatever the client claimed).
 */
export function clientAddress(app: App, ctx: Ctx): string {
  const socket = ctx.req.socket.remoteAddress ?? 'unknown'
  if (!app.config.trustProxy) return socket
  const forwarded = ctx.req.headers['x-forwarded-for']
  const last = (Array.isArray(forwarded) ? forwarded.join(',') : (forwarded ?? '')).split(',').pop()?.trim()
  return last ? last : socket
}

/**
 * C2: the user the API key belongs to, or 401 with the exact message. A key seen in the last
 * 10 s is answered from the cache at once, without a read or a promise (the hot path: callers
 * await the answer either way); a revocation clears the cache.
 */
export function authenticate(app: App, ctx: Ctx): number | Promise<number> {
  const key = bearerToken(ctx)
  if (key === undefined) throw new HttpError(401, { error: 'You must specify an API key.' }, CHALLENGE)
  // Keyed by the presented key so a cached caller costs no hash; the hash is only for storage.
  const cached = app.keyCache.get(key)
  if (cached !== undefined && cached.until > Date.now()) return admit(app, ctx, cached.userId, cached.hash)
  return lookUpKey(app, ctx, key)
}

async function lookUpKey(app: App, ctx: Ctx, key: string): Promise<number> {
  const hash = sha256(key)
  const address = clientAddress(app, ctx)
  app.limits.checkAddress(address)
  const userId = await app.store.accounts.userIdForKeyHash(hash)
  if (userId === undefined) {
    app.limits.recordFailure(address)
    throw new HttpError(401, { error: 'Invalid API key specified.' }, CHALLENGE)
  }
  if (app.keyCache.size > 100_000) app.keyCache.clear()
  app.keyCache.set(key, { userId, until: Date.now() + KEY_CACHE_MS, hash })
  return admit(app, ctx, userId, hash)
}

function admit(app: App, ctx: Ctx, userId: number, hash: string): number {
  ctx.userId = userId // before the rate limit, so the log names whoever was refused
  app.limits.take(hash)
  return userId
}

const FORBIDDEN = { error: "This token's scope does not allow this request." }

/** C13: at most one write of a stored token's last_used_at per minute, so authenticating stays a read. */
const LAST_USED_EVERY_MS = 60_000

/** Per app: stored token id → when this process last asked for its last_used_at to be written. */
const touchedOf = new WeakMap<App, Map<number, number>>()

/**
 * C2, C13: the admin API and /metrics answer only to an admin token (the configured one, which is
 * scope `admin`, or a stored one that is not revoked), then only within its scope: an unknown
 * token is 401 whatever it asks, a known one outside its scope is 403. The one place scopes are
 * checked. No cache: a revocation holds from the next request on.
 */
export async function authenticateAdmin(app: App, ctx: Ctx): Promise<void> {
  const token = bearerToken(ctx)
  if (token === undefined) throw new HttpError(401, { error: 'You must specify an admin token.' }, CHALLENGE)
  const hash = sha256(token)
  const configured = app.config.adminToken
  if (configured !== undefined) {
    const a = Buffer.from(hash, 'hex')
    const b = Buffer.from(sha256(configured), 'hex')
    if (timingSafeEqual(a, b)) return
  }
  const address = clientAddress(app, ctx)
  app.limits.checkAddress(address)
  const stored = await app.store.accounts.adminTokenByHash(hash)
  if (stored === undefined) {
    app.limits.recordFailure(address)
    throw new HttpError(401, { error: 'Invalid admin token.' }, CHALLENGE)
  }
  noteUse(app, stored)
  if (!scopeAllows(stored.scope, ctx.method, ctx.path)) throw new HttpError(403, FORBIDDEN)
}

/** C13's scopes: `read` is GET and HEAD on the admin API, `metrics` is GET /metrics alone. */
export function scopeAllows(scope: AdminScope, method: string, path: string): boolean {
  if (scope === 'admin') return true
  if (scope === 'read') return (method === 'GET' || method === 'HEAD') && path.startsWith('/admin/')
  return method === 'GET' && path === '/metrics'
}

/**
 * last_used_at without a write per request: written in a unit of its own, not awaited (the
 * request never waits on it), only when the stored value is a minute old or more and this
 * process has not asked for it in the last minute. A failure is logged, never the caller's.
 */
function noteUse(app: App, token: AdminTokenRecord): void {
  const now = Date.now()
  const touched = touchedOf.get(app) ?? new Map<number, number>()
  touchedOf.set(app, touched)
  const storedAt = token.last_used_at === null ? 0 : Date.parse(token.last_used_at)
  if (now - storedAt < LAST_USED_EVERY_MS || now - (touched.get(token.id) ?? 0) < LAST_USED_EVERY_MS) return
  if (touched.size > 10_000) touched.clear()
  touched.set(token.id, now)
  app.store.write((tx) => tx.accounts.touchAdminToken(token.id)).catch((err: unknown) => {
    app.logError({ time: new Date().toISOString(), level: 'error', message: `could not record the use of admin token ${token.id}: ${String(err)}` })
  })
}
