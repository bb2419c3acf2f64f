import type { Ctx } from '../../http/types.ts'
import type { Actor } from '../../domain/types.ts'

/**
 * Who a request acts as (C18), set by authentication (auth.ts) and read when the request's units
 * run (endpoint.ts stamps their events with it). Kept on the request under a symbol of this
 * module, so the http layer knows nothing of actors. A WeakMap beside the requests did the same
 * for about 1 µs more a request (its entries are ephemerons the GC must trace): 1 % of a PATCH.
 */
const ACTOR = Symbol('actor')
type WithActor = Ctx & { [ACTOR]?: Actor }

export const STAFF_BY_CONFIGURED_TOKEN: Actor = Object.freeze({ type: 'staff', id: null })

export function actAs(ctx: Ctx, actor: Actor): void {
  ;(ctx as WithActor)[ACTOR] = actor
}

/** The authenticated caller's actor. A write before authentication is a bug, never a guess. */
export function actorOf(ctx: Ctx): Actor {
  const actor = (ctx as WithActor)[ACTOR]
  if (actor === undefined) throw new Error(`${ctx.method} ${ctx.route} wrote before it authenticated its caller`)
  return actor
}
