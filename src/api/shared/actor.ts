import type { Ctx } from '../../http/types.ts'
import type { Actor } from '../../domain/types.ts'

/**
 * Who a request acts as (C18), set by authentication (auth.ts) and read when the request's units
 * run (endpoint.ts stamps their events with it). Kept beside the request rather than on it: the
 * http layer knows nothing of actors.
 */
const actors = new WeakMap<Ctx, Actor>()

export const STAFF_BY_CONFIGURED_TOKEN: Actor = Object.freeze({ type: 'staff', id: null })

export function actAs(ctx: Ctx, actor: Actor): void {
  actors.set(ctx, actor)
}

/** The authenticated caller's actor. A write before authentication is a bug, never a guess. */
export function actorOf(ctx: Ctx): Actor {
  const actor = actors.get(ctx)
  if (actor === undefined) throw new Error(`${ctx.method} ${ctx.route} wrote before it authenticated its caller`)
  return actor
}
