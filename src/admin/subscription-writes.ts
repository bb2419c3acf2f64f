import { FieldErrors, ValidationFailed } from '../domain/field-errors.ts'
import { validateCreate, validateUpdate } from '../domain/subscription-input.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { okJson, type ApiHandler } from '../api/kit/endpoint.ts'
import { withLookups } from '../api/kit/lookups.ts'
import { rootObject } from '../api/kit/params.ts'
import { applyValidatedUpdate, createValidated } from '../api/kit/subscription-actions.ts'
import { changeFound } from './change-found.ts'
import { check, requiredId } from './input.ts'

// The shop's writes of a subscription (C13): the customer's rules (C6, C7), from the same domain
// code, with `shop: true`: any actionable_date, past ones included, and the skip counters. Both
// answer C3's body, as the customer's routes do.

/** Runs a domain validation, adding its field errors to `errors` instead of throwing them alone. */
async function collect<T>(errors: FieldErrors, validate: () => T | Promise<T>): Promise<T | undefined> {
  try {
    return await validate()
  } catch (err) {
    if (!(err instanceof ValidationFailed)) throw err
    errors.merge(err.errors)
    return undefined
  }
}

/**
 * POST /subscriptions `{subscription: {user_id, …C6 fields…}}` → 201. An unknown `user_id` is a
 * field error as an unknown one is on POST /payment_sources (`is invalid`), reported with every
 * other field's at once; the payment source must be that user's (C6).
 */
export const createSubscription = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'subscription')
  const today = app.clock.today()
  return call.commit(async (tx) => {
    const errors = new FieldErrors()
    const userId = requiredId(attrs, 'user_id', errors)
    if (userId !== undefined && !(await tx.accounts.findUser(userId))) errors.add('user_id', 'invalid')
    // No user: id 0 owns no payment source, so a payment given with it is refused too.
    const owner = userId ?? 0
    const input = await collect(errors, () =>
      withLookups(tx, (lookups) => validateCreate(attrs, { today, userId: owner, lookups, shop: true }, app.config.currency)))
    check(errors)
    // No field error, so the validation answered: it throws only with errors to give.
    return { ...okJson(await createValidated(tx, owner, input as NonNullable<typeof input>, today)), status: 201 }
  })
}

/** PATCH (and PUT) /subscriptions/:id with C7's fields → 200; any owner's: the shop owns them all. */
export const updateSubscription = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.subscriptions.lock(id), async (tx, sub, ctx) => {
    const attrs = rootObject(ctx, 'subscription')
    const today = app.clock.today()
    const lastDue = await tx.subscriptions.lastDueDate(sub.id)
    const update = await withLookups(tx, (lookups) => validateUpdate(sub, attrs, { today, userId: sub.user_id, lookups, shop: true }, lastDue))
    return okJson(await applyValidatedUpdate(tx, sub, update))
  })
