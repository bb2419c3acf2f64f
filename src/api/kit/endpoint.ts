import { createHash } from 'node:crypto'
import { HttpError } from '../../http/http-error.ts'
import type { IncomingMessage } from 'node:http'
import type { Ctx, Reply, Route } from '../../http/types.ts'
import { ValidationFailed } from '../../domain/field-errors.ts'
import { negotiateLanguage, type Language } from '../../domain/messages.ts'
import { bearerToken, pendingCredentials, sha256, trustedKeys } from './auth.ts'
import type { App } from './app.ts'
import { actorOf } from './actor.ts'
import type { StoredResponse, Tx, Unit, UnitContext } from '../../store/api.ts'

/**
 * What a handler gets besides the request: the caller's language, and `commit`, which runs
 * the request's unit of work (its reads that decide, its writes, and the rendering of its
 * answer, all through `tx`) and, when the request carries an Idempotency-Key, stores that answer
 * in the same unit, so a replay and the change it replays can never disagree. Every unit runs
 * with the request's context (C18): its events name the caller and the request id, and in a dry
 * run it is rolled back once it has answered.
 */
export interface Call {
  readonly language: Language
  /**
   * C18: `Replenish-Dry-Run: 1`. The units roll back by themselves; a handler that does anything
   * outside the store (posts a webhook, sends mail) must not do it.
   */
  readonly dryRun: boolean
  commit(unit: Unit<Reply>): Promise<Reply>
  /** A unit of its own, with the request's context: for a handler that runs several (bulk outcomes). */
  write<T>(unit: Unit<T>): Promise<T>
}

export type ApiHandler = (ctx: Ctx, call: Call) => Reply | Promise<Reply>

export interface EndpointOptions {
  /** The route answers `Replenish-Dry-Run` (C18: the customer and admin APIs' writes). */
  readonly dryRuns?: boolean
}

const DRY_RUN_HEADER = 'replenish-dry-run'
const DRY_RUN_ANSWER: Readonly<Record<string, string>> = { [DRY_RUN_HEADER]: '1' }

const MAX_KEY_LENGTH = 255
const DAY_MS = 86_400_000

interface Idempotency {
  readonly scope: string
  readonly key: string
  readonly fingerprint: string
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body })

/** A 200 whose body is JSON text already (a body rendered by SQLite, a cached one). */
export const okJson = (raw: string): Reply => ({ status: 200, body: undefined, raw })

/**
 * Keys of the requests running now, per app and not per route: the same key sent to two routes
 * at once is one key in flight (409), whichever route it reached first.
 */
const inFlightOf = new WeakMap<App, Set<string>>()

/**
 * Wraps an API handler: language, 422 rendering, Idempotency-Key replays (C5), the request's unit
 * context (C18: who, which request) and, with `dryRuns`, dry runs (C18): every unit of the request
 * rolls back, no Idempotency-Key is stored, and the answer, whatever it is, says
 * `Replenish-Dry-Run: 1`. Reads ignore the header: they change nothing anyway.
 */
export function endpoint(app: App, handler: ApiHandler, options: EndpointOptions = {}): (ctx: Ctx) => Promise<Reply> {
  const running = inFlightOf.get(app) ?? new Set<string>()
  inFlightOf.set(app, running)
  const confirmsKeys = app.store.kind === 'postgres'
  return async (ctx) => {
    const language = negotiateLanguage(ctx.req.headers['accept-language'] as string | undefined)
    const reads = ctx.method === 'GET' || ctx.method === 'HEAD'
    if (reads || options.dryRuns !== true || !askedForDryRun(ctx)) return guarded(ctx, language, reads, false)
    try {
      return asDryRun(await guarded(ctx, language, reads, true))
    } catch (err) {
      throw err instanceof HttpError ? new HttpError(err.status, err.body, { ...err.headers, ...DRY_RUN_ANSWER }) : err
    }
  }

  /** PostgreSQL's cached keys are confirmed before the answer goes out (auth.ts); SQLite's cache is exact. */
  function guarded(ctx: Ctx, language: Language, reads: boolean, dryRun: boolean): Promise<Reply> {
    return confirmsKeys ? trustedKeys(app, ctx, () => respond(ctx, language, reads, dryRun)) : respond(ctx, language, reads, dryRun)
  }

  function respond(ctx: Ctx, language: Language, reads: boolean, dryRun: boolean): Promise<Reply> {
    // Looked at before any await: a write without an Idempotency-Key (nearly all) pays for none.
    const header = reads ? undefined : ctx.req.headers['idempotency-key']
    if (typeof header === 'string' && header.length > 0) return arrived(ctx, language, header, dryRun)
    return run(ctx, plainCall(ctx, language, dryRun))
  }

  async function run(ctx: Ctx, call: Call): Promise<Reply> {
    try {
      const reply = await handler(ctx, call)
      // A body the handler never read is refused all the same (its units refused it already).
      ctx.checkBody()
      return reply
    } catch (err) {
      throw rendered(err, call.language)
    }
  }

  function plainCall(ctx: Ctx, language: Language, dryRun: boolean): Call {
    // A body that could not be parsed is refused before any unit commits, even by a handler that
    // never reads it (a skip): after the unit's own checks (404, 401), as C2 orders them.
    const write = <T>(unit: Unit<T>): Promise<T> => app.store.write(ctx.bodyRefused ? refusingAfter(ctx, unit) : unit, unitContext(ctx, dryRun))
    return { language, dryRun, commit: write, write }
  }

  /**
   * The same credentials and key arriving while the first is still being authenticated (a read
   * that may finish in any order on a server database) are in flight by order of arrival.
   */
  async function arrived(ctx: Ctx, language: Language, header: string, dryRun: boolean): Promise<Reply> {
    const arrival = `arrival\u0000${bearerToken(ctx) ?? ''}\u0000${header}`
    if (running.has(arrival)) throw new HttpError(409, { error: 'A request with this Idempotency-Key is still being processed' })
    running.add(arrival)
    try {
      return await keyed(ctx, language, header, dryRun)
    } finally {
      running.delete(arrival)
    }
  }

  /**
   * A write with an Idempotency-Key. A dry run goes the same way (a stored answer is replayed, as
   * the real request would be; the key is claimed inside its unit, which rolls back) but stores
   * nothing: the real request with that key later runs for real.
   */
  async function keyed(ctx: Ctx, language: Language, header: string, dryRun: boolean): Promise<Reply> {
    const idem = await idempotencyOf(app, ctx, header)
    if (!idem) return run(ctx, plainCall(ctx, language, dryRun))

    const flightKey = `${idem.scope}\u0000${idem.key}`
    if (running.has(flightKey)) {
      throw new HttpError(409, { error: 'A request with this Idempotency-Key is still being processed' })
    }
    // In flight before the first await: a request with the same key that arrives while this one
    // looks up its stored answer is the 409 above, never a second run.
    running.add(flightKey)
    try {
      // Real time, not the service clock: the 24 h of C5 are wall-clock hours (C8).
      const notBefore = (): string => new Date(Date.now() - DAY_MS).toISOString()
      const stored = await app.store.idempotency.find(idem.scope, idem.key, notBefore())
      if (stored) return replay(stored, idem)
      const save = (tx: Tx, reply: Reply): Promise<void> =>
        tx.idempotency.save(idem.scope, idem.key, idem.fingerprint, reply.status, reply.raw ?? JSON.stringify(reply.body), new Date().toISOString())
      // A dry run's answer is never stored: as if it were, so nothing below stores it either.
      let saved = dryRun
      const plain = plainCall(ctx, language, dryRun)
      const call: Call = {
        ...plain,
        // The key is claimed inside the unit, before it acts: the same key sent at the same time
        // to another instance (PostgreSQL) waits for this unit, then replays its answer (C15).
        commit: (unit) =>
          plain.write(async (tx) => {
            const other = await tx.idempotency.claim(idem.scope, idem.key, idem.fingerprint, new Date().toISOString(), notBefore())
            saved = dryRun || other !== undefined
            if (other) return replay(other, idem)
            const reply = await unit(tx)
            if (!dryRun) await save(tx, reply)
            saved = true
            return reply
          }),
      }
      try {
        const reply = await handler(ctx, call)
        // A refused body is no answer to remember, whether or not the handler read it.
        ctx.checkBody()
        // A handler that answered without writing (a no-op) is remembered all the same.
        if (!saved) await app.store.write((tx) => save(tx, reply))
        return reply
      } catch (err) {
        const answer = rendered(err, language)
        // A refused request (422) is an answer too: a retry gets the same refusal (Stripe does so);
        // unless the refusal is that the key already holds another request's answer, which stays.
        if (answer instanceof HttpError && answer.status === 422 && !saved) await app.store.write((tx) => save(tx, { status: 422, body: answer.body }))
        throw answer
      }
    } finally {
      running.delete(flightKey)
    }
  }
}

/** `unit`, then the body's refusal: the unit's checks answer first, and nothing of it commits. */
function refusingAfter<T>(ctx: Ctx, unit: Unit<T>): Unit<T> {
  return async (tx) => {
    const done = await unit(tx)
    ctx.checkBody()
    return done
  }
}

/** The context every unit of a request runs with (C18), made when the unit is asked for: after authentication. */
function unitContext(ctx: Ctx, dryRun: boolean): UnitContext {
  const credentials = pendingCredentials(ctx)
  return credentials === undefined ? { actor: actorOf(ctx), requestId: ctx.requestId, dryRun } : { actor: actorOf(ctx), requestId: ctx.requestId, dryRun, credentials }
}

/**
 * `Replenish-Dry-Run: 1` asks for a dry run; absent, a real request. Any other value is refused
 * before anything runs: a client that meant a dry run ("true", "yes") must never get a real change
 * (docs/decisions.md, "Dry runs").
 */
function askedForDryRun(ctx: Ctx): boolean {
  const value = ctx.req.headers[DRY_RUN_HEADER]
  if (value === undefined) return false
  if (value === '1') return true
  throw new HttpError(422, { error: 'Replenish-Dry-Run must be 1 (a dry run), or be left out for a real request.' })
}

/**
 * Gives each write of a route table (C18: the customer and admin APIs') `earlyAnswerHeaders`, so
 * that a dry run whose body the server refuses before the handler (400, 413, 415) says
 * `Replenish-Dry-Run: 1` like every other answer to it.
 */
export function withDryRunAnswers(routes: Route[]): Route[] {
  return routes.map(([method, path, handler, options]) =>
    method === 'GET' ? [method, path, handler, options] : [method, path, handler, { ...options, earlyAnswerHeaders: dryRunAnswerOf }])
}

const dryRunAnswerOf = (req: IncomingMessage): Record<string, string> | undefined =>
  req.headers[DRY_RUN_HEADER] === '1' ? DRY_RUN_ANSWER : undefined

const asDryRun = (reply: Reply): Reply => ({ ...reply, headers: { ...reply.headers, ...DRY_RUN_ANSWER } })

/** C5: the stored answer, as it was given; a different request under the same key is refused. */
function replay(stored: StoredResponse, idem: Idempotency): Reply {
  if (stored.fingerprint !== idem.fingerprint) {
    throw new HttpError(422, { error: 'Idempotency-Key was already used with a different request' })
  }
  return { status: stored.status, body: undefined, raw: stored.body, headers: { 'idempotent-replayed': 'true' } }
}

/** A domain refusal becomes its 422 body in the caller's language; anything else passes through. */
function rendered(err: unknown, language: Language): unknown {
  return err instanceof ValidationFailed ? new HttpError(422, err.errors.render(language)) : err
}

/**
 * The Idempotency-Key of a write, or undefined when there is none or the caller's credentials
 * are not valid: then the handler runs and answers 401 itself, so authentication still comes
 * first (C2) and a revoked key can never fetch a stored answer.
 */
async function idempotencyOf(app: App, ctx: Ctx, header: string): Promise<Idempotency | undefined> {
  const scope = await callerScope(app, ctx)
  if (scope === undefined) return undefined
  if (header.length > MAX_KEY_LENGTH) {
    throw new HttpError(422, { error: 'Idempotency-Key is too long (maximum is 255 characters)' })
  }
  return { scope, key: header, fingerprint: fingerprint(ctx) }
}

/**
 * Keys are per caller: a customer is its user (any of its API keys), the shop is its admin
 * token. Checked without the rate limit and failure counters: the handler authenticates again.
 */
async function callerScope(app: App, ctx: Ctx): Promise<string | undefined> {
  const token = bearerToken(ctx)
  if (token === undefined) return undefined
  const hash = sha256(token)
  if (ctx.path.startsWith('/admin/')) {
    const configured = app.config.adminToken
    // Comparing digests: equal-prefix timing tells nothing about the token itself.
    const valid = (configured !== undefined && sha256(configured) === hash) || (await app.store.accounts.adminTokenExists(hash))
    return valid ? `admin:${hash}` : undefined
  }
  // The same answer authenticate() will give: its cache first, so the two never disagree.
  const cached = app.keyCache.get(token)
  const userId = cached !== undefined && cached.generation === undefined && cached.until > Date.now() ? cached.userId : await app.store.accounts.userIdForKeyHash(hash)
  return userId === undefined ? undefined : `user:${userId}`
}

/**
 * The request as C5 compares it: method, path and the parsed body with its keys sorted, so a
 * client that re-encodes the same parameters (other key order or spacing) is still "the same
 * request". PUT and PATCH are different methods here, as C5 says.
 */
function fingerprint(ctx: Ctx): string {
  // A body taken unparsed (an import's JSON Lines), or one refused (answered later, in C2's order:
  // never stored), is compared by its bytes.
  if (ctx.bodyRefused) return sha256(`${ctx.method} ${ctx.path}\nrefused\n${createHash('sha256').update(ctx.rawBody).digest('hex')}`)
  const body = ctx.bodyKind === 'raw' ? createHash('sha256').update(ctx.rawBody).digest('hex') : JSON.stringify(canonical(ctx.body)) ?? ''
  return sha256(`${ctx.method} ${ctx.path}\n${ctx.bodyKind}\n${body}`)
}

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value !== 'object' || value === null) return value
  // No prototype: a `__proto__` key in the body stays an ordinary key of the fingerprint.
  const out: Record<string, unknown> = Object.create(null) as Record<string, unknown>
  for (const key of Object.keys(value).sort()) out[key] = canonical((value as Record<string, unknown>)[key])
  return out
}
