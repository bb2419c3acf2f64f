import type { Store } from './api.ts'
import { openSqliteStore, type StoreOptions } from './sqlite/store.ts'
import { backupDatabase, isTransientSqliteError, sqliteResultCode } from './sqlite/db.ts'

export type { StoreOptions }
/** What opening a store reports (named file and cause; transient or not) and the schema this binary brings. */
export { DatabaseDirectoryMissing, DatabaseOpenError } from './sqlite/db.ts'
export { SCHEMA_VERSION } from './sqlite/migrations.ts'

/**
 * The store that `REPLENISH_DB` names, behind the one interface (api.ts): a SQLite file, made and
 * migrated when missing. The rest of the service never names a backend.
 */
export function openStore(location: string, options: StoreOptions): Store {
  return openSqliteStore(location, options)
}

/**
 * An error the database itself raised after it was opened (not a bug of ours): `transient` when
 * the same command may work later unchanged (a full disk, a lock held elsewhere), `permanent`
 * otherwise; undefined for anything that is not the database's.
 */
export function databaseErrorKind(err: unknown): 'transient' | 'permanent' | undefined {
  if (sqliteResultCode(err) === undefined) return undefined
  return isTransientSqliteError(err) ? 'transient' : 'permanent'
}

/** A consistent copy of the store at `location` into the file `target`, taken while it may be in use. */
export function backupStore(location: string, target: string, options: Pick<StoreOptions, 'synchronous'>): Promise<void> {
  return backupDatabase(location, target, { synchronous: options.synchronous, createDirectory: false })
}
