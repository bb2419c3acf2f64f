import { notFound } from '../http/http-error.ts'
import type { Ctx, Reply } from '../http/types.ts'
import type { Tx } from '../store/api.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import type { ApiHandler } from '../api/kit/endpoint.ts'
import { parseId } from '../api/kit/params.ts'

/**
 * An admin change to the row the path's id names (C11): authenticate, then one unit that finds
 * the row through `tx` (404) and acts on it. The row a change is decided from is read inside the
 * unit that writes from it (the store's rule, docs/decisions.md), and `act` looks at the body
 * only after the find: C2's 404 before 422.
 */
export function changeFound<T>(app: App, find: (tx: Tx, id: number) => Promise<T | undefined>, act: (tx: Tx, row: T, ctx: Ctx) => Promise<Reply>): ApiHandler {
  return async (ctx, call) => {
    await authenticateAdmin(app, ctx)
    const id = parseId(ctx.params['id'])
    return call.commit(async (tx) => {
      const row = await find(tx, id)
      if (row === undefined) throw notFound()
      return act(tx, row, ctx)
    })
  }
}
