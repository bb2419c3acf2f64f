import type { ServerResponse } from 'node:http'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import { HttpError, isUnavailable } from './http-error.ts'
import { MIN_COMPRESSED_BYTES, compress, compressor, isCompressible, negotiateCoding, varyOnEncoding } from './compression.ts'
import type { Reply } from './types.ts'

export const JSON_TYPE = 'application/json; charset=utf-8'

type Headers = Record<string, string | number>

/**
 * Sends `reply`. The common answer (under 1 KiB: a subscription, an error) is written at once,
 * with one comparison more than before compression existed; a larger one, or an asset with its
 * compressed forms, is negotiated (compression.ts) and, when compressed per request, answers a
 * promise that settles once it is written. A streamed reply answers how its stream ended.
 */
export function send(res: ServerResponse, reply: Reply, requestId: string, closing: boolean, acceptEncoding?: string): void | Promise<void | StreamEnd> {
  const body = reply.body
  const payload = reply.raw ?? (reply.contentType ? (Buffer.isBuffer(body) ? body : String(body)) : JSON.stringify(body))
  const length = typeof payload === 'string' ? Buffer.byteLength(payload) : payload.length
  const headers: Headers = {
    'content-type': reply.contentType ?? JSON_TYPE,
    'content-length': length,
    'x-request-id': requestId,
  }
  if (reply.headers) Object.assign(headers, reply.headers)
  if (closing) headers['connection'] = 'close'
  if (reply.stream !== undefined) return sendStream(res, reply.status, headers, reply.stream, acceptEncoding)
  if (length < MIN_COMPRESSED_BYTES && reply.encoded === undefined) {
    res.writeHead(reply.status, headers)
    res.end(payload)
    return
  }
  return sendNegotiated(res, reply, headers, payload, acceptEncoding)
}

function sendNegotiated(res: ServerResponse, reply: Reply, headers: Headers, payload: string | Buffer, acceptEncoding: string | undefined): void | Promise<void> {
  const { encoded, status } = reply
  if (encoded === undefined && !isCompressible(String(headers['content-type']))) {
    res.writeHead(status, headers)
    res.end(payload)
    return
  }
  // What is sent depends on Accept-Encoding from here on, whatever this request asked: caches
  // must key on it (a 304 says so too, as its 200 did).
  headers['vary'] = varyOnEncoding(headers['vary'] as string | undefined)
  const coding = status === 204 || status === 304 ? undefined : negotiateCoding(acceptEncoding)
  if (coding === undefined) {
    res.writeHead(status, headers)
    res.end(payload)
    return
  }
  const write = (bytes: Buffer): void => {
    headers['content-encoding'] = coding
    headers['content-length'] = bytes.length
    res.writeHead(status, headers)
    res.end(bytes)
  }
  if (encoded !== undefined) return write(encoded[coding])
  return compress(typeof payload === 'string' ? Buffer.from(payload) : payload, coding).then((bytes) => {
    // The client may have gone while the thread pool worked: nothing to answer then.
    if (!res.destroyed) write(bytes)
  })
}

/** How a streamed answer ended: sent whole, cut off by its client, or failed on our side (a bug, logged). */
export type StreamEnd = { readonly status: number; readonly error?: unknown }

/**
 * A streamed answer: no length (chunked), compressed on the way when the client accepts it. Its
 * status and headers go first, so an error while streaming cannot become a 500 any more: the
 * connection is cut instead, which a client sees as a truncated chunked body, never as a
 * complete file (the error is logged as a 500 by the caller).
 */
async function sendStream(res: ServerResponse, status: number, headers: Headers, stream: AsyncIterable<string>, acceptEncoding: string | undefined): Promise<StreamEnd> {
  delete headers['content-length']
  let coding: ReturnType<typeof negotiateCoding>
  if (isCompressible(String(headers['content-type']))) {
    headers['vary'] = varyOnEncoding(headers['vary'] as string | undefined)
    coding = negotiateCoding(acceptEncoding)
    if (coding !== undefined) headers['content-encoding'] = coding
  }
  res.writeHead(status, headers)
  if (res.req.method === 'HEAD') {
    res.end()
    return { status }
  }
  // The stream's own failure (its next() threw), told apart from the client leaving: pipeline
  // then throws the premature close into this generator at its `yield`, and the stream is ended.
  let failed: unknown
  async function* watched(): AsyncGenerator<string> {
    const pieces = stream[Symbol.asyncIterator]()
    let finished = false
    try {
      for (;;) {
        let next: IteratorResult<string>
        try {
          next = await pieces.next()
        } catch (err) {
          finished = true
          failed = err ?? new Error('the stream failed')
          throw err
        }
        if (next.done === true) {
          finished = true
          return
        }
        yield next.value
      }
    } finally {
      if (!finished) await pieces.return?.()
    }
  }
  // Bytes, not objects: the readable then holds at most one piece beyond what the socket took.
  const source = Readable.from(watched(), { objectMode: false, highWaterMark: STREAM_BUFFER_BYTES })
  try {
    await (coding === undefined ? pipeline(source, res) : pipeline(source, compressor(coding), res))
    return { status }
  } catch (err) {
    // The source's own error is ours (a failing read); any other is the client leaving.
    return failed !== undefined ? { status: 500, error: failed } : { status: 499 }
  }
}

/** How much of a streamed answer is read ahead of the socket. */
const STREAM_BUFFER_BYTES = 64 * 1024

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
    if (err.alone === true || outages.loggedSince !== err.since) {
      if (err.alone !== true) outages.loggedSince = err.since
      logError({
        time: new Date().toISOString(),
        level: 'error',
        request_id: requestId,
        error: 'Service unavailable',
        message: err.alone === true
          ? `${err.reason}; answered 503 with Retry-After: ${err.retryAfterSeconds}`
          : `${err.reason}; since ${new Date(err.since).toISOString()} requests that need it are answered 503 until it is back (logged once per outage)`,
      })
    }
    // C1: every 5xx body is this one; the status and Retry-After say "try again".
    return { status: 503, body: { error: 'Internal server error', request_id: requestId }, headers: { 'retry-after': String(err.retryAfterSeconds) } }
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
