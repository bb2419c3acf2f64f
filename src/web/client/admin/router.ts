/**
 * Pages are addressed by the URL's fragment (`/admin/#/subscriptions/12?…`): the server serves
 * one page, `/admin/`, and the fragment never reaches it (nor its logs).
 */
export interface Location {
  /** Path segments after `#/`: `['subscriptions', '12']`. */
  readonly parts: readonly string[]
  readonly query: URLSearchParams
}

export function current(): Location {
  const raw = location.hash.replace(/^#\/?/, '')
  const [path = '', search = ''] = raw.split('?')
  return { parts: path.split('/').filter((p) => p.length > 0).map(decodeURIComponent), query: new URLSearchParams(search) }
}

/** The fragment of a page: `href('subscriptions', 12)` → `#/subscriptions/12`. */
export function href(...parts: (string | number)[]): string {
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join('/')}`
}

/** The same page with another query (a search form, the next page of a list). */
export function withQuery(parts: readonly string[], values: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return href(...parts) + (s.length > 0 ? `?${s}` : '')
}
