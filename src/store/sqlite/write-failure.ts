/**
 * Telling why a write failed, for the writer (wait, or give up?) and for /readyz (C12: the reason
 * in an operator's words). SQLite's errors carry their result code as `errcode` (node:sqlite);
 * the low byte is the primary code, the rest the extended one.
 */
const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6
const SQLITE_READONLY = 8
const SQLITE_IOERR = 10
const SQLITE_CORRUPT = 11
const SQLITE_FULL = 13
const SQLITE_CANTOPEN = 14
const SQLITE_NOTADB = 26

/** Codes that say the storage cannot take writes now, whatever the unit was doing. */
const STORAGE_CODES = new Set([SQLITE_BUSY, SQLITE_LOCKED, SQLITE_READONLY, SQLITE_IOERR, SQLITE_CORRUPT, SQLITE_FULL, SQLITE_CANTOPEN, SQLITE_NOTADB])

/** No write lock within the writer's time limit: another connection kept it. */
export class WriteLockTimeout extends Error {
  override readonly name = 'WriteLockTimeout'
}

export const LOCKED_ELSEWHERE = 'database is locked by another process'

function primaryCode(err: unknown): number | undefined {
  const code = (err as { errcode?: unknown } | null)?.errcode
  return typeof code === 'number' ? code & 0xff : undefined
}

/** SQLITE_BUSY: another connection holds the write lock; trying again later may succeed. */
export function isLockBusy(err: unknown): boolean {
  return primaryCode(err) === SQLITE_BUSY
}

/**
 * The database or its disk refused the write (a full disk, a read-only file, an I/O error, a lock
 * held elsewhere), as opposed to a unit's own refusal (a constraint, a validation error).
 */
export function isStorageFailure(err: unknown): boolean {
  if (err instanceof WriteLockTimeout) return true
  const code = primaryCode(err)
  return code !== undefined && STORAGE_CODES.has(code)
}

/**
 * SQLITE_FULL: the disk (or the database's page limit) is full. The unit or batch it failed was
 * rolled back whole, and writes work again once there is room: a 503 for a request, not a bug.
 * A failed WAL sync, even for want of space, is not one: writes stay stopped until a restart.
 */
export function isDiskFull(err: unknown): boolean {
  return primaryCode(err) === SQLITE_FULL
}

/** The cause in words for /readyz; SQLite's own message otherwise (it never holds a secret). */
export function describeWriteFailure(err: Error): string {
  if (err instanceof WriteLockTimeout) return LOCKED_ELSEWHERE
  const errno = (err.cause as NodeJS.ErrnoException | undefined)?.code
  if (errno === 'ENOSPC' || errno === 'EDQUOT') return 'disk is full'
  switch (primaryCode(err)) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return LOCKED_ELSEWHERE
    case SQLITE_FULL:
      return 'disk is full'
    case SQLITE_READONLY:
      return 'database file is read-only'
    default:
      return err.message
  }
}
