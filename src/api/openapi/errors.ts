/**
 * The error side of the document: the bodies (C1, C2, C4) as schemas, the shared responses each
 * status points to, and the headers they carry. Every non-2xx answer of the service is one of these.
 */
import { object, ref, text, type Schema } from './schema-kit.ts'

export const errorSchemas: Record<string, Schema> = {
  Error: object({ error: text }),
  InternalError: object({ error: { const: 'Internal server error' }, request_id: { type: 'string', description: "The request's X-Request-Id; the log line with the stack carries it too." } }),
  ServiceUnavailable: object({ error: { const: 'Internal server error', description: 'Every 5xx body is the same (C1); the status and Retry-After tell this one apart.' }, request_id: { type: 'string', description: "The request's X-Request-Id." } }),
  MissingParameter: object({
    error: { type: 'string', examples: ['param is missing or the value is empty: subscription'] },
    exception: { type: 'string', description: 'The same text as `error` (the Spree API sends both).' },
    missing_param: { type: 'string', examples: ['subscription'] },
  }),
  FieldErrors: {
    type: 'object',
    description: 'Rails-style validation errors: each field (nested ones as `line_items.quantity`) with its messages, in the language Accept-Language picks.',
    minProperties: 1,
    additionalProperties: { type: 'array', minItems: 1, items: { type: 'string' } },
    examples: [{ interval_length: ['must be greater than 0'] }],
  },
  Unprocessable: {
    description: 'Field errors, a missing root object, or a refusal in words (an Idempotency-Key reused or too long, an action the record does not allow).',
    oneOf: [ref('FieldErrors'), ref('MissingParameter'), ref('Error')],
  },
}

export const headers: Record<string, Schema> = {
  RequestId: { description: "The request's own X-Request-Id when it is a sane token, else a new one.", required: true, schema: { type: 'string' } },
  RetryAfter: { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'integer', minimum: 1 } },
  WwwAuthenticate: { description: '`Bearer realm="replenish"` when the credentials are missing or wrong (not when a valid key does not own the record).', schema: { type: 'string' } },
  IdempotentReplayed: { description: '`true` when this is the stored answer of an earlier request with the same Idempotency-Key.', schema: { type: 'string', enum: ['true'] } },
  DryRun: { description: '`1` when the request was a dry run (`Replenish-Dry-Run: 1` on a write, C18): nothing was changed. Refusals of a dry run carry it too.', schema: { type: 'string', enum: ['1'] } },
}

/** The header of every answer to a dry run (C18). */
export const DRY_RUN_HEADER: Record<string, Schema> = { 'Replenish-Dry-Run': { $ref: '#/components/headers/DryRun' } }

const requestId = { 'X-Request-Id': { $ref: '#/components/headers/RequestId' } }

/** A response of `schema` as JSON, with the headers every answer carries. */
export function jsonResponse(description: string, schema: Schema, extraHeaders: Record<string, Schema> = {}): Schema {
  return { description, headers: { ...requestId, ...extraHeaders }, content: { 'application/json': { schema } } }
}

const error = (description: string, extraHeaders: Record<string, Schema> = {}): Schema => jsonResponse(description, ref('Error'), extraHeaders)
const authHeader = { 'WWW-Authenticate': { $ref: '#/components/headers/WwwAuthenticate' } }

/** components/responses, by the name operations refer to them with. */
export const responses: Record<string, Schema> = {
  BadRequest: error('The body is not valid JSON, or a form body whose structure conflicts (`a=1&a[b]=2`).'),
  CustomerUnauthorized: error(
    'No API key (`You must specify an API key.`), an unknown or revoked one (`Invalid API key specified.`), or a record of another user (`You are not authorized to perform that action.`: 401, not 403); with a portal session cookie, one that ended (`Your portal session has ended: open a new link from the shop.`).',
    authHeader,
  ),
  AdminUnauthorized: error('No admin token (`You must specify an admin token.`) or a wrong or revoked one (`Invalid admin token.`).', authHeader),
  Forbidden: error("A known admin token outside its scope: `This token's scope does not allow this request.`"),
  CsrfRefused: error('A write made with the portal\'s session cookie without its X-CSRF-Token, or with another: `Invalid or missing CSRF token.` (C14).'),
  NotFound: error('No such record, or an id that is not a positive integer: `The resource you were looking for could not be found.`', DRY_RUN_HEADER),
  Conflict: error('A request with the same Idempotency-Key is still being processed.'),
  PayloadTooLarge: error('The body is over the limit (64 KiB unless REPLENISH_MAX_BODY_BYTES says otherwise); the connection is closed.'),
  UnsupportedMediaType: error('A non-empty body that is neither application/json nor application/x-www-form-urlencoded, or has no content type.'),
  Unprocessable: jsonResponse('Refused: nothing was changed or created.', ref('Unprocessable'), { 'Idempotent-Replayed': { $ref: '#/components/headers/IdempotentReplayed' }, ...DRY_RUN_HEADER }),
  InvalidQuery: jsonResponse('A query parameter is malformed or not allowed (strict on the admin API, C13); the body names it.', ref('FieldErrors')),
  TooManyRequests: error('Over the per-key rate limit, or too many bad credentials from this address.', { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } }),
  RequestTimeout: error('The request was not received in time (headers or body); the connection is closed.'),
  HeadersTooLarge: error('The request headers are over node:http\'s limit; the connection is closed.'),
  InternalError: jsonResponse('A bug: logged with the request id, answered without its details.', ref('InternalError')),
  ServiceUnavailable: jsonResponse(
    'The database cannot be reached now (PostgreSQL restarting, down or not answering in time), a row stayed locked by another transaction for 5 s (PostgreSQL), or the disk is full: try again after Retry-After seconds. Nothing was changed, unless the connection was lost during the commit itself: an Idempotency-Key makes the retry safe either way.',
    ref('ServiceUnavailable'),
    { 'Retry-After': { $ref: '#/components/headers/RetryAfter' } },
  ),
}
