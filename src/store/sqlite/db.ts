import { backup as sqliteBackup, DatabaseSync } from 'node:sqlite'
import { existsSync, mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate } from './migrations.ts'
import { DatabaseDirectoryMissing, openError } from './open-errors.ts'

export { DatabaseDirectoryMissing, DatabaseOpenError, isTransientSqliteError, sqliteResultCode } from './open-errors.ts'

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
