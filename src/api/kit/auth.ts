import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../../http/http-error.ts'
import type { Ctx, Reply } from '../../http/types.ts'
import type { App } from './app.ts'
import { CredentialsMoved, type AdminScope, type CredentialCheck, type PortalSession, type Tx } from '../../store/api.ts'
import type { Actor } from '../../domain/types.ts'
import { STAFF_BY_CONFIGURED_TOKEN, actAs } from './actor.ts'

const CHALLENGE = { 'www-authenticate': 'Bearer realm="replenish"' }

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
 * `keyCacheMs` is answered from the cache at once, without a read or a promise (the hot path: callers
 * await the answer either way); a revocation clears the cache.
 */
export function authenticate(app: App, ctx: Ctx): number | Promise<number> {
  const key = bearerToken(ctx)
  if (key === undefined) return withoutKey(app, ctx)
  // Keyed by the presented key so a cached caller costs no hash; the hash is only for storage.
  const cached = app.keyCache.get(key)
  if (cached !== undefined && cached.until > Date.now()) {
    if (cached.generation === undefined) return admit(app, ctx, cached.userId, cached.hash, cached.actor)
    // PostgreSQL: a key cached with the credentials' generation is taken on trust only where the
    // request's endpoint confirms it before answering (trustedKeys), else looked up now.
    const trust = (ctx as WithTrust)[TRUST]
    if (trust !== undefined) {
      trust.check = { generation: cached.generation, verified: false }
      trust.key = key
      return admit(app, ctx, cached.userId, cached.hash, cached.actor)
    }
  }
  return lookUpKey(app, ctx, key)
}

/**
 * A request admitted on a PostgreSQL key cache entry, not yet confirmed: `check` goes with each of
 * its units, whose first round trip (BEGIN) also reads the credentials' generation and marks it
 * verified, or refuses to run (CredentialsMoved).
 */
interface Trust {
  check?: CredentialCheck
  key?: string
}
const TRUST = Symbol('trust')
type WithTrust = Ctx & { [TRUST]?: Trust }

/** The check a request's units must make, while its key is taken on trust (endpoint.ts: unitContext). */
export function pendingCredentials(ctx: Ctx): CredentialCheck | undefined {
  const check = (ctx as WithTrust)[TRUST]?.check
  return check !== undefined && !check.verified ? check : undefined
}

/**
 * Runs `answer` (a request's handler) letting `authenticate` take a PostgreSQL key cache entry on
 * trust, and answers only once the key is confirmed: by a unit that read the same generation
 * (units check at BEGIN), else by looking the key up before the answer goes out, so a read or a
 * refusal (404, 422) is never given to a key revoked through another instance (C15; a 401
 * instead). A unit that found the generation moved: the request runs once more, the key read
 * anew. One round trip fewer for every write of a cached key; the same number for the rest.
 */
export async function trustedKeys(app: App, ctx: Ctx, answer: () => Promise<Reply>): Promise<Reply> {
  const trust: Trust = {}
  ;(ctx as WithTrust)[TRUST] = trust
  let reply: Reply | undefined
  let failure: unknown
  try {
    reply = await answer()
  } catch (err) {
    failure = err
  }
  if (failure instanceof CredentialsMoved) {
    if (trust.key !== undefined) app.keyCache.delete(trust.key)
    ;(ctx as WithTrust)[TRUST] = undefined
    return answer()
  }
  if (trust.check !== undefined && !trust.check.verified && trust.key !== undefined) {
    ;(ctx as WithTrust)[TRUST] = undefined
    app.keyCache.delete(trust.key)
    // Admitted already (its rate limit taken): only whether the key still holds.
    await readKey(app, ctx, trust.key)
  }
  if (failure !== undefined) throw failure
  return reply as Reply
}

/**
 * C2 for a read that can check a cached key in its own statement, and the read's answer. A key
 * taken on trust (trustedKeys, PostgreSQL) is confirmed by the read itself when `read`, asked for
 * the credentials' generation, saw the one the key was cached at: a revocation moves it in its own
 * transaction, and the read's snapshot shows both or neither. One statement for a GET instead of
 * two. A moved generation runs the request again with the key read anew (CredentialsMoved); a
 * read that found nothing leaves the key to trustedKeys, which reads it before the 404 goes out.
 * On SQLite `authenticate`'s cache is exact, and `read` is asked for nothing.
 */
export async function authenticatedRead<T extends { readonly generation?: number }>(
  app: App, ctx: Ctx, read: (withGeneration: boolean, userId: number) => Promise<T | undefined>,
): Promise<{ userId: number; found: T | undefined }> {
  const userId = await authenticate(app, ctx)
  const check = pendingCredentials(ctx)
  const found = await read(check !== undefined, userId)
  if (check !== undefined && found !== undefined) {
    if (found.generation !== check.generation) throw new CredentialsMoved()
    check.verified = true
  }
  return { userId, found }
}

async function lookUpKey(app: App, ctx: Ctx, key: string): Promise<number> {
  const found = await readKey(app, ctx, key)
  return admit(app, ctx, found.userId, found.hash, found.actor)
}

/**
 * A stored credential (an API key, an admin token, a portal session) read by `find`, or C2's 401
 * with `refusal`: an address that sent too many unknown ones is refused before the read (429),
 * and each unknown one counts against it.
 */
async function storedCredential<T>(app: App, ctx: Ctx, find: () => Promise<T | undefined>, refusal: object): Promise<T> {
  const address = clientAddress(app, ctx)
  app.limits.checkAddress(address)
  const found = await find()
  if (found === undefined) {
    app.limits.recordFailure(address)
    throw new HttpError(401, refusal, CHALLENGE)
  }
  return found
}

const INVALID_KEY = { error: 'Invalid API key specified.' }

/** The key's user, read now (401 when it is unknown or revoked), and cached. */
async function readKey(app: App, ctx: Ctx, key: string): Promise<{ userId: number; hash: string; actor: Actor }> {
  const hash = sha256(key)
  const found = await storedCredential(app, ctx, () => app.store.accounts.activeApiKeyByHash(hash), INVALID_KEY)
  // Only here, on a cache miss (at most one per key per 10 s): a cached request records nothing.
  noteUse(app, 'API key', found, (tx) => tx.accounts.touchApiKey(found.id))
  const userId = found.user_id
  // C18: a customer's changes are signed with the key's id (one object per cached key, not per request).
  const actor: Actor = { type: 'customer', id: found.id }
  if (app.keyCacheMs > 0) {
    if (app.keyCache.size > 100_000) app.keyCache.clear()
    app.keyCache.set(key, { userId, until: Date.now() + app.keyCacheMs, hash, actor, ...(found.generation === undefined ? {} : { generation: found.generation }) })
  }
  return { userId, hash, actor }
}

const NO_KEY = { error: 'You must specify an API key.' }

// ---- the customer portal's session cookie (C14, docs/console.md) ---------------------------------

export const PORTAL_COOKIE = 'replenish_portal'
export const PORTAL_IDLE_MS = 12 * 3_600_000
/** A session's idle expiry is moved on at most once a minute: a page's reads stay reads. */
const PORTAL_TOUCH_EVERY_MS = 60_000
const CSRF_REFUSED = { error: 'Invalid or missing CSRF token.' }
const SESSION_ENDED = { error: 'Your portal session has ended: open a new link from the shop.' }

/**
 * No API key: C14's portal pages carry a session cookie instead (only when the request has no
 * Authorization header at all); anything else is C2's 401. Out of `authenticate` so that the
 * keyed path, the hot one, stays as small as it was.
 */
function withoutKey(app: App, ctx: Ctx): Promise<number> {
  if (ctx.req.headers.authorization === undefined && ctx.req.headers.cookie !== undefined) return portalUser(app, ctx)
  throw new HttpError(401, NO_KEY, CHALLENGE)
}

async function portalUser(app: App, ctx: Ctx): Promise<number> {
  const session = await portalSession(app, ctx)
  return admit(app, ctx, session.user_id, `portal:${session.id}`, { type: 'portal', id: session.user_id })
}

/**
 * The live portal session the request's cookie names, or 401. A request that may change
 * something (any method but GET and HEAD) must also carry the session's CSRF token in
 * `X-CSRF-Token`, else 403: a page of another site can make the browser send the cookie (127.0.0.1
 * on two ports is one site for SameSite), never read the token.
 */
export async function portalSession(app: App, ctx: Ctx): Promise<PortalSession> {
  const id = cookieValue(ctx.req.headers.cookie, PORTAL_COOKIE)
  if (id === undefined) throw new HttpError(401, NO_KEY, CHALLENGE)
  const now = Date.now()
  const session = await storedCredential(app, ctx, () => app.store.portal.sessionByHash(sha256(id), new Date(now).toISOString()), SESSION_ENDED)
  if (ctx.method !== 'GET' && ctx.method !== 'HEAD' && !sameSecret(ctx.req.headers['x-csrf-token'], session.csrf_token)) {
    throw new HttpError(403, CSRF_REFUSED)
  }
  if (now - Date.parse(session.touched_at) >= PORTAL_TOUCH_EVERY_MS) {
    const touched = (tx: Tx): Promise<void> => tx.portal.touchSession(session.id, new Date(now + PORTAL_IDLE_MS).toISOString(), new Date(now).toISOString())
    app.store.write(touched).catch((err: unknown) => {
      app.logError({ time: new Date().toISOString(), level: 'error', message: `could not extend portal session ${session.id}: ${String(err)}` })
    })
  }
  return session
}

/** One cookie's value from a Cookie header (RFC 6265 §5.4: `name=value` pairs split by `;`). */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=')
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim() || undefined
  }
  return undefined
}

/** Compares digests, so the time taken says nothing about how much of the secret matched. */
function sameSecret(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length === 0) return false
  return timingSafeEqual(Buffer.from(sha256(given), 'hex'), Buffer.from(sha256(expected), 'hex'))
}

function admit(app: App, ctx: Ctx, userId: number, hash: string, actor: Actor): number {
  ctx.userId = userId // before the rate limit, so the log names whoever was refused
  actAs(ctx, actor)
  app.limits.take(hash)
  return userId
}

const FORBIDDEN = { error: "This token's scope does not allow this request." }

/** C13: at most one write of a stored token's or key's last_used_at per minute, so authenticating stays a read. */
const LAST_USED_EVERY_MS = 60_000

type Credential = 'admin token' | 'API key'

/** Per app and kind: stored token or key id → when this process last asked for its last_used_at to be written. */
const touchedOf = new WeakMap<App, Record<Credential, Map<number, number>>>()

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
    if (timingSafeEqual(a, b)) {
      actAs(ctx, STAFF_BY_CONFIGURED_TOKEN)
      return
    }
  }
  const stored = await storedCredential(app, ctx, () => app.store.accounts.adminTokenByHash(hash), { error: 'Invalid admin token.' })
  noteUse(app, 'admin token', stored, (tx) => tx.accounts.touchAdminToken(stored.id))
  if (!scopeAllows(stored.scope, ctx.method, ctx.path)) throw new HttpError(403, FORBIDDEN)
  actAs(ctx, { type: 'staff', id: stored.id })
}

const TOKENS_PATH = '/admin/api/v1/admin_tokens'
const managesTokens = (path: string): boolean =>
  (path === TOKENS_PATH || path.startsWith(`${TOKENS_PATH}/`)) && path !== `${TOKENS_PATH}/current`

/**
 * C13's scopes: `read` is GET and HEAD on the admin API except the admin tokens themselves (their
 * API is scope `admin`; a token may still ask what it is: `/admin_tokens/current`), `metrics` is
 * GET /metrics alone.
 */
export function scopeAllows(scope: AdminScope, method: string, path: string): boolean {
  if (scope === 'admin') return true
  if (scope === 'read') return (method === 'GET' || method === 'HEAD') && path.startsWith('/admin/') && !managesTokens(path)
  return method === 'GET' && path === '/metrics'
}

/**
 * An admin token's or API key's last_used_at without a write per request: written in a unit of
 * its own, not awaited (the request never waits on it), only when the stored value is a minute
 * old or more and this process has not asked for it in the last minute. A failure is logged
 * (with the row's id, never the secret), never the caller's. An API key comes here only when its
 * cache entry is missing or old (lookUpKey), so the stored value trails the real last use by at
 * most a minute and the cache's 10 s.
 */
function noteUse(app: App, kind: Credential, used: { readonly id: number; readonly last_used_at: string | null }, touch: (tx: Tx) => Promise<void>): void {
  const now = Date.now()
  const storedAt = used.last_used_at === null ? 0 : Date.parse(used.last_used_at)
  if (now - storedAt < LAST_USED_EVERY_MS) return
  let touchedByKind = touchedOf.get(app)
  if (!touchedByKind) touchedOf.set(app, (touchedByKind = { 'admin token': new Map(), 'API key': new Map() }))
  const touched = touchedByKind[kind]
  if (now - (touched.get(used.id) ?? 0) < LAST_USED_EVERY_MS) return
  if (touched.size > 10_000) touched.clear()
  touched.set(used.id, now)
  app.store.write(touch).catch((err: unknown) => {
    app.logError({ time: new Date().toISOString(), level: 'error', message: `could not record the use of ${kind} ${used.id}: ${String(err)}` })
  })
}
