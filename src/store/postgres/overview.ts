import type { OverviewReads } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function overviewRepo(_sql: Sql): OverviewReads {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres overview.${String(name)} is not written yet`)) }) as OverviewReads
}
