/**
 * Holds every answer the API tests receive to the OpenAPI document (issue 18): `request()` in
 * server.ts calls `checkResponse` on each one. The operation is found by method and path template
 * as the router finds it; the status must be documented for it, its required headers present, and
 * a JSON body valid against that status's schema (ajv, JSON Schema 2020-12, formats checked).
 * A mismatch throws, naming the route, the status and ajv's errors.
 *
 * Answers no operation covers are skipped, never guessed at: a 404 or 405 from the router (tests
 * send unknown paths and wrong methods on purpose), CORS preflights (204 to OPTIONS), and the web
 * console's pages, which are outside the document (`isApiPath`).
 *
 * Counts: each test process writes what it validated and skipped to a file at exit, in a
 * directory per test run (node --test runs files in parallel processes). Sum the last run's:
 *   npx tsx test/helpers/openapi-check.ts --sum [dir]
 */
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import * as formats from 'ajv-formats'
import { isApiPath, openApiDocument } from '../../src/api/openapi/document.ts'

type Json = Record<string, any>

const doc = openApiDocument as Json
const METHODS = ['get', 'post', 'patch', 'put', 'delete'] as const

export class OpenApiMismatch extends Error {
  override readonly name = 'OpenApiMismatch'
}

interface Route {
  readonly template: string
  readonly segments: readonly string[]
  readonly operations: Readonly<Record<string, Json>>
}

const routes: Route[] = Object.entries(doc['paths'] as Json).map(([template, item]) => ({
  template,
  segments: template.split('/').slice(1),
  operations: Object.fromEntries(METHODS.filter((m) => item[m]).map((m) => [m, item[m] as Json])),
}))

/** As src/http/router.ts: a static path first, then every template of the same length. */
function findOperation(method: string, path: string): { route: Route; operation: Json } | undefined {
  const segments = path.split('/').slice(1)
  const candidates = routes.filter((r) => r.segments.length === segments.length)
  const matches = (r: Route, templated: boolean): boolean =>
    r.segments.every((want, i) => (want.startsWith('{') ? templated && (segments[i] ?? '').length > 0 : want === segments[i]))
  for (const templated of [false, true]) {
    for (const route of candidates) {
      const operation = route.operations[method]
      if (operation && matches(route, templated)) return { route, operation }
    }
  }
  return undefined
}

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true })
// The CJS module's export is the plugin itself; its types describe it as a default export.
const addFormats = ((formats as Json)['default'] ?? formats) as (a: Ajv2020) => Ajv2020
addFormats(ajv)

/**
 * Each component schema is added once, under an id of its own, and `#/components/schemas/X`
 * points there: ajv then compiles each component once per process, however many responses refer
 * to it (compiling refs into one big document instead cost ~13 ms per response schema).
 */
const SCHEMAS = 'https://replenish.invalid/schemas/'
const LOCAL = '#/components/schemas/'
function rewritten(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rewritten)
  if (value === null || typeof value !== 'object') return value
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === '$ref' && typeof v === 'string' && v.startsWith(LOCAL) ? SCHEMAS + v.slice(LOCAL.length) : rewritten(v)]),
  )
}
for (const [name, schema] of Object.entries(doc['components']['schemas'] as Json)) ajv.addSchema(rewritten(schema) as Json, SCHEMAS + name)
const compiled = new Map<string, ValidateFunction>()

const escape = (part: string): string => part.replaceAll('~', '~0').replaceAll('/', '~1')

/** The validator of the schema at `pointer` in the document (compiled on first use). */
function validator(pointer: string): ValidateFunction {
  let fn = compiled.get(pointer)
  if (!fn) {
    const schema = pointer.split('/').slice(1).reduce((node: Json, part) => node[part.replaceAll('~1', '/').replaceAll('~0', '~')], doc)
    fn = ajv.compile(rewritten(schema) as Json)
    compiled.set(pointer, fn)
  }
  return fn
}

/**
 * Compiles the schema of every response in the document, so a schema ajv refuses (strict mode)
 * fails a test even for an answer no test has received yet. Answers how many there are.
 */
export function compileEveryResponseSchema(): number {
  let n = 0
  for (const route of routes) {
    for (const [method, operation] of Object.entries(route.operations)) {
      for (const [status, documented] of Object.entries(operation['responses'] as Json)) {
        const { node, pointer } = resolve(documented as Json, `/paths/${escape(route.template)}/${method}/responses/${status}`)
        for (const type of Object.keys((node['content'] ?? {}) as Json)) {
          validator(`${pointer}/content/${escape(type)}/schema`)
          n++
        }
      }
    }
  }
  return n
}

/** A `$ref` to components/… resolved, with the JSON pointer of where it landed. */
function resolve(node: Json, pointer: string): { node: Json; pointer: string } {
  const target = node['$ref'] as string | undefined
  if (target === undefined) return { node, pointer }
  const parts = target.slice(2).split('/')
  return { node: parts.reduce((n: Json, p) => n[p], doc), pointer: `/${parts.join('/')}` }
}

const counts = { validated: 0, skipped: 0, byOperation: {} as Record<string, number>, skippedBy: {} as Record<string, number> }

export interface Received {
  readonly status: number
  readonly headers: Headers
  readonly text: string
}

/** Throws OpenApiMismatch when the answer is not what the document says; otherwise counts it. */
export function checkResponse(method: string, url: string, res: Received): 'validated' | 'skipped' {
  const raw = new URL(url, 'http://127.0.0.1').pathname
  const path = raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw
  const verb = method.toUpperCase()
  const found = findOperation(verb === 'HEAD' ? 'get' : verb.toLowerCase(), path)
  if (!found) {
    const preflight = verb === 'OPTIONS' && res.status === 204
    if (res.status === 404 || res.status === 405 || preflight || !isApiPath(path)) {
      const key = isApiPath(path) ? `${verb} ${res.status}` : 'web console'
      counts.skippedBy[key] = (counts.skippedBy[key] ?? 0) + 1
      counts.skipped++
      return 'skipped'
    }
    throw new OpenApiMismatch(`${verb} ${path} answered ${res.status}, but the OpenAPI document has no operation for it`)
  }
  const { route, operation } = found
  const label = `${verb} ${path} (${operation['operationId']} on ${route.template}) answered ${res.status}`
  const status = String(res.status)
  const documented = operation['responses'] as Json
  if (!documented[status]) {
    throw new OpenApiMismatch(`${label}, which the document does not list (it lists ${Object.keys(documented).join(', ')}): ${excerpt(res.text)}`)
  }
  const base = `/paths/${escape(route.template)}/${verb === 'HEAD' ? 'get' : verb.toLowerCase()}/responses/${status}`
  const { node: response, pointer } = resolve(documented[status] as Json, base)
  for (const [name, header] of Object.entries((response['headers'] ?? {}) as Json)) {
    if (resolve(header as Json, '').node['required'] === true && !res.headers.has(name)) throw new OpenApiMismatch(`${label} without its required ${name} header`)
  }
  if (verb !== 'HEAD') checkBody(label, response, pointer, res)
  const key = `${operation['operationId']} ${status}`
  counts.byOperation[key] = (counts.byOperation[key] ?? 0) + 1
  counts.validated++
  return 'validated'
}

function checkBody(label: string, response: Json, pointer: string, res: Received): void {
  const content = response['content'] as Json | undefined
  if (!content) {
    if (res.text.length > 0) throw new OpenApiMismatch(`${label} with a body, but the document gives it none`)
    return
  }
  const type = (res.headers.get('content-type') ?? '').split(';', 1)[0]!.trim()
  if (!content[type]) throw new OpenApiMismatch(`${label} as ${type || 'no content type'}; the document says ${Object.keys(content).join(' or ')}`)
  let body: unknown = res.text
  if (type === 'application/json') {
    try {
      body = JSON.parse(res.text)
    } catch {
      throw new OpenApiMismatch(`${label} with a body that is not JSON: ${excerpt(res.text)}`)
    }
  }
  const validate = validator(`${pointer}/content/${escape(type)}/schema`)
  if (!validate(body)) {
    throw new OpenApiMismatch(`${label}; the body does not match the document:\n${describe(validate.errors ?? [])}\nbody: ${excerpt(res.text)}`)
  }
}

function describe(errors: readonly ErrorObject[]): string {
  return errors
    .slice(0, 12)
    .map((e) => `  ${e.instancePath || '(body)'} ${e.message ?? ''}${e.params && Object.keys(e.params).length > 0 ? ` ${JSON.stringify(e.params)}` : ''} [${e.schemaPath}]`)
    .join('\n')
}

const excerpt = (text: string): string => (text.length > 400 ? `${text.slice(0, 400)}…` : text)

// ---- counts across the test processes of one run --------------------------------------------------

const ROOT = join(tmpdir(), 'replenish-openapi-check')

/** One directory per `node --test` run: its files' processes share the runner as parent. */
const runDir = (): string => process.env['OPENAPI_CHECK_DIR'] ?? join(ROOT, `run-${process.ppid}`)

process.on('exit', () => {
  if (counts.validated === 0 && counts.skipped === 0) return
  try {
    const dir = runDir()
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(counts))
  } catch {
    // Counting is a report, never a reason for a test run to fail.
  }
})

/** The totals of one run's directory (the newest when none is named), and what was never exercised. */
export function sumCounts(dir?: string): string {
  const chosen = dir ?? newestRun()
  const total = { validated: 0, skipped: 0, processes: 0, byOperation: {} as Record<string, number>, skippedBy: {} as Record<string, number> }
  for (const name of readdirSync(chosen).filter((n) => n.endsWith('.json'))) {
    const c = JSON.parse(readFileSync(join(chosen, name), 'utf8')) as typeof counts
    total.validated += c.validated
    total.skipped += c.skipped
    total.processes++
    for (const [k, n] of Object.entries(c.byOperation)) total.byOperation[k] = (total.byOperation[k] ?? 0) + n
    for (const [k, n] of Object.entries(c.skippedBy)) total.skippedBy[k] = (total.skippedBy[k] ?? 0) + n
  }
  const operations = routes.flatMap((r) => Object.values(r.operations).map((o) => o['operationId'] as string))
  const seen = new Set(Object.keys(total.byOperation).map((k) => k.split(' ')[0]))
  const never = operations.filter((o) => !seen.has(o))
  const statuses = new Set(Object.keys(total.byOperation).map((k) => k.split(' ')[1]))
  return [
    `${total.validated} responses validated against the OpenAPI document, ${total.skipped} skipped (no operation: ${JSON.stringify(total.skippedBy)}), from ${total.processes} test processes (${chosen})`,
    `operations exercised: ${operations.length - never.length} of ${operations.length}; statuses seen: ${[...statuses].sort().join(', ')}`,
    `never exercised: ${never.length === 0 ? 'none' : never.join(', ')}`,
  ].join('\n')
}

function newestRun(): string {
  const runs = readdirSync(ROOT).map((n) => join(ROOT, n)).filter((p) => statSync(p).isDirectory())
  const newest = runs.sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0]
  if (newest === undefined) throw new Error(`no counts under ${ROOT}: run the tests first`)
  return newest
}

if (process.argv.includes('--sum')) {
  const at = process.argv.indexOf('--sum')
  process.stdout.write(`${sumCounts(process.argv[at + 1])}\n`)
}
