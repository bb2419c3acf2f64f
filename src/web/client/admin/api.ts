/**
 * Calls to the admin API (/admin/api/v1), the same JSON handlers every client uses: the page
 * never decides a rule itself. The session's token goes as `Authorization: Bearer`; a 401 (the
 * token was revoked meanwhile) ends the session.
 */
import { ApiError, createApi, type Api } from '../lib/api.ts'
import { fieldLabel } from './fields.ts'
import * as session from './session.ts'
import { t } from './strings.ts'

export { ApiError }

const BASE = '/admin/api/v1'

/** A call made with `token` (sign-in tries one before keeping it); `dryRun` asks the API to change nothing (C18). */
export function apiWith(token: string, dryRun = false): Api {
  return createApi(() => ({ authorization: `Bearer ${token}`, ...(dryRun ? { 'replenish-dry-run': '1' } : {}) }), t('common.network_error'))
}

let onUnauthorized: (error: ApiError) => void = () => {}
export const whenUnauthorized = (fn: (error: ApiError) => void): void => {
  onUnauthorized = fn
}

async function call<T>(run: (api: Api) => Promise<T>, dryRun = false): Promise<T> {
  try {
    return await run(apiWith(session.token() ?? '', dryRun))
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) onUnauthorized(err)
    throw err
  }
}

export const get = <T>(path: string): Promise<T> => call((api) => api.get<T>(BASE + path))
export const post = <T>(path: string, body?: unknown): Promise<T> => call((api) => api.post<T>(BASE + path, body))
export const patch = <T>(path: string, body: unknown): Promise<T> => call((api) => api.patch<T>(BASE + path, body))
export const del = <T>(path: string): Promise<T> => call((api) => api.del<T>(BASE + path))

/**
 * The same writes as dry runs (C18 `Replenish-Dry-Run: 1`): the API answers exactly what the
 * write would (its 422s included) and stores nothing. The pages show that answer as a preview
 * before the person confirms.
 */
export const dry = {
  post: <T>(path: string, body?: unknown): Promise<T> => call((api) => api.post<T>(BASE + path, body), true),
  patch: <T>(path: string, body: unknown): Promise<T> => call((api) => api.patch<T>(BASE + path, body), true),
}

/** `?a=1&b=x` of the values that are set ('' when none). */
export function query(values: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s.length > 0 ? `?${s}` : ''
}

/** An admin list page (C3): its rows under the collection's name, and the cursor of the next page. */
export type ListPage<K extends string, T> = { readonly [key in K]: T[] } & { readonly next_after: number | null }

/**
 * Every row of an admin list, page after page (for short lists the page shows whole: a
 * customer's payment sources, the catalog's payment methods), at most `max` rows.
 */
export async function all<K extends string, T>(key: K, path: string, max = 1000): Promise<T[]> {
  const rows: T[] = []
  let after: number | null = 0
  const sep = path.includes('?') ? '&' : '?'
  while (after !== null && rows.length < max) {
    const page: ListPage<K, T> = await get<ListPage<K, T>>(`${path}${sep}limit=100${after > 0 ? `&after=${after}` : ''}`)
    rows.push(...page[key])
    after = page.next_after
  }
  return rows
}

/**
 * A CSV export (C18) saved as a file. The export needs the session's `Authorization` header, which
 * a plain link cannot send, so the page fetches it and hands the browser the file it got.
 */
export async function download(path: string, filename: string): Promise<void> {
  let res: Response
  try {
    res = await fetch(BASE + path, { headers: { authorization: `Bearer ${session.token() ?? ''}`, accept: 'text/csv' } })
  } catch {
    throw new ApiError(0, t('common.network_error'))
  }
  if (!res.ok) {
    let body: unknown
    try { body = await res.json() } catch { body = undefined }
    const message = typeof body === 'object' && body !== null && typeof (body as Record<string, unknown>)['error'] === 'string'
      ? String((body as Record<string, unknown>)['error']) : `HTTP ${res.status}`
    const err = new ApiError(res.status, message, res.status === 422 ? (body as Record<string, string[]>) : undefined)
    if (res.status === 401) onUnauthorized(err)
    throw err
  }
  const url = URL.createObjectURL(await res.blob())
  const link = document.createElement('a')
  link.href = url
  link.download = filename
  document.body.append(link)
  link.click()
  link.remove()
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
}

/** The lines to show for a refused request: each 422 field, by its label, with its messages, or the API's error. */
export function problemLines(err: unknown): string[] {
  if (err instanceof ApiError) {
    if (err.fields) return Object.entries(err.fields).flatMap(([field, messages]) => messages.map((m) => `${fieldLabel(field)}: ${m}`))
    return [err.message]
  }
  return [t('admin.error', { error: String(err) })]
}
