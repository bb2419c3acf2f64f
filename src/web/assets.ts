import { createHash } from 'node:crypto'
import { notFound } from '../http/http-error.ts'
import type { Handler } from '../http/types.ts'
import { precompress, type Encoded } from '../http/compression.ts'
import type { AssetTexts } from './client-bundle.ts'
import { FAVICON_ICO } from './favicon.ts'

/**
 * `/assets/<name>`: the console's scripts and styles (C14). In the binary they are the texts
 * build.mjs bundled and defined as REPLENISH_EMBEDDED_ASSETS; from source they are bundled on the
 * first request that needs them (dev-assets.ts), once per process.
 */
declare const REPLENISH_EMBEDDED_ASSETS: AssetTexts | undefined

export interface Asset {
  readonly body: string | Buffer
  readonly type: string
  /** Content hash: the ETag, and the `?v=` the pages link the asset with. */
  readonly hash: string
  /** The body compressed each way (C18), once; none for an asset under 1 KiB. */
  readonly encoded: Encoded | undefined
}

export type AssetMap = ReadonlyMap<string, Asset>

export interface Assets {
  /** Every asset, bundled on the first call when the server runs from source. */
  all(): Promise<AssetMap>
}

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  ico: 'image/x-icon',
}

/** The icon browsers ask for at `/favicon.ico` (C18), one of the assets. */
export const FAVICON = 'favicon.ico'

/** A year, and never revalidated: a changed asset has another hash, so another URL. */
const IMMUTABLE = 'public, max-age=31536000, immutable'

// The bundle depends only on the source files, which do not change under a running process: one
// per process, however many servers a test suite starts.
let clientTexts: Promise<AssetTexts> | undefined

function loadClientTexts(): Promise<AssetTexts> {
  if (typeof REPLENISH_EMBEDDED_ASSETS !== 'undefined') return Promise.resolve(REPLENISH_EMBEDDED_ASSETS)
  clientTexts ??= import('./dev-assets.ts').then((m) => m.bundleFromSource())
  // A failed bundle (a syntax error while editing) is tried again on the next request.
  clientTexts.catch(() => { clientTexts = undefined })
  return clientTexts
}

/**
 * The client bundle plus `extra` assets made from the configuration (theme.css), and the icon.
 * The binary makes them (and compresses them) at start; a server run from source on first use.
 */
export function createAssets(extra: AssetTexts, load: () => Promise<AssetTexts> = loadClientTexts): Assets {
  let map: Promise<AssetMap> | undefined
  const assets: Assets = {
    all() {
      map ??= load().then((texts) => toMap({ ...texts, ...extra, [FAVICON]: FAVICON_ICO }))
      map.catch(() => { map = undefined })
      return map
    },
  }
  if (typeof REPLENISH_EMBEDDED_ASSETS !== 'undefined' && load === loadClientTexts) void assets.all().catch(() => {})
  return assets
}

// Compressed bodies by content hash, once per process: the bundle is the same for every server a
// test process starts, and br at its best costs a few hundred milliseconds of a thread per bundle.
const compressed = new Map<string, Promise<Encoded | undefined>>()

async function toMap(bodies: Readonly<Record<string, string | Buffer>>): Promise<AssetMap> {
  const out = new Map<string, Asset>()
  await Promise.all(Object.entries(bodies).map(async ([name, body]) => {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
    const hash = createHash('sha256').update(body).digest('hex').slice(0, 16)
    let encoded = compressed.get(`${hash} ${type}`)
    if (encoded === undefined) compressed.set(`${hash} ${type}`, (encoded = precompress(body, type)))
    out.set(name, { body, type, hash, encoded: await encoded })
  }))
  return out
}

/** The URL a page links an asset by: with its hash, so that it may be cached for good. */
export function assetUrl(assets: AssetMap, name: string): string {
  const asset = assets.get(name)
  return asset === undefined ? `/assets/${name}` : `/assets/${name}?v=${asset.hash}`
}

/**
 * GET /assets/:name. Asked for with the current hash (`?v=`), cacheable for a year; otherwise
 * (no or an old hash) revalidated each time with the ETag, so a page of an older version still
 * gets a working asset and never a stale one.
 */
export function serveAsset(assets: Assets, fixedName?: string): Handler {
  return async (ctx) => {
    const asset = (await assets.all()).get(fixedName ?? ctx.params['name'] ?? '')
    if (asset === undefined) throw notFound()
    // Weak (RFC 9110 §8.8.1): the gzip, br and plain bytes of one asset share it, which only a
    // weak validator may do; If-None-Match compares weakly anyway.
    const tag = `"${asset.hash}"`
    const headers = {
      etag: `W/${tag}`,
      'cache-control': ctx.query.get('v') === asset.hash ? IMMUTABLE : 'no-cache',
      'x-content-type-options': 'nosniff',
    }
    // `encoded` on the 304 too: it carries the Vary its 200 would have.
    const encoded = asset.encoded === undefined ? {} : { encoded: asset.encoded }
    if (matchesEtag(ctx.req.headers['if-none-match'], tag)) return { status: 304, body: '', contentType: asset.type, headers, ...encoded }
    return { status: 200, body: asset.body, contentType: asset.type, headers, ...encoded }
  }
}

/** If-None-Match (RFC 9110 §13.1.2): `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}
