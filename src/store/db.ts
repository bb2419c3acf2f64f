import { DatabaseSync } from 'node:sqlite'
import { mkdirSync, existsSync } from 'node:fs'
import { dirname } from 'node:path'
import { migrate } from './migrations.ts'

export interface OpenOptions {
  readonly synchronous: 'FULL' | 'NORMAL'
  /** Create the file's directory when missing (the default `data/`); otherwise it must exist. */
  readonly createDirectory: boolean
}

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
    PRAGMA cache_size = -16000;
    PRAGMA journal_size_limit = 67108864;
  `)
  migrate(db)
  return db
}
