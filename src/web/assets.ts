import { createHash } from 'node:crypto'
import { notFound } from '../http/http-error.ts'
import type { Handler } from '../http/types.ts'
import type { AssetTexts } from './client-bundle.ts'

/**
 * `/assets/<name>`: the console's scripts and styles (C14). In the binary they are the texts
 * build.mjs bundled and defined as REPLENISH_EMBEDDED_ASSETS; from source they are bundled on the
 * first request that needs them (dev-assets.ts), once per process.
 */
declare const REPLENISH_EMBEDDED_ASSETS: AssetTexts | undefined

export interface Asset {
  readonly body: string
  readonly type: string
  /** Content hash: the ETag, and the `?v=` the pages link the asset with. */
  readonly hash: string
}

export type AssetMap = ReadonlyMap<string, Asset>

export interface Assets {
  /** Every asset, bundled on the first call when the server runs from source. */
  all(): Promise<AssetMap>
}

const TYPES: Readonly<Record<string, string>> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

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

/** The client bundle plus `extra` assets made from the configuration (theme.css). */
export function createAssets(extra: AssetTexts, load: () => Promise<AssetTexts> = loadClientTexts): Assets {
  let map: Promise<AssetMap> | undefined
  return {
    all() {
      map ??= load().then((texts) => toMap({ ...texts, ...extra }))
      map.catch(() => { map = undefined })
      return map
    },
  }
}

function toMap(texts: AssetTexts): AssetMap {
  const out = new Map<string, Asset>()
  for (const [name, body] of Object.entries(texts)) {
    const type = TYPES[name.slice(name.lastIndexOf('.') + 1)] ?? 'application/octet-stream'
    out.set(name, { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 16) })
  }
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
export function serveAsset(assets: Assets): Handler {
  return async (ctx) => {
    const asset = (await assets.all()).get(ctx.params['name'] ?? '')
    if (asset === undefined) throw notFound()
    const etag = `"${asset.hash}"`
    const headers = {
      etag,
      'cache-control': ctx.query.get('v') === asset.hash ? IMMUTABLE : 'no-cache',
      'x-content-type-options': 'nosniff',
    }
    if (matchesEtag(ctx.req.headers['if-none-match'], etag)) return { status: 304, body: '', contentType: asset.type, headers }
    return { status: 200, body: asset.body, contentType: asset.type, headers }
  }
}

/** If-None-Match (RFC 9110 §13.1.2): `*`, or a list of tags compared weakly (a `W/` prefix is ignored). */
function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header.trim() === '*') return true
  return header.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag)
}
