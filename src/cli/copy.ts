import { existsSync, statSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import type { Config } from '../config.ts'
import { SCHEMA_VERSION } from '../store/sqlite/migrations.ts'
import { isPostgresLocation } from '../store/open.ts'
import { openPostgresStore } from '../store/postgres/store.ts'
import { maskedUrl } from '../store/postgres/connect-errors.ts'
import { sqlState } from '../store/postgres/sql.ts'
import { bulkLoad, COPIED_TABLES, countRows, TargetNotEmpty, type CopiedTable, type CopyProgress, type SourceTable } from '../store/postgres/copy.ts'
import { UsageError } from './commands.ts'

interface CopyIo {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

/** SQLSTATE of a row that refers to one that is not there (the keys are checked once every row is in). */
const FOREIGN_KEY_VIOLATION = '23503'
const USAGE = 'replenish copy --from FILE --to postgres://user@host:port/database'
/** Progress lines on stderr at most this often. */
const PROGRESS_EVERY_MS = 1000

/**
 * `replenish copy --from FILE --to postgres://…` (C15): a SQLite database copied into an empty
 * PostgreSQL one, ids kept, then every table's rows counted on both sides. The target is migrated
 * first; the copy is one transaction there, so a copy that fails leaves it empty. The SQLite file
 * is only read, in one snapshot: rows written to it after the copy started are not in it (stop
 * `serve` first).
 */
export async function copyCommand(config: Config, from: string | undefined, to: string | undefined, io: CopyIo): Promise<number> {
  if (from === undefined || from === '') throw new UsageError(`copy needs --from, the SQLite database to copy: ${USAGE}`)
  if (to === undefined || to === '') throw new UsageError(`copy needs --to, the empty PostgreSQL database to copy into: ${USAGE}`)
  // Never echoed: the URL may hold a password.
  if (!isPostgresLocation(to) || !parses(to)) throw new UsageError(`--to: expected postgres://user@host:port/database, got something else (not shown: it may hold a password)`)
  const source = openSource(from)
  try {
    const started = performance.now()
    const counts = await load(config, to, source, io)
    return report(source, counts, (performance.now() - started) / 1000, io)
  } finally {
    source.close()
  }
}

/** A URL with a host, or a socket directory as `?host=` (as REPLENISH_DB takes one). */
function parses(url: string): boolean {
  try {
    const u = new URL(url)
    return u.hostname.length > 0 || u.searchParams.has('host')
  } catch {
    return false
  }
}

/** The target migrated, then loaded; its rows counted afterwards. */
async function load(config: Config, to: string, source: SqliteSource, io: CopyIo): Promise<Map<CopiedTable, number>> {
  // No statement time-out: one INSERT of a large batch, or the check of a foreign key over
  // millions of rows, may take longer than a request's statement ever should.
  const store = await openPostgresStore(to, { poolSize: 1, statementTimeoutMs: 0, synchronous: config.synchronous, migrate: true })
  try {
    const client = await store.pool.connect()
    try {
      await bulkLoad(client, source.table, progressOn(io.err)).catch((err: unknown) => {
        if (err instanceof TargetNotEmpty) throw new UsageError(`--to ${maskedUrl(to)}: ${err.message}`)
        if (sqlState(err) === FOREIGN_KEY_VIOLATION) {
          throw new UsageError(`--from ${source.file}: its rows break a foreign key (${(err as { detail?: string }).detail ?? (err as Error).message}); nothing was copied`)
        }
        throw err
      })
      return await countRows(client)
    } finally {
      client.release()
    }
  } finally {
    await store.close()
  }
}

/** Where a large table's load stands, on stderr, once a second at most. */
function progressOn(err: (line: string) => void): CopyProgress {
  let last = performance.now()
  return (table, done, total) => {
    const now = performance.now()
    if (now - last < PROGRESS_EVERY_MS) return
    last = now
    err(`copying ${table}: ${done} of ${total} rows`)
  }
}

/** The count table on stdout; 0 when every table has as many rows on both sides, else 1. */
function report(source: SqliteSource, counts: Map<CopiedTable, number>, seconds: number, io: CopyIo): number {
  const rows = COPIED_TABLES.map((t) => [t, String(source.table(t).rows), String(counts.get(t) ?? 0)])
  const table = [['table', 'sqlite', 'postgres'], ...rows]
  const widths = [0, 1, 2].map((i) => Math.max(...table.map((r) => r[i]!.length)))
  for (const [name, a, b] of table) io.out(`${name!.padEnd(widths[0]!)}  ${a!.padStart(widths[1]!)}  ${b!.padStart(widths[2]!)}`)
  const differ = rows.filter(([, a, b]) => a !== b).map(([t]) => t)
  if (differ.length > 0) {
    io.err(`replenish: the copy's counts differ in ${differ.join(', ')}`)
    return 1
  }
  const total = rows.reduce((n, [, a]) => n + Number(a), 0)
  io.out(`copied ${total} rows in ${seconds.toFixed(1)} s; every table has as many rows in PostgreSQL as in SQLite`)
  return 0
}

interface SqliteSource {
  readonly file: string
  /** A table as the copy reads it, from the snapshot the copy started with. */
  table(name: CopiedTable): SourceTable
  close(): void
}

/**
 * The SQLite file, read-only, checked to be a replenish database of this binary's schema, in one
 * read transaction: every table and every count comes from the same snapshot.
 */
function openSource(file: string): SqliteSource {
  if (!existsSync(file)) throw new UsageError(`--from: there is no file ${file}`)
  if (statSync(file).isDirectory()) throw new UsageError(`--from: ${file} is a directory, not a SQLite database`)
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
    throw new UsageError(`--from: ${file} is not a SQLite database (${(err as Error).message})`)
  }
}

function checkSchema(db: DatabaseSync, file: string): void {
  const version = (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version
  const ours = (db.prepare(`SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name IN ('users', 'subscriptions', 'events')`).get() as { n: number }).n
  if (version === 0 || ours < 3) throw new UsageError(`--from: ${file} is not a replenish database`)
  if (version < SCHEMA_VERSION) {
    throw new UsageError(`--from: ${file} has schema version ${version}, this replenish copies version ${SCHEMA_VERSION}: run \`replenish migrate --db ${file}\` on it first`)
  }
  if (version > SCHEMA_VERSION) {
    throw new UsageError(`--from: ${file} has schema version ${version}, newer than this replenish understands (version ${SCHEMA_VERSION}): copy it with the replenish that wrote it`)
  }
}

/** A table's count, its highest id ever (AUTOINCREMENT's counter included), and its rows in key order. */
function sourceTable(db: DatabaseSync, name: CopiedTable): SourceTable {
  const rows = (db.prepare(`SELECT count(*) AS n FROM ${name}`).get() as { n: number }).n
  const keyed = name !== 'idempotency_keys'
  const maxId = keyed ? ((db.prepare(`SELECT max(id) AS m FROM ${name}`).get() as { m: number | null }).m ?? 0) : 0
  const counter = (db.prepare('SELECT seq FROM sqlite_sequence WHERE name = ?').get(name) as { seq: number } | undefined)?.seq ?? 0
  return {
    rows,
    lastId: Math.max(maxId, counter),
    *batches(columns, size) {
      const stmt = db.prepare(`SELECT ${columns.join(', ')} FROM ${name} ORDER BY ${keyed ? 'id' : 'scope, key'}`)
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
