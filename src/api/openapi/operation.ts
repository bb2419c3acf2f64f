/**
 * One operation of the document from what decides its statuses: the method (a body is read, so
 * 400/413/415; an Idempotency-Key is honoured, so 409/422), the path (an `{id}` may find nothing:
 * 404) and who may call it (401, 403, 429). The statuses are derived here, once, in the same terms
 * the server decides them (src/http/server.ts, src/api/kit/endpoint.ts, auth.ts), instead of
 * being listed by hand on 60-odd operations.
 */
import { DRY_RUN_HEADER, jsonResponse } from './errors.ts'
import type { Schema } from './schema-kit.ts'

export type Method = 'get' | 'post' | 'patch' | 'put' | 'delete'

/**
 * `customer`: an API key. `admin`: an admin token of scope admin. `read`: scope admin or read.
 * `metrics`: scope admin or metrics, or nobody when REPLENISH_METRICS_PUBLIC=1. `none`: open.
 */
export type Auth = 'customer' | 'admin' | 'read' | 'metrics' | 'none'

export interface Answer {
  /** A success, /readyz's 503, or a 422 of a shape of the route's own (the import's refused line). */
  readonly status: '200' | '201' | '422' | '503'
  readonly description: string
  readonly schema: Schema
  /** Defaults to application/json. */
  readonly mediaType?: string
  /** Headers besides X-Request-Id (a CSV export's Content-Disposition). */
  readonly headers?: Record<string, Schema>
}

export interface OperationSpec {
  readonly id: string
  readonly tag: string
  readonly summary: string
  readonly description?: string
  readonly auth: Auth
  readonly parameters?: readonly Schema[]
  readonly body?: Schema
  readonly answers: readonly Answer[]
  /** An admin list: a malformed query parameter is a 422 naming it (C13). */
  readonly strictQuery?: boolean
}

/** [path, method, operation object]: what the paths files list and document.ts assembles. */
export type Entry = readonly [string, Method, Schema]

const SECURITY: Record<Auth, readonly Schema[]> = {
  customer: [{ apiKey: [] }, { portalSession: [] }],
  admin: [{ adminToken: ['admin'] }],
  read: [{ adminToken: ['admin'] }, { adminToken: ['read'] }],
  // `{}`: no credentials at all, when the operator made /metrics public.
  metrics: [{ adminToken: ['admin'] }, { adminToken: ['metrics'] }, {}],
  none: [],
}

const use = (name: string): Schema => ({ $ref: `#/components/responses/${name}` })
const parameter = (name: string): Schema => ({ $ref: `#/components/parameters/${name}` })

function statuses(method: Method, path: string, spec: OperationSpec): Record<string, Schema> {
  const out: Record<string, Schema> = {}
  const writes = method !== 'get'
  // The body is read and parsed before any handler runs, for every method but GET and HEAD.
  if (writes) Object.assign(out, { '400': use('BadRequest'), '413': use('PayloadTooLarge'), '415': use('UnsupportedMediaType') })
  if (spec.auth === 'customer') out['401'] = use('CustomerUnauthorized')
  // C14: a write made with the portal's session cookie but without its CSRF token.
  if (spec.auth === 'customer' && writes) out['403'] = use('CsrfRefused')
  if (spec.auth === 'admin' || spec.auth === 'read' || spec.auth === 'metrics') {
    out['401'] = use('AdminUnauthorized')
    out['403'] = use('Forbidden')
  }
  if (path.includes('{id}')) out['404'] = use('NotFound')
  if (writes && spec.auth !== 'none') {
    out['409'] = use('Conflict')
    out['422'] = use('Unprocessable')
  } else if (spec.strictQuery) {
    out['422'] = use('InvalidQuery')
  }
  if (spec.auth !== 'none') out['429'] = use('TooManyRequests')
  // Refused by node:http before any route is looked up, so any operation may get them.
  out['408'] = use('RequestTimeout')
  out['431'] = use('HeadersTooLarge')
  out['500'] = use('InternalError')
  // Every route with credentials reads the database (its key or token at least).
  if (spec.auth !== 'none') out['503'] = use('ServiceUnavailable')
  return out
}

/** A success; a write's says when it was a dry run (C18). */
function answer(a: Answer, writes: boolean): Schema {
  const response = jsonResponse(a.description, a.schema, { ...a.headers, ...(writes ? DRY_RUN_HEADER : {}) })
  if (a.mediaType === undefined) return response
  return { ...response, content: { [a.mediaType]: { schema: a.schema } } }
}

export function operation(method: Method, path: string, spec: OperationSpec): Entry {
  const parameters: Schema[] = []
  if (path.includes('{id}')) parameters.push(parameter('Id'))
  parameters.push(...(spec.parameters ?? []))
  if (spec.auth !== 'none' && (method !== 'get' || spec.strictQuery)) parameters.push(parameter('AcceptLanguage'))
  if (method !== 'get' && spec.auth !== 'none') parameters.push(parameter('IdempotencyKey'), parameter('DryRun'))
  const responses: Record<string, Schema> = { ...statuses(method, path, spec) }
  for (const a of spec.answers) responses[a.status] = answer(a, method !== 'get' && spec.auth !== 'none')
  const sorted = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)))
  return [
    path,
    method,
    {
      operationId: spec.id,
      tags: [spec.tag],
      summary: spec.summary,
      ...(spec.description !== undefined ? { description: spec.description } : {}),
      security: SECURITY[spec.auth],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(spec.body !== undefined ? { requestBody: spec.body } : {}),
      responses: sorted,
    },
  ]
}

/** C1: PUT is routed wherever PATCH is (Rails `resources`), so both are documented, alike. */
export function patchAndPut(path: string, spec: OperationSpec): Entry[] {
  return [
    operation('patch', path, spec),
    operation('put', path, { ...spec, id: `${spec.id}Put`, summary: `${spec.summary} (PUT, same as PATCH)` }),
  ]
}

/** A body sent as JSON or as a Rails-style form (C1), both described by `schema`. */
export function body(schema: Schema, options: { required?: boolean; description?: string } = {}): Schema {
  const required = options.required ?? true
  return {
    required,
    description:
      (options.description ? `${options.description} ` : '') +
      'JSON, or a form with Rails bracket notation (`subscription[interval_length]=2`). A JSON body may leave out the root key; an empty body is no body.',
    content: {
      'application/json': { schema },
      'application/x-www-form-urlencoded': { schema },
    },
  }
}
