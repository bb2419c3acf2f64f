import type { InstallmentsTx } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function installmentsRepo(_sql: Sql): InstallmentsTx {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres installments.${String(name)} is not written yet`)) }) as InstallmentsTx
}
