import { notFound } from '../http/http-error.ts'
import { INSTALLMENT_STATES, renderInstallment, type Installment } from '../domain/installment.ts'
import { readOutcome, type OutcomeInput } from '../domain/outcome.ts'
import type { AdminInstallmentFilter, Tx } from '../store/api.ts'
import { cancel } from '../domain/lifecycle.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId, rootObject } from '../api/kit/params.ts'
import { applyTransition } from '../api/kit/subscription-actions.ts'
import { changeFound } from './change-found.ts'
import { DATE_PARAM, ID_PARAM, oneOf, readListQuery, type ListQuery } from './input.ts'
import { presentInstallment, recordOutcome } from '../processing/installment-actions.ts'

/** The filters of `GET /installments` and of its export (C11, C13, C18). */
export const INSTALLMENT_FILTERS = {
  state: oneOf(INSTALLMENT_STATES),
  subscription_id: ID_PARAM,
  user_id: ID_PARAM,
  due_after: DATE_PARAM,
  due_before: DATE_PARAM,
}

/**
 * GET /installments?state=&subscription_id=&user_id=&due_after=&due_before=&after=&limit=: keyset
 * pages in id order (C11, C13); both due bounds exclusive, as `actionable_before` is.
 */
export const listInstallments = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readListQuery(ctx.query, INSTALLMENT_FILTERS)
  const rows = await app.store.installments.adminList(installmentFilter(q, q.limit + 1))
  const attempts = await app.store.installments.attemptsOf(rows.slice(0, q.limit).map((i) => i.id))
  return ok(cursorBody('installments', rows, q.limit, (i) => renderInstallment(i, attempts.get(i.id) ?? [])))
}

/** The store's filter for a query read with INSTALLMENT_FILTERS. */
export function installmentFilter(q: Omit<ListQuery<typeof INSTALLMENT_FILTERS>, 'limit'>, limit: number): AdminInstallmentFilter {
  return { after: q.after, limit, state: q.state, subscriptionId: q.subscription_id, userId: q.user_id, dueAfter: q.due_after, dueBefore: q.due_before }
}

export const showInstallment = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const inst = await app.store.installments.find(parseId(ctx.params['id']))
  if (!inst) throw notFound()
  return ok(await presentInstallment(app.store, inst))
}

/**
 * POST /installments/:id/outcome (C9, C11): authenticate → find (404) → validate (422) → act, the
 * find and the act in one unit. When the reprocessing window has run out, the subscription is
 * canceled through the ordinary cancel transition, in the same unit, so its other open
 * installments are abandoned too.
 */
export const recordInstallmentOutcome = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.installments.find(id), async (tx, inst, ctx) =>
    ok(await applyOutcome(app, tx, inst, readOutcome(rootObject(ctx, 'outcome')))))

/**
 * The act of one outcome, inside the caller's unit, after its find and validation: shared by the
 * single outcome and each entry of the bulk one (bulk-outcomes.ts), so the two cannot differ.
 * Answers the installment after it (C3).
 */
export async function applyOutcome(app: App, tx: Tx, found: Installment, input: OutcomeInput): Promise<Record<string, unknown>> {
  const sub = await tx.subscriptions.lock(found.subscription_id)
  if (!sub) throw notFound()
  // Read again under the subscription's lock: a unit that held it first (another outcome, on
  // another instance, or a retry of the processor) may have changed the installment since the find.
  const inst = (await tx.installments.find(found.id)) ?? found
  const { cancelSubscription } = await recordOutcome(tx, inst, sub, input, {
    now: app.clock.now(),
    reprocessingIntervalHours: app.config.reprocessingIntervalHours,
    maxReprocessingDays: app.config.maxReprocessingDays,
  })
  if (cancelSubscription) await applyTransition(tx, sub, cancel(sub, app.clock.today(), 0))
  return presentInstallment(tx, (await tx.installments.find(inst.id)) ?? inst)
}
