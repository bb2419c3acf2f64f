import type { Lookups } from '../../domain/subscription-input.ts'
import type { CatalogQuestion as Question, Tx } from '../../store/api.ts'

const keyOf = (q: Question): string => (q.kind === 'payment' ? `p:${q.method}:${q.source}:${q.user}` : `i:${q.id}`)

/**
 * Runs a validation of the domain (pure and synchronous, src/domain) that asks the catalog
 * questions, inside a unit whose store answers asynchronously. The validation runs once with
 * every answer "yes", recording the questions; the store answers them all in one call; when
 * every answer is yes, that first run's outcome stands (the common case: one validation, one
 * round of reads), otherwise the validation runs again with the real answers. Sound because the domain's checks
 * ask the same questions whatever the answers are (a "no" only adds a field error).
 */
export function withLookups<T>(tx: Tx, validate: (lookups: Lookups) => T): T | Promise<T> {
  const asked: Question[] = []
  const yes: Lookups = {
    paymentIsValid: (method, source, user) => (asked.push({ kind: 'payment', method, source, user }), true),
    isSubscribable: (id) => (asked.push({ kind: 'item', id }), true),
  }
  let first: { ok: true; value: T } | { ok: false; error: unknown }
  try {
    first = { ok: true, value: validate(yes) }
  } catch (error) {
    first = { ok: false, error }
  }
  // Nothing asked (a quantity change, a skip's date): the outcome is known without a read or an await.
  if (asked.length === 0) return outcome(first)
  return answered(tx, validate, asked, first)
}

async function answered<T>(tx: Tx, validate: (lookups: Lookups) => T, asked: Question[], first: { ok: true; value: T } | { ok: false; error: unknown }): Promise<T> {
  const answers = await tx.catalog.answer(asked)
  if (answers.every(Boolean)) return outcome(first)
  const known = new Map(asked.map((q, i) => [keyOf(q), answers[i] === true]))
  return validate({
    paymentIsValid: (method, source, user) => known.get(keyOf({ kind: 'payment', method, source, user })) === true,
    isSubscribable: (id) => known.get(keyOf({ kind: 'item', id })) === true,
  })
}

function outcome<T>(run: { ok: true; value: T } | { ok: false; error: unknown }): T {
  if (run.ok) return run.value
  throw run.error
}
