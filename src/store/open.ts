import type { Store } from './api.ts'
import { openSqliteStore, type StoreOptions } from './sqlite/store.ts'
import { backupDatabase, isTransientSqliteError, sqliteResultCode } from './sqlite/db.ts'
import { openPostgresStore, type PostgresOptions } from './postgres/store.ts'
import { maskedUrl, postgresErrorKind } from './postgres/connect-errors.ts'
import { StoreUnavailable } from './unavailable.ts'

export type { StoreOptions, PostgresOptions }
/** What opening a store reports (named file and cause; transient or not) and the schema this binary brings. */
export { DatabaseDirectoryMissing, DatabaseOpenError } from './sqlite/db.ts'
export { SCHEMA_VERSION } from './sqlite/migrations.ts'
export { BackupRefused } from './postgres/store.ts'
export { TlsSettingRefused } from './postgres/tls.ts'
export { StoreUnavailable } from './unavailable.ts'

/** C15: `postgres://…` or `postgresql://…` selects PostgreSQL; anything else is a SQLite file. */
export function isPostgresLocation(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location)
}

/**
 * The store that `REPLENISH_DB` names, behind the one interface (api.ts): a SQLite file, made and
 * migrated when missing, or a PostgreSQL database, migrated. The rest of the service never names
 * a backend.
 */
export async function openStore(location: string, options: StoreOptions & { readonly postgres?: Omit<PostgresOptions, 'synchronous'> }): Promise<Store> {
  if (isPostgresLocation(location)) {
    return openPostgresStore(location, { poolSize: 10, statementTimeoutMs: 30_000, ...options.postgres, synchronous: options.synchronous, readCacheBytes: options.readCacheBytes })
  }
  return openSqliteStore(location, options)
}

/** The location as logs and messages show it: a PostgreSQL URL without its password. */
export function shownLocation(location: string): string {
  return isPostgresLocation(location) ? maskedUrl(location) : location
}

/**
 * An error the database itself raised after it was opened (not a bug of ours): `transient` when
 * the same command may work later unchanged (a full disk, a lock held elsewhere, a server
 * restarting), `permanent` otherwise; undefined for anything that is not the database's.
 */
export function databaseErrorKind(err: unknown): 'transient' | 'permanent' | undefined {
  if (err instanceof StoreUnavailable) return 'transient'
  if (sqliteResultCode(err) === undefined) return postgresErrorKind(err)
  return isTransientSqliteError(err) ? 'transient' : 'permanent'
}

/** A consistent copy of the store at `location` into the file `target`, taken while it may be in use. */
export function backupStore(location: string, target: string, options: Pick<StoreOptions, 'synchronous'>): Promise<void> {
  return backupDatabase(location, target, { synchronous: options.synchronous, createDirectory: false })
}
