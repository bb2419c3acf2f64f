import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../../http/http-error.ts'
import type { Ctx } from '../../http/types.ts'
import type { App } from './app.ts'

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

/** C2: the admin API answers only to an admin token (the configured one or a stored one). */
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
  if (await app.store.accounts.adminTokenExists(hash)) return
  app.limits.recordFailure(address)
  throw new HttpError(401, { error: 'Invalid admin token.' }, CHALLENGE)
}
