import type { Lookups } from '../../domain/subscription-input.ts'
import type { Tx } from '../../store/api.ts'

type Question = { readonly kind: 'payment'; readonly method: number; readonly source: number; readonly user: number } | { readonly kind: 'item'; readonly id: number }

const keyOf = (q: Question): string => (q.kind === 'payment' ? `p:${q.method}:${q.source}:${q.user}` : `i:${q.id}`)

/**
 * Runs a validation of the domain (pure and synchronous, src/domain) that asks the catalog
 * questions, inside a unit whose store answers asynchronously. The validation runs once with
 * every answer "yes", recording the questions; the store answers them; when every answer is
 * yes, that first run's outcome stands (the common case: one validation, one round of reads),
 * otherwise the validation runs again with the real answers. Sound because the domain's checks
 * ask the same questions whatever the answers are (a "no" only adds a field error).
 */
export async function withLookups<T>(tx: Tx, validate: (lookups: Lookups) => T): Promise<T> {
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
  const answers = asked.length === 0 ? [] : await Promise.all(asked.map((q) =>
    q.kind === 'payment' ? tx.catalog.paymentIsValid(q.method, q.source, q.user) : tx.catalog.isSubscribable(q.id)))
  if (answers.every(Boolean)) {
    if (first.ok) return first.value
    throw first.error
  }
  const known = new Map(asked.map((q, i) => [keyOf(q), answers[i] === true]))
  return validate({
    paymentIsValid: (method, source, user) => known.get(keyOf({ kind: 'payment', method, source, user })) === true,
    isSubscribable: (id) => known.get(keyOf({ kind: 'item', id })) === true,
  })
}
