import type { ImportsTx } from '../api.ts'
import type { Sql } from './sql.ts'

// STUB: replaced by the real repository.
export function importsRepo(_sql: Sql): ImportsTx {
  return new Proxy({}, { get: (_t, name) => () => Promise.reject(new Error(`postgres imports.${String(name)} is not written yet`)) }) as ImportsTx
}
