import { accessSync, constants, existsSync, statSync, statfsSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseTooNewError } from './migrations.ts'

/**
 * What went wrong opening a SQLite database, in words that name the file and the cause, and
 * whether the same command may work later (issue 15: exit 1 so systemd restarts it) or not
 * (exit 3). SQLite's errors carry their result code (`errcode`); the file system says the rest.
 */

/** The database's directory does not exist: a configuration mistake (exit 2), not a broken database. */
export class DatabaseDirectoryMissing extends Error {
  override readonly name = 'DatabaseDirectoryMissing'
}

/**
 * The database could not be opened, migrated or written at start. Every one names the file and
 * the cause. `transient` says whether the same command may work later unchanged (a full disk, an
 * I/O error, a lock held elsewhere: exit 1, so systemd restarts it) or not (not a database,
 * corrupt, a newer schema, read-only, permission denied: exit 3, restarting would not help).
 */
export class DatabaseOpenError extends Error {
  override readonly name = 'DatabaseOpenError'
  readonly transient: boolean
  constructor(file: string, reason: string, transient: boolean, cause: unknown) {
    super(`cannot use the database ${file}: ${reason}`, { cause })
    this.transient = transient
  }
}

/** SQLite primary result codes (https://sqlite.org/rescode.html) that open errors are told by. */
const SQLITE = { busy: 5, locked: 6, nomem: 7, readonly: 8, ioerr: 10, corrupt: 11, full: 13, cantopen: 14, notadb: 26 } as const
const TRANSIENT_CODES: ReadonlySet<number> = new Set([SQLITE.busy, SQLITE.locked, SQLITE.nomem, SQLITE.ioerr, SQLITE.full])
const TRANSIENT_ERRNOS: ReadonlySet<string> = new Set(['ENOSPC', 'EIO', 'EMFILE', 'ENFILE', 'EAGAIN', 'EBUSY'])

/** The primary result code of a node:sqlite error (extended codes keep it in the low byte), if it is one. */
export function sqliteResultCode(err: unknown): number | undefined {
  const e = err as { code?: unknown; errcode?: unknown } | null
  return typeof e === 'object' && e !== null && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number' ? e.errcode & 0xff : undefined
}

/** A full disk, an I/O error, a lock held elsewhere: the same command may work later unchanged. */
export function isTransientSqliteError(err: unknown): boolean {
  const code = sqliteResultCode(err)
  return code !== undefined && TRANSIENT_CODES.has(code)
}

/** Turns whatever opening `file` threw into an error that names the file and the cause; bugs pass through. */
export function openError(file: string, err: unknown, busyTimeoutMs: number): unknown {
  if (err instanceof DatabaseDirectoryMissing || err instanceof DatabaseOpenError) return err
  if (err instanceof DatabaseTooNewError) return new DatabaseOpenError(file, err.message, false, err)
  const errno = (err as NodeJS.ErrnoException | null)?.code
  const code = sqliteResultCode(err)
  if (code === undefined) {
    // Only the mkdir of the default data/ directory fails with an errno.
    if (typeof errno !== 'string' || !errno.startsWith('E')) return err
    return new DatabaseOpenError(file, `its directory ${dirname(file)} could not be made (${(err as Error).message})`, TRANSIENT_ERRNOS.has(errno), err)
  }
  const sqlite = `(SQLite: ${(err as Error).message})`
  switch (code) {
    case SQLITE.busy:
    case SQLITE.locked:
      return new DatabaseOpenError(file, `another process holds its write lock (waited ${busyTimeoutMs} ms) ${sqlite}`, true, err)
    case SQLITE.full:
      return new DatabaseOpenError(file, `the disk is full ${sqlite}`, true, err)
    case SQLITE.ioerr:
      // A full disk often shows as a plain I/O error (the -shm file could not grow, say).
      return new DatabaseOpenError(file, `${noSpaceLeft(file) ? 'the disk is full' : 'a disk I/O error'} ${sqlite}`, true, err)
    case SQLITE.nomem:
      return new DatabaseOpenError(file, `out of memory ${sqlite}`, true, err)
    case SQLITE.notadb:
      return new DatabaseOpenError(file, `it is not a SQLite database ${sqlite}`, false, err)
    case SQLITE.corrupt:
      return new DatabaseOpenError(file, `it is corrupt; restore a backup ${sqlite}`, false, err)
    case SQLITE.readonly:
      return new DatabaseOpenError(file, `${fileProblem(file) ?? 'SQLite opened it read-only'} ${sqlite}`, false, err)
    case SQLITE.cantopen: {
      if (!existsSync(dirname(file))) return new DatabaseDirectoryMissing(`the directory ${dirname(file)} of the database ${file} does not exist`)
      const problem = fileProblem(file)
      // Nothing to see from here (too many open files, say): it may well open next time.
      return new DatabaseOpenError(file, `${problem ?? 'it could not be opened'} ${sqlite}`, problem === undefined, err)
    }
    default:
      return new DatabaseOpenError(file, sqlite.slice(1, -1), false, err)
  }
}

/**
 * What stands between this user and reading and writing `file`, found by looking at the file
 * system (SQLite only says "unable to open database file"); undefined when nothing does.
 * SQLite writes `-wal` and `-shm` files beside the database, so its directory must be writable too.
 */
function fileProblem(file: string): string | undefined {
  try {
    return lookAtFile(file)
  } catch {
    return undefined // it changed under us: SQLite's own words will have to do
  }
}

function lookAtFile(file: string): string | undefined {
  const dir = dirname(file)
  const denied = (path: string, mode: number): string | undefined => {
    try {
      accessSync(path, mode)
      return undefined
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? 'EACCES'
    }
  }
  if (denied(dir, constants.X_OK)) return `permission denied: this user cannot enter its directory ${dir}`
  const dirDenied = denied(dir, constants.W_OK)
  if (dirDenied === 'EROFS') return 'it is on a read-only file system'
  if (!existsSync(file)) return dirDenied ? `permission denied: it does not exist and this user cannot create files in its directory ${dir}` : undefined
  const stat = statSync(file)
  if (stat.isDirectory()) return 'it is a directory, not a file'
  const mode = `mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}, owner uid ${stat.uid}`
  if (denied(file, constants.R_OK)) return `permission denied: this user cannot read it (${mode})`
  if (denied(file, constants.W_OK)) return `permission denied: it is read-only for this user (${mode})`
  if (dirDenied) return `permission denied: this user cannot create its -wal and -shm files in its directory ${dir}`
  return undefined
}

/** The file system holding `file` has no room left (SQLite reports ENOSPC as a plain I/O error). */
function noSpaceLeft(file: string): boolean {
  try {
    return statfsSync(dirname(file)).bavail === 0
  } catch {
    return false
  }
}
