import type { IncomingMessage } from 'node:http'
import { HttpError, badRequest } from './http-error.ts'
import { parseForm } from './form.ts'

export type BodyKind = 'json' | 'form' | 'none'

export const EMPTY = Buffer.alloc(0)

export const tooLarge = (): HttpError =>
  new HttpError(413, { error: 'Request body too large' }, { connection: 'close' })

/** Reads the whole body, refusing (413) as soon as it passes `limit` bytes. */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = req.headers['content-length']
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge())
  if (declared === '0') return Promise.resolve(EMPTY)
  // node:http hands the 'request' handler the headers, then parses the rest of the same read and
  // buffers the body it finds there before the handler's microtasks run: by then a body that
  // came with its headers (nearly every API request) is wholly buffered, and it is taken at once
  // instead of through a round of stream events (issue 6: about 2 µs of a PATCH). A body still on
  // its way, or chunked, is streamed.
  const length = declared === undefined ? -1 : Number(declared)
  return Promise.resolve(req).then((r) => (length > 0 && r.readableLength === length ? takeBuffered(r) : streamBody(r, limit, length)))
}

/** Bodies this large are given back as soon as their request has been answered (giveBack). */
const GIVE_BACK_BYTES = 1024 * 1024

/**
 * A large body's memory, given back when its request has been answered. A buffer outside V8's
 * heap is otherwise freed only when a major collection finds it unreferenced, which a server
 * that has gone quiet may not run for a long time: a refused 60 MB import left serve at about
 * 250 MB of RSS a minute later, most of it the body and the chunks it was read in (issue 25).
 * Only a buffer alone on its memory is released (detached: a view of it left anywhere reads as
 * empty); a smaller one, or a slice of a larger allocation, is left to the collector.
 */
export function giveBack(raw: Buffer): void {
  if (raw.length < GIVE_BACK_BYTES || raw.byteOffset !== 0 || raw.buffer.byteLength !== raw.length || !(raw.buffer instanceof ArrayBuffer)) return
  try {
    raw.buffer.transfer(0)
  } catch {
    // Not detachable (Node's own buffers may not be): the collector frees it in time.
  }
}

function takeBuffered(req: IncomingMessage): Buffer {
  return (req.read() as Buffer | null) ?? EMPTY
}

/**
 * The body's read failed: our request time-out cut it off, or the client went away. No bug, so
 * no 500: the server answers 408 or 499 from this error alone, never from the state of `req`
 * after a handler threw (issue 15: a request whose body came with its headers looked
 * incomplete to `req.complete`, and a database error was answered 499 and not logged).
 */
export class BodyCutOff extends Error {
  override readonly name = 'BodyCutOff'
}

/**
 * The body as it arrives. With its length declared, each chunk is copied into one buffer of that
 * length at once and dropped: a large body (an import's megabytes) is held once, not twice (its
 * chunks, then their concatenation), and its chunks die young. A chunked body is gathered.
 */
function streamBody(req: IncomingMessage, limit: number, length: number): Promise<Buffer> {
  // Gone before the first read (the client hung up while the request waited for its turn):
  // no 'error', 'close' or 'end' will come any more.
  if (req.destroyed) return Promise.reject(new BodyCutOff('the request was closed before its body was read'))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const whole = length > 0 ? Buffer.allocUnsafeSlow(length) : undefined
    let size = 0
    let settled = false
    const fail = (err: Error): void => {
      if (!settled) reject(err)
      settled = true
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      if (size + chunk.length > limit) return fail(tooLarge())
      if (whole === undefined) chunks.push(chunk)
      else if (size + chunk.length <= whole.length) chunk.copy(whole, size)
      else return fail(badRequest('The request body is longer than its Content-Length')) // node:http's parser never lets this through
      size += chunk.length
    })
    req.on('end', () => {
      if (!settled) resolve(whole !== undefined ? whole.subarray(0, size) : chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))
      settled = true
    })
    req.on('error', (err) => {
      if (!settled) fail(new BodyCutOff('the request body was cut off', { cause: err }))
    })
    // 'close' follows every 'end' (checked first, so no error is built for nothing); an abort
    // emits 'error' before it, and a stream destroyed without an error only closes.
    req.on('close', () => {
      if (!settled) fail(new BodyCutOff('the request was closed before its body ended'))
    })
  })
}

/**
 * C1: an empty body is no body, whatever its content type; JSON and Rails form encoding are
 * understood; any other non-empty body (or one with no content type) is a 415.
 */
export function parseBody(contentType: string | undefined, raw: Buffer): { kind: BodyKind; value: unknown } {
  if (raw.length === 0) return { kind: 'none', value: undefined }
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
  // C1 to the letter: only application/json is JSON (a `+json` type is "any other": 415), and a
  // body of white space is not empty, so it is unparseable JSON (400), never "no body".
  if (type === 'application/json') {
    try {
      return { kind: 'json', value: JSON.parse(raw.toString('utf8')) }
    } catch {
      throw badRequest('The request body is not valid JSON')
    }
  }
  if (type === 'application/x-www-form-urlencoded') {
    return { kind: 'form', value: parseForm(raw.toString('utf8')) }
  }
  throw new HttpError(415, {
    error: 'Unsupported media type: send application/json or application/x-www-form-urlencoded',
  })
}

/**
 * A route that takes one content type unparsed (an import's JSON Lines): the bytes stay in
 * `rawBody`. As in C1, an empty body is no body whatever its type, and any other type is a 415.
 */
export function rawBody(expected: string, contentType: string | undefined, raw: Buffer): { kind: 'raw' | 'none'; value: undefined } {
  if (raw.length === 0) return { kind: 'none', value: undefined }
  const type = (contentType ?? '').split(';', 1)[0]!.trim().toLowerCase()
  if (type !== expected) throw new HttpError(415, { error: `Unsupported media type: send ${expected}` })
  return { kind: 'raw', value: undefined }
}
