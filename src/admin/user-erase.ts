import { cancel } from '../domain/lifecycle.ts'
import type { App } from '../api/kit/app.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { parseId } from '../api/kit/params.ts'
import { applyTransition, presentJson } from '../api/kit/subscription-actions.ts'
import type { Subscription, User } from '../domain/types.ts'
import type { Tx } from '../store/api.ts'
import { changeFound } from './change-found.ts'
import { presentUser } from './users.ts'

/**
 * POST /users/:id/erase (C13, a right-to-erasure request) → 200 with the user after it. One
 * unit: the user's email, keys, payment sources' gateway references, installments' addresses and
 * kept Idempotency-Key answers (`tx.accounts.eraseUser`), then each subscription: addresses
 * blanked, then canceled as the shop cancels (no notice; open installments abandoned), each change
 * with its C10 event. Ids, installments and events stay; events already written keep their data.
 * What is erased already is left as it is, so erasing twice changes nothing.
 * docs/admin-writes.md says why each part.
 */
export const eraseUser = (app: App): ApiHandler => {
  const erase = changeFound(app, (tx, id) => tx.accounts.findUser(id), async (tx, user) => {
    // Installments first: the installment.abandoned events the cancels write then hold no address.
    await tx.accounts.eraseUser(user.id)
    await tx.portal.endAllOf(user.id)
    // C17: nothing more is sent to them, and the mail log keeps no address of theirs.
    await tx.emails.forgetUser(user.id, Date.now())
    const today = app.clock.today()
    for (const sub of await tx.subscriptions.lockAllOfUser(user.id)) {
      const blanked = await blankAddresses(tx, sub)
      const transition = cancel(blanked, today, 0)
      if (transition) await applyTransition(tx, blanked, transition)
    }
    return ok(presentUser(app, (await tx.accounts.findUser(user.id)) as User))
  })
  return async (ctx, call) => {
    const reply = await erase(ctx, call)
    // Their keys stop working at once, not when their cache entries age out (10 s). After the
    // unit, as DELETE /api_keys/:id does: a unit has no effect outside its tx.
    forgetKeysOf(app, parseId(ctx.params['id']))
    return reply
  }
}

/** Both addresses to null, with the events an update that did so would write (C10). */
async function blankAddresses(tx: Tx, sub: Subscription): Promise<Subscription> {
  if (sub.shipping_address === null && sub.billing_address === null) return sub
  const updated = await tx.subscriptions.update(sub, { shipping_address: null, billing_address: null })
  const json = await presentJson(tx, sub.id)
  if (sub.shipping_address !== null) await tx.events.recordJson('subscription.shipping_address_changed', sub.id, json)
  if (sub.billing_address !== null) await tx.events.recordJson('subscription.billing_address_changed', sub.id, json)
  return updated
}

/** Drops the key cache's entries of one user; everyone else's stay cached. */
function forgetKeysOf(app: App, userId: number): void {
  for (const [key, entry] of app.keyCache) if (entry.userId === userId) app.keyCache.delete(key)
}
