/**
 * Compression of answers (C18 "Transfer", docs/decisions.md "Compression"): assets and JSON
 * answers of 1 KiB or more go out gzip-compressed, or br when the client prefers it, as its
 * Accept-Encoding says; smaller ones as they are, with no work beyond comparing their length.
 * Assets are compressed once (`precompress`, at their best settings) and picked per request;
 * answers made per request are compressed per request, off the event loop (zlib runs in libuv's
 * thread pool), at settings fast enough for that; streamed answers (CSV exports) through a
 * streaming compressor.
 */
import { promisify } from 'node:util'
import zlib from 'node:zlib'

export type Coding = 'br' | 'gzip'

/** Below this, compressing saves less than it costs (headers, a CPU hop); RFC-free, as nginx's and Cloudflare's defaults. */
export const MIN_COMPRESSED_BYTES = 1024

/** An asset's bytes compressed each way, once. */
export interface Encoded {
  readonly gzip: Buffer
  readonly br: Buffer
}

/** Text of any kind compresses; images other than SVG and icons are compressed already. */
const COMPRESSIBLE = /^(?:text\/|application\/(?:json|javascript|x-ndjson|xml)|image\/(?:svg\+xml|x-icon|vnd\.microsoft\.icon))/

export function isCompressible(contentType: string): boolean {
  return COMPRESSIBLE.test(contentType)
}

/** A qvalue (RFC 9110 §12.4.2): 0 to 1 with at most three decimals. */
const QVALUE = /^\s*q\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)\s*$/i

/**
 * The coding to answer with (RFC 9110 §12.5.3), or undefined for none. `gzip` and `br` are
 * weighed by their q-values, or the `*` entry's for one not named; q=0 refuses. br only when its
 * weight is above gzip's: on a tie (`gzip, deflate, br`, every browser) gzip, as C18 words it. No
 * header, an empty one, or only `identity`: none. An entry with a malformed q-value is ignored.
 */
export function negotiateCoding(header: string | undefined): Coding | undefined {
  if (header === undefined || header === '') return undefined
  let gzip: number | undefined
  let br: number | undefined
  let any: number | undefined
  for (const entry of header.split(',')) {
    const semicolon = entry.indexOf(';')
    const name = (semicolon === -1 ? entry : entry.slice(0, semicolon)).trim().toLowerCase()
    let q = 1
    if (semicolon !== -1) {
      const m = QVALUE.exec(entry.slice(semicolon + 1))
      if (!m) continue
      q = Number(m[1])
    }
    if (name === 'gzip' || name === 'x-gzip') gzip = q
    else if (name === 'br') br = q
    else if (name === '*') any = q
  }
  const g = gzip ?? any ?? 0
  const b = br ?? any ?? 0
  if (b > g) return 'br'
  return g > 0 ? 'gzip' : undefined
}

const gzipAsync = promisify(zlib.gzip)
const brotliAsync = promisify(zlib.brotliCompress)

/** Per request: gzip's default level, br at quality 4 (about as fast, smaller; 11 is ~300× slower). */
const DYNAMIC_GZIP: zlib.ZlibOptions = { level: 6 }
const dynamicBrotli = (sizeHint: number): zlib.BrotliOptions => ({
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 4, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: sizeHint },
})

/** An answer made for this request, compressed in the thread pool. */
export function compress(body: Buffer, coding: Coding): Promise<Buffer> {
  return coding === 'gzip' ? gzipAsync(body, DYNAMIC_GZIP) : brotliAsync(body, dynamicBrotli(body.length))
}

/** A streaming compressor for an answer of unknown length (the CSV exports), at the per-request settings. */
export function compressor(coding: Coding): zlib.Gzip | zlib.BrotliCompress {
  return coding === 'gzip' ? zlib.createGzip(DYNAMIC_GZIP) : zlib.createBrotliCompress(dynamicBrotli(0))
}

/**
 * An asset's bytes compressed once, at the best settings (gzip 9, br 11: a few hundred ms for the
 * console's bundle, paid once per process), or undefined when it is too small or not text.
 */
export async function precompress(body: string | Buffer, contentType: string): Promise<Encoded | undefined> {
  const bytes = typeof body === 'string' ? Buffer.from(body) : body
  if (bytes.length < MIN_COMPRESSED_BYTES || !isCompressible(contentType)) return undefined
  const [gzip, br] = await Promise.all([
    gzipAsync(bytes, { level: 9 }),
    brotliAsync(bytes, {
      params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes.length },
    }),
  ])
  return { gzip, br }
}

/** `vary` with Accept-Encoding added (CORS may have put Origin there). */
export function varyOnEncoding(vary: string | undefined): string {
  return vary === undefined ? 'Accept-Encoding' : `Accept-Encoding, ${vary}`
}
