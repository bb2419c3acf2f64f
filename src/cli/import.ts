import { shownLocation } from '../store/open.ts'
import { readFileSync } from 'node:fs'
import type { Config } from '../config.ts'
import { serviceClock } from '../clock.ts'
import { EmptyImport, importContext, runImport } from '../admin/imports.ts'
import { ImportLineError } from '../domain/import/errors.ts'
import type { ImportSummary } from '../domain/import/records.ts'
import { openExistingStore, UsageError } from './commands.ts'

type Out = (line: string) => void

const KINDS = ['users', 'api_keys', 'payment_methods', 'payment_sources', 'subscribables', 'subscriptions', 'line_items'] as const

/**
 * `replenish import FILE`: the JSON Lines of docs/import.md, all or nothing, in one unit of work.
 * A file that cannot be read or a line that is refused is status 2 (like a bad flag: the input
 * is wrong, and running again will not help), with the file, the line and the field, and
 * nothing written. The file is read whole, as bytes (off the V8 heap), and parsed a line at a
 * time; while it is written, other writers of the database (a `serve` on the same file) wait.
 */
export async function importCommand(config: Config, file: string | undefined, out: Out): Promise<number> {
  if (file === undefined || file === '') throw new UsageError('import needs a file: replenish import FILE (JSON Lines, see docs/import.md)')
  let data: Buffer
  try {
    data = readFileSync(file)
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code
    const why = code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : code === 'EACCES' ? 'permission denied' : (err as Error).message
    throw new UsageError(`import: cannot read ${file}: ${why}`)
  }
  const context = importContext(config, serviceClock(config.timeZone, config.today))
  const store = await openExistingStore(config)
  let summary: ImportSummary
  try {
    summary = await store.bulk(() => store.write((tx) => runImport(tx, data, context)))
  } catch (err) {
    if (err instanceof ImportLineError) throw new UsageError(`import: ${file}: ${err.render('en').error}; nothing was imported`)
    if (err instanceof EmptyImport) throw new UsageError(`import: ${file} has no lines to import; nothing was imported`)
    throw err
  } finally {
    await store.close()
  }
  out(`imported ${file} into ${shownLocation(config.db)}: ${summary.lines} lines`)
  for (const kind of KINDS) out(`  ${kind.padEnd(16)} ${String(summary[kind].inserted).padStart(8)} inserted ${String(summary[kind].present).padStart(8)} already present`)
  return 0
}
