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
  return Promise.resolve(req).then((r) => (length > 0 && r.readableLength === length ? takeBuffered(r) : streamBody(r, limit)))
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

function streamBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  // Gone before the first read (the client hung up while the request waited for its turn):
  // no 'error', 'close' or 'end' will come any more.
  if (req.destroyed) return Promise.reject(new BodyCutOff('the request was closed before its body was read'))
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    let settled = false
    const fail = (err: Error): void => {
      if (!settled) reject(err)
      settled = true
    }
    req.on('data', (chunk: Buffer) => {
      if (settled) return
      size += chunk.length
      if (size > limit) return fail(tooLarge())
      chunks.push(chunk)
    })
    req.on('end', () => {
      if (!settled) resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size))
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
  if (type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'))) {
    const text = raw.toString('utf8')
    if (text.trim().length === 0) return { kind: 'none', value: undefined }
    try {
      return { kind: 'json', value: JSON.parse(text) }
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
