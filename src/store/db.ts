import { DatabaseSync } from 'node:sqlite'
import { mkdirSync, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate } from './migrations.ts'

export interface OpenOptions {
  readonly synchronous: 'FULL' | 'NORMAL'
  /** Create the file's directory when missing (the default `data/`); otherwise it must exist. */
  readonly createDirectory: boolean
}

/**
 * WAL pages between checkpoints. A checkpoint runs inside the COMMIT that crosses the mark, on the
 * event loop, and fsyncs the database file: at SQLite's default of 1,000 pages it ran every ~25
 * commits under write load and took 60% of all COMMIT time. At 8,000 pages (a 32 MB WAL) a page
 * rewritten by many commits is copied once: PATCH +13%, skip +18% in the bench; 16,000 and
 * 32,000 measured no better, with longer stalls (docs/performance.md).
 */
export const WAL_AUTOCHECKPOINT_PAGES = 8000

export class DatabaseDirectoryMissing extends Error {
  override readonly name = 'DatabaseDirectoryMissing'
}

/**
 * Opens the database and brings its schema up to date. The busy timeout comes first so the
 * switch to WAL waits for another process instead of failing; WAL lets readers run beside the
 * one writer; synchronous=FULL makes every acknowledged commit survive power loss (C12).
 */
export function openDatabase(file: string, options: OpenOptions): DatabaseSync {
  if (file !== ':memory:') {
    const dir = dirname(file)
    if (!existsSync(dir)) {
      if (!options.createDirectory) throw new DatabaseDirectoryMissing(`the directory of the database does not exist: ${dir}`)
      mkdirSync(dir, { recursive: true })
    }
  }
  const db = new DatabaseSync(file, { timeout: 5_000 })
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
  migrate(db)
  return db
}
