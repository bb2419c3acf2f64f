import { HttpError } from '../http/http-error.ts'
import type { RouteOptions } from '../http/types.ts'
import type { Config } from '../config.ts'
import type { Clock } from '../clock.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin, sha256 } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { FieldErrors } from '../domain/field-errors.ts'
import { parseImportLine, subjectOf as lineSubject } from '../domain/import/line.ts'
import { differences } from '../domain/import/compare.ts'
import { ImportLineError, translateImport, type ImportMessageKey } from '../domain/import/errors.ts'
import type { ImportContext, ImportCount, ImportRecord, ImportRefusal, ImportSummary, ImportType } from '../domain/import/records.ts'
import type { Tx } from '../store/api.ts'

/**
 * Import (C13, docs/import.md): JSON Lines of users, their API keys, payment methods and
 * sources, catalog items and subscriptions, written with the ids, dates and counters they had,
 * in one unit of work: the first line refused rolls everything back. `replenish import FILE`
 * (src/cli/import.ts) runs the same `runImport`.
 */

export const IMPORT_CONTENT_TYPE = 'application/x-ndjson'
/**
 * The largest body `POST /imports` takes (64 MiB, about 90,000 subscriptions as the export SQL
 * writes them). Held off the V8 heap as bytes and read a line at a time, so the binary's small
 * heap holds one line's objects at once, never the file's. Larger files: the CLI, or several
 * files in order (a line may refer to rows an earlier import brought).
 */
export const IMPORT_MAX_BODY_BYTES = 64 * 1024 * 1024

/** The file or body held no line at all. */
export class EmptyImport extends Error {
  override readonly name = 'EmptyImport'
}

const COUNTED: Readonly<Record<ImportType, keyof Omit<ImportSummary, 'lines'>>> = {
  user: 'users', api_key: 'api_keys', payment_method: 'payment_methods', payment_source: 'payment_sources',
  subscribable: 'subscribables', subscription: 'subscriptions',
}

/** What a line's reading needs from the running service: real time for timestamps, the service clock for dates. */
export function importContext(config: Config, clock: Clock): ImportContext {
  return { now: new Date().toISOString(), today: clock.today(), timeZone: config.timeZone, currency: config.currency, hashKey: sha256 }
}

/**
 * Every line of `data` (UTF-8 JSON Lines; blank lines and a byte order mark are skipped, CRLF is
 * fine) read, checked and written inside the caller's unit, one line at a time. Line numbers
 * count every line of the file, as an editor does.
 */
export async function runImport(tx: Tx, data: Buffer, ctx: ImportContext): Promise<ImportSummary> {
  const count = (): ImportCount => ({ inserted: 0, present: 0 })
  const summary = {
    lines: 0, users: count(), api_keys: count(), payment_methods: count(), payment_sources: count(),
    subscribables: count(), subscriptions: count(), line_items: count(),
  }
  let start = data[0] === 0xef && data[1] === 0xbb && data[2] === 0xbf ? 3 : 0
  for (let line = 1; start < data.length; line++) {
    const newline = data.indexOf(10, start)
    const end = newline === -1 ? data.length : newline
    const text = data.toString('utf8', start, end > start && data[end - 1] === 13 ? end - 1 : end)
    start = end + 1
    if (text.trim() === '') continue
    summary.lines++
    const record = parseImportLine(text, line, ctx)
    const outcome = await put(tx, record, line)
    summary[COUNTED[record.type]][outcome]++
    if (record.type === 'subscription') summary.line_items[outcome] += record.row.line_items.length
  }
  if (summary.lines === 0) throw new EmptyImport('the import has no lines')
  await tx.imports.finish()
  return summary
}

/** One record: skipped when stored as the line has it, refused when stored otherwise, else written. */
async function put(tx: Tx, record: ImportRecord, line: number): Promise<'inserted' | 'present'> {
  const stored = await tx.imports.stored(record)
  if (stored !== undefined) {
    const fields = differences(record, stored)
    if (fields.length === 0) return 'present'
    throw new ImportLineError(line, subjectOf(record), new FieldErrors(), fields.map((field) => ({ field, key: 'differs' as const })))
  }
  const refusal = await tx.imports.insert(record)
  if (refusal !== undefined) throw refused(line, record, refusal)
  return 'inserted'
}

function refused(line: number, record: ImportRecord, { field, problem }: ImportRefusal): ImportLineError {
  const fields = new FieldErrors()
  if (problem === 'taken' || problem === 'invalid_payment') {
    fields.add(field, problem)
    return new ImportLineError(line, subjectOf(record), fields)
  }
  const own: ImportMessageKey = problem
  return new ImportLineError(line, subjectOf(record), fields, [{ field, key: own }])
}

/** `subscription 4`; an API key by its user, never by the key. */
function subjectOf(record: ImportRecord): string {
  if (record.type === 'api_key') return lineSubject(record.type, record.row.id, record.row.user_id)
  return lineSubject(record.type, record.type === 'subscription' ? record.row.subscription.id : record.row.id)
}

/**
 * `POST /admin/api/v1/imports` (scope admin): the body is the file. 200 with the summary; a
 * refused line is a 422 `{error: "line N (…): …", line, errors: {field: [message]}}` in the
 * caller's language, and nothing is written.
 */
export const importRecords = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const empty = (): HttpError => new HttpError(422, { error: translateImport('empty_import', call.language) })
  if (ctx.bodyKind !== 'raw') throw empty()
  const context = importContext(app.config, app.clock)
  try {
    return await call.commit(async (tx) => ok(await runImport(tx, ctx.rawBody, context)))
  } catch (err) {
    if (err instanceof ImportLineError) throw new HttpError(422, err.render(call.language))
    if (err instanceof EmptyImport) throw empty()
    throw err
  }
}

/** The route's body: JSON Lines up to 64 MiB, read only once the caller is known to be an admin. */
export const importRouteOptions = (app: App): RouteOptions => ({
  maxBodyBytes: IMPORT_MAX_BODY_BYTES,
  rawBodyType: IMPORT_CONTENT_TYPE,
  beforeBody: (ctx) => authenticateAdmin(app, ctx),
})
