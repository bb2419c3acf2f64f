import type { Store } from './api.ts'
import { openSqliteStore, type StoreOptions } from './sqlite/store.ts'

export type { StoreOptions }

/**
 * The store that `REPLENISH_DB` names, behind the one interface (api.ts): a SQLite file, made and
 * migrated when missing. The rest of the service never names a backend.
 */
export function openStore(location: string, options: StoreOptions): Store {
  return openSqliteStore(location, options)
}
