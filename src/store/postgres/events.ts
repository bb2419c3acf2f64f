import type { EventsTx } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function eventsRepo(_sql: Sql): EventsTx {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres events.${String(name)} is not written yet`)) }) as EventsTx
}
