import type { LeasesTx } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function leasesRepo(_sql: Sql): LeasesTx {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres leases.${String(name)} is not written yet`)) }) as LeasesTx
}
