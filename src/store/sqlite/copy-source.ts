import { existsSync, statSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { SCHEMA_VERSION } from './migrations.ts'
import { KEYS_OF_UNNUMBERED, type CopiedTable, type SourceTable } from '../copy-source.ts'

/**
 * The SQLite side of `replenish copy` (src/cli/copy.ts): the file read-only, in one snapshot, a
 * table at a time in key order. Only reads: the copy never changes its source.
 */

/** Why a file cannot be the source of a copy, in words for the CLI (a usage error, exit 2). */
export class CopySourceRefused extends Error {
  override readonly name = 'CopySourceRefused'
}

export interface SqliteSource {
  readonly file: string
  /** A table as the copy reads it, from the snapshot the copy started with. */
  table(name: CopiedTable): SourceTable
  close(): void
}

/**
 * The SQLite file, read-only, checked to be a replenish database of this binary's schema, in one
 * read transaction: every table and every count comes from the same snapshot.
 */
export function openCopySource(file: string): SqliteSource {
  if (!existsSync(file)) throw new CopySourceRefused(`there is no file ${file}`)
  if (statSync(file).isDirectory()) throw new CopySourceRefused(`${file} is a directory, not a SQLite database`)
  const db = openReadOnly(file)
  try {
    checkSchema(db, file)
    db.exec('BEGIN')
  } catch (err) {
    db.close()
    throw err
  }
  const tables = new Map<CopiedTable, SourceTable>()
  return {
    file,
    table: (name) => {
      let t = tables.get(name)
      if (t === undefined) tables.set(name, (t = sourceTable(db, name)))
      return t
    },
    close: () => {
      if (db.isTransaction) db.exec('ROLLBACK')
      db.close()
    },
  }
}

function openReadOnly(file: string): DatabaseSync {
  let db: DatabaseSync | undefined
  try {
    db = new DatabaseSync(file, { readOnly: true })
    // Opening reads nothing: a file that is not SQLite fails on its first statement.
    db.prepare('SELECT count(*) FROM sqlite_master').get()
    return db
  } catch (err) {
    db?.close()
    throw new CopySourceRefused(`${file} is not a SQLite database (${(err as Error).message})`)
  }
}

function checkSchema(db: DatabaseSync, file: string): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
  const ours = (db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'subscriptions', 'events')`).get() as { n: number }).n
  if (version === 0 || ours < 3) throw new CopySourceRefused(`${file} is not a replenish database`)
  if (version < SCHEMA_VERSION) {
    throw new CopySourceRefused(`${file} has schema version ${version}, this replenish copies version ${SCHEMA_VERSION}: run \`replenish migrate --db ${file}\` on it first`)
  }
  if (version > SCHEMA_VERSION) {
    throw new CopySourceRefused(`${file} has schema version ${version}, newer than this replenish understands (version ${SCHEMA_VERSION}): copy it with the replenish that wrote it`)
  }
}

/** A table's count, its highest id ever (AUTOINCREMENT's counter included), and its rows in key order. */
function sourceTable(db: DatabaseSync, name: CopiedTable): SourceTable {
  const rows = (db.prepare(`SELECT count(*) AS n FROM ${name}`).get() as { n: number }).n
  const key = KEYS_OF_UNNUMBERED[name]
  const maxId = key === undefined ? ((db.prepare(`SELECT max(id) AS m FROM ${name}`).get() as { m: number | null }).m ?? 0) : 0
  const counter = (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(name) as { seq: number } | undefined)?.seq ?? 0
  return {
    rows,
    lastId: Math.max(maxId, counter),
    *batches(columns, size) {
      const stmt = db.prepare(`SELECT ${columns.join(', ')} FROM ${name} ORDER BY ${key ?? 'id'}`)
      stmt.setReturnArrays(true)
      let batch: unknown[][] = []
      for (const row of stmt.iterate()) {
        batch.push(row as unknown as unknown[])
        if (batch.length === size) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    },
  }
}
