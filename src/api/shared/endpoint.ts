import { HttpError } from '../../http/http-error.ts'
import type { Ctx, Reply } from '../../http/types.ts'
import { ValidationFailed } from '../../domain/field-errors.ts'
import { negotiateLanguage, type Language } from '../../domain/messages.ts'
import { sha256 } from './auth.ts'
import type { App } from './app.ts'

/**
 * What a handler gets besides the request: the caller's language, and `commit`, which runs
 * the request's writes as one unit, renders the answer inside it and, when the request carries
 * an Idempotency-Key, stores that answer in the same unit, so a replay and the change it
 * replays can never disagree.
 */
export interface Call {
  readonly language: Language
  commit(fn: () => Reply): Promise<Reply>
}

export type ApiHandler = (ctx: Ctx, call: Call) => Reply | Promise<Reply>

const MAX_KEY_LENGTH = 255
const DAY_MS = 86_400_000

interface Idempotency {
  readonly scope: string
  readonly key: string
  readonly fingerprint: string
}

export const ok = (body: unknown, status = 200): Reply => ({ status, body })

/** Wraps an API handler: language, 422 rendering, and Idempotency-Key replays (C5). */
export function endpoint(app: App, handler: ApiHandler): (ctx: Ctx) => Promise<Reply> {
  const inFlight = new Set<string>()
  return async (ctx) => {
    const language = negotiateLanguage(ctx.req.headers['accept-language'] as string | undefined)
    const idem = ctx.method === 'GET' ? undefined : idempotencyOf(ctx)
    const render422 = (err: unknown): never => {
      if (err instanceof ValidationFailed) throw new HttpError(422, err.errors.render(language))
      throw err
    }
    if (!idem) {
      const call: Call = { language, commit: (fn) => app.store.write(fn) }
      try {
        return await handler(ctx, call)
      } catch (err) {
        return render422(err)
      }
    }

    const flightKey = `${idem.scope}\u0000${idem.key}`
    if (inFlight.has(flightKey)) {
      throw new HttpError(409, { error: 'A request with this Idempotency-Key is still being processed' })
    }
    const stored = app.store.idempotency.find(idem.scope, idem.key, new Date(Date.now() - DAY_MS).toISOString())
    if (stored) {
      if (stored.fingerprint !== idem.fingerprint) {
        throw new HttpError(422, { error: 'Idempotency-Key was already used with a different request' })
      }
      return { status: stored.status, body: undefined, raw: stored.body, headers: { 'idempotent-replayed': 'true' } }
    }
    const save = (reply: Reply): void => {
      app.store.idempotency.save(idem.scope, idem.key, idem.fingerprint, reply.status, reply.raw ?? JSON.stringify(reply.body), new Date().toISOString())
    }
    const call: Call = {
      language,
      commit: (fn) =>
        app.store.write(() => {
          const reply = fn()
          save(reply)
          return reply
        }),
    }
    inFlight.add(flightKey)
    try {
      return await handler(ctx, call)
    } catch (err) {
      // A refused request (422) is an answer too: a retry gets the same refusal (Stripe does so).
      if (err instanceof ValidationFailed || (err instanceof HttpError && err.status === 422)) {
        const body = err instanceof ValidationFailed ? err.errors.render(language) : err.body
        await app.store.write(() => save({ status: 422, body }))
        throw new HttpError(422, body)
      }
      throw err
    } finally {
      inFlight.delete(flightKey)
    }
  }
}

function idempotencyOf(ctx: Ctx): Idempotency | undefined {
  const header = ctx.req.headers['idempotency-key']
  if (typeof header !== 'string' || header.length === 0) return undefined
  if (header.length > MAX_KEY_LENGTH) {
    throw new HttpError(422, { error: 'Idempotency-Key is too long (maximum is 255 characters)' })
  }
  const auth = ctx.req.headers.authorization ?? ''
  return {
    scope: sha256(typeof auth === 'string' ? auth : ''),
    key: header,
    fingerprint: sha256(`${ctx.method === 'PUT' ? 'PATCH' : ctx.method} ${ctx.path}\n${ctx.rawBody.toString('latin1')}`),
  }
}
