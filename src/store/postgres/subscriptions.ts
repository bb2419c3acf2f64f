import type { SubscriptionsTx } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function subscriptionsRepo(_sql: Sql): SubscriptionsTx {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres subscriptions.${String(name)} is not written yet`)) }) as SubscriptionsTx
}
