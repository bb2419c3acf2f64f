import { HttpError, notFound } from '../http/http-error.ts'
import type { Ctx } from '../http/types.ts'
import { FieldErrors, ValidationFailed, fail, isRecord, readId } from '../domain/field-errors.ts'
import type { Language } from '../domain/messages.ts'
import type { Unit } from '../store/api.ts'
import { readOutcome } from '../domain/outcome.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { missingParam } from '../api/kit/params.ts'
import { applyOutcome } from './installments.ts'

/** Most entries one request may carry (C13). */
export const MAX_OUTCOMES = 500

/**
 * POST /installments/outcomes (C13): `{outcomes: [{installment_id, result, order_reference?,
 * message?}, …]}` → `{results: [{installment_id, status, installment | errors}, …]}` in request
 * order. Each entry is one unit of its own, exactly as POST /installments/:id/outcome would run
 * it (find → 404, validate → 422, act), so a refused entry rolls back nothing of the others
 * (docs/decisions.md, "Bulk outcomes (C13)"). Entries run in request order: two for the same
 * installment must apply as they were sent. A store that runs units in the order asked (SQLite's
 * writer) gets them all at once, so they share group commits (one fsync for many entries instead
 * of one each); on any other (PostgreSQL, where concurrent units race for the subscription's lock)
 * each entry's unit is asked for only once the one before has ended (issue 25). A dry run (C18)
 * applies them one after another in one unit, rolled back at its end: each entry sees the ones
 * before it, as each real unit sees those committed before it (an entry fails before it writes
 * anything, so it leaves nothing behind).
 */
export const recordOutcomes = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const entries = readOutcomeList(ctx)
  if (call.dryRun) {
    return ok({ results: await call.write(async (tx) => {
      const results: Record<string, unknown>[] = []
      for (const entry of entries) results.push(await applyEntry(app, entry, call.language, (unit) => unit(tx)))
      return results
    }) })
  }
  const apply = (entry: unknown): Promise<Record<string, unknown>> => applyEntry(app, entry, call.language, call.write)
  if (app.store.writesInOrder) return ok({ results: await Promise.all(entries.map(apply)) })
  const results = []
  for (const entry of entries) results.push(await apply(entry))
  return ok({ results })
}

/**
 * The `outcomes` list: an array, or from a form body `outcomes[N][…]` (an object of indexes, as
 * Rails' nested attributes), in index order. Missing or empty is C1's missing parameter.
 */
function readOutcomeList(ctx: Ctx): unknown[] {
  const raw = isRecord(ctx.body) ? ctx.body['outcomes'] : undefined
  const list = Array.isArray(raw) ? raw : ctx.bodyKind === 'form' && isRecord(raw) ? indexed(raw) : undefined
  if (raw === undefined || raw === null || raw === '' || list?.length === 0) throw missingParam('outcomes')
  if (list === undefined) fail('outcomes', 'invalid')
  if (list.length > MAX_OUTCOMES) fail('outcomes', 'too_many_entries', MAX_OUTCOMES)
  return list
}

/** `{"0": a, "1": b}` → `[a, b]`; undefined when a key is not an index. */
function indexed(obj: Record<string, unknown>): unknown[] | undefined {
  const keys = Object.keys(obj)
  if (!keys.every((k) => /^\d{1,6}$/.test(k))) return undefined
  // Index keys come out of Object.keys in ascending numeric order: the entries' order.
  return keys.map((k) => obj[k])
}

/**
 * One entry as the single outcome would answer it: `installment` on 200, else `errors` holding
 * the body the single call would have answered (C1's 404 body, C4's 422 body). Errors that are
 * not the caller's (the store failing) fail the whole request, as they would fail a single call.
 */
async function applyEntry(app: App, entry: unknown, language: Language, run: <T>(unit: Unit<T>) => Promise<T>): Promise<Record<string, unknown>> {
  const id = isRecord(entry) ? readId(entry['installment_id']) : undefined
  const echoed = id ?? echo(entry)
  try {
    if (id === undefined) refuseEntry(entry)
    const installment = await run(async (tx) => {
      const inst = await tx.installments.find(id)
      if (inst === undefined) throw notFound()
      return applyOutcome(app, tx, inst, readOutcome(entry as Record<string, unknown>))
    })
    return { installment_id: id, status: 200, installment }
  } catch (err) {
    if (err instanceof ValidationFailed) return { installment_id: echoed, status: 422, errors: err.errors.render(language) }
    if (err instanceof HttpError && err.status < 500) return { installment_id: echoed, status: err.status, errors: err.body }
    throw err
  }
}

/** An entry without a usable installment id: 422 naming it, with the entry's other field errors. */
function refuseEntry(entry: unknown): never {
  const errors = new FieldErrors()
  if (!isRecord(entry)) {
    errors.add('outcome', 'invalid')
    throw new ValidationFailed(errors)
  }
  const raw = entry['installment_id']
  errors.add('installment_id', raw === undefined || raw === null || raw === '' ? 'blank' : 'invalid')
  try {
    readOutcome(entry)
  } catch (err) {
    if (!(err instanceof ValidationFailed)) throw err
    errors.merge(err.errors)
  }
  throw new ValidationFailed(errors)
}

/** The installment_id an entry gave, when it is something a client can match its request by. */
function echo(entry: unknown): string | number | null {
  const raw = isRecord(entry) ? entry['installment_id'] : undefined
  return typeof raw === 'string' || (typeof raw === 'number' && Number.isInteger(raw)) ? raw : null
}
