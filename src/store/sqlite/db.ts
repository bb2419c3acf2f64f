import { backup as sqliteBackup, DatabaseSync } from 'node:sqlite'
import { accessSync, constants, existsSync, mkdirSync, statSync, statfsSync } from 'node:fs'
import { dirname } from 'node:path'
import { DatabaseTooNewError, migrate } from './migrations.ts'

export interface OpenOptions {
  readonly synchronous: 'FULL' | 'NORMAL'
  /** Create the file's directory when missing (the default `data/`); otherwise it must exist. */
  readonly createDirectory: boolean
  /**
   * Prove at open that the database can be written (default true). Off only for `backup`,
   * which reads: a copy of a read-only database is still a good copy.
   */
  readonly checkWritable?: boolean
  /** How long a statement waits for a lock another connection holds (default 5 s); tests shorten it. */
  readonly busyTimeoutMs?: number
  /** Test hook: runs first on the new connection (a test caps its pages to play a full disk). */
  readonly onConnect?: (db: DatabaseSync) => void
}

/**
 * WAL pages between checkpoints. A checkpoint runs inside the COMMIT that crosses the mark, on the
 * event loop, and fsyncs the database file: at SQLite's default of 1,000 pages it ran every ~25
 * commits under write load and took 60% of all COMMIT time. At 8,000 pages (a 32 MB WAL) a page
 * rewritten by many commits is copied once: PATCH +13%, skip +18% in the bench; 16,000 and
 * 32,000 measured no better, with longer stalls (docs/performance.md).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8000

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

const DEFAULT_BUSY_TIMEOUT_MS = 5_000

/**
 * Opens the database, proves it can be written and brings its schema up to date. The busy
 * timeout comes first so the switch to WAL waits for another process instead of failing; WAL lets
 * readers run beside the one writer; synchronous=FULL makes every acknowledged commit survive
 * power loss (C12). Whatever goes wrong is thrown as a DatabaseOpenError naming the file and the
 * cause (or DatabaseDirectoryMissing), and the connection is closed.
 */
export function openDatabase(file: string, options: OpenOptions): DatabaseSync {
  const busyTimeoutMs = options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS
  let db: DatabaseSync | undefined
  try {
    if (file !== ':memory:') {
      const dir = dirname(file)
      if (!existsSync(dir)) {
        if (!options.createDirectory) throw new DatabaseDirectoryMissing(`the directory ${dir} of the database ${file} does not exist`)
        mkdirSync(dir, { recursive: true })
      }
    }
    db = new DatabaseSync(file, { timeout: busyTimeoutMs })
    options.onConnect?.(db)
    db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = ${options.synchronous};
      PRAGMA foreign_keys = ON;
      PRAGMA temp_store = MEMORY;
      -- 8 MB: hot reads come from the body cache (body-cache.ts) and the OS caches the file too;
      -- 16 MB measured no faster and cost 13 MB of peak RSS (docs/performance.md).
      PRAGMA cache_size = -8000;
      -- Above what serve's WAL reaches between restarts (checkpointer.ts), so it is not cut and regrown.
      PRAGMA journal_size_limit = 134217728;
      PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES};
    `)
    if (options.checkWritable ?? true) proveWritable(db)
    migrate(db)
    return db
  } catch (err) {
    if (db?.isOpen) db.close()
    throw openError(file, err, busyTimeoutMs)
  }
}

/** `replenish backup`: SQLite's online backup API, consistent while another process writes. */
export async function backupDatabase(file: string, target: string, options: OpenOptions): Promise<void> {
  const db = openDatabase(file, { ...options, checkWritable: false })
  try {
    await sqliteBackup(db, target)
  } finally {
    db.close()
  }
}

/**
 * A write rolled back (issue 15): SQLite opens a file it may not write read-only without a word,
 * and says so only at the first write, so a server on a 0444 file would start, answer /readyz
 * and fail every write. BEGIN IMMEDIATE takes the write lock (it fails on a read-only file, or
 * waits for a lock another process holds), and the CREATE writes a table (sqlite_schema) and a
 * new page.
 */
function proveWritable(db: DatabaseSync): void {
  db.exec('BEGIN IMMEDIATE')
  try {
    db.exec('CREATE TABLE replenish_write_check (x INTEGER)')
  } finally {
    // An I/O error may have rolled it back already; a second ROLLBACK would hide that error.
    if (db.isTransaction) db.exec('ROLLBACK')
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
function openError(file: string, err: unknown, busyTimeoutMs: number): unknown {
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
