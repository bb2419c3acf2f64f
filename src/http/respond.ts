import type { ServerResponse } from 'node:http'
import { HttpError, isUnavailable } from './http-error.ts'
import type { Reply } from './types.ts'

export const JSON_TYPE = 'application/json; charset=utf-8'

export function send(res: ServerResponse, reply: Reply, requestId: string, closing: boolean): void {
  const payload = reply.raw ?? (reply.contentType ? String(reply.body) : JSON.stringify(reply.body))
  const headers: Record<string, string | number> = {
    'content-type': reply.contentType ?? JSON_TYPE,
    'content-length': Buffer.byteLength(payload),
    'x-request-id': requestId,
  }
  if (reply.headers) Object.assign(headers, reply.headers)
  if (closing) headers['connection'] = 'close'
  res.writeHead(reply.status, headers)
  res.end(payload)
}

/** The outage whose first 503 was logged last (Unavailable.since): one line per outage, not one per request. */
export interface OutageLog {
  loggedSince: number | undefined
}

/**
 * The one place where an error becomes a status (STYLE 1). An HttpError is a 4xx the client
 * caused and may read. An Unavailable one (the database cannot be reached, the disk is full) is
 * a 503 with Retry-After, which clients and load balancers retry; its outage is logged once, in
 * one line. Anything else is a bug: logged with the request id and its stack, answered 500
 * without its text (no stack, no SQL).
 */
export function errorReply(err: unknown, requestId: string, logError: (entry: object) => void, outages: OutageLog = { loggedSince: undefined }): Reply {
  if (err instanceof HttpError) {
    return err.headers ? { status: err.status, body: err.body, headers: { ...err.headers } } : { status: err.status, body: err.body }
  }
  if (isUnavailable(err)) {
    if (outages.loggedSince !== err.since) {
      outages.loggedSince = err.since
      logError({
        time: new Date().toISOString(),
        level: 'error',
        request_id: requestId,
        error: 'Service unavailable',
        message: `${err.reason}; since ${new Date(err.since).toISOString()} requests that need it are answered 503 until it is back (logged once per outage)`,
      })
    }
    return { status: 503, body: { error: 'Service unavailable', request_id: requestId }, headers: { 'retry-after': String(err.retryAfterSeconds) } }
  }
  logError({
    time: new Date().toISOString(),
    level: 'error',
    request_id: requestId,
    error: err instanceof Error ? err.name : typeof err,
    message: err instanceof Error ? err.message : String(err),
    stack: err instanceof Error ? err.stack : undefined,
  })
  return { status: 500, body: { error: 'Internal server error', request_id: requestId } }
}
