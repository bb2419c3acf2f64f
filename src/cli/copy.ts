import { validPostgresUrl, type Config } from '../config.ts'
import { isPostgresLocation } from '../store/open.ts'
import { openPostgresStore } from '../store/postgres/store.ts'
import { maskedUrl } from '../store/postgres/connect-errors.ts'
import { sqlState } from '../store/postgres/sql.ts'
import { bulkLoad, COPIED_TABLES, countRows, TargetNotEmpty, type CopiedTable, type CopyProgress } from '../store/postgres/copy.ts'
import { CopySourceRefused, openCopySource, type SqliteSource } from '../store/sqlite/copy-source.ts'
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
  if (!isPostgresLocation(to) || !validPostgresUrl(to)) throw new UsageError(`--to: expected postgres://user@host:port/database, got something else (not shown: it may hold a password)`)
  const source = openSourceOrRefuse(from)
  try {
    const started = performance.now()
    const counts = await load(config, to, source, io)
    return report(source, counts, (performance.now() - started) / 1000, io)
  } finally {
    source.close()
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

/** The source, or the usage error that says why it cannot be copied. */
function openSourceOrRefuse(file: string): SqliteSource {
  try {
    return openCopySource(file)
  } catch (err) {
    if (err instanceof CopySourceRefused) throw new UsageError(`--from: ${err.message}`)
    throw err
  }
}
