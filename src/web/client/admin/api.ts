/**
 * Calls to the admin API (/admin/api/v1), the same JSON handlers every client uses: the page
 * never decides a rule itself. The session's token goes as `Authorization: Bearer`; a 401 (the
 * token was revoked meanwhile) ends the session.
 */
import { ApiError, createApi, type Api } from '../lib/api.ts'
import * as session from './session.ts'
import { t } from './strings.ts'

export { ApiError }

const BASE = '/admin/api/v1'

/** A call made with `token` (sign-in tries one before keeping it). */
export function apiWith(token: string): Api {
  return createApi(() => ({ authorization: `Bearer ${token}` }), t('common.network_error'))
}

let onUnauthorized: (error: ApiError) => void = () => {}
export const whenUnauthorized = (fn: (error: ApiError) => void): void => {
  onUnauthorized = fn
}

async function call<T>(run: (api: Api) => Promise<T>): Promise<T> {
  try {
    return await run(apiWith(session.token() ?? ''))
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) onUnauthorized(err)
    throw err
  }
}

export const get = <T>(path: string): Promise<T> => call((api) => api.get<T>(BASE + path))
export const post = <T>(path: string, body?: unknown): Promise<T> => call((api) => api.post<T>(BASE + path, body))
export const patch = <T>(path: string, body: unknown): Promise<T> => call((api) => api.patch<T>(BASE + path, body))
export const del = <T>(path: string): Promise<T> => call((api) => api.del<T>(BASE + path))

/** `?a=1&b=x` of the values that are set ('' when none). */
export function query(values: Record<string, string | number | null | undefined>): string {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(values)) if (v !== null && v !== undefined && v !== '') q.set(k, String(v))
  const s = q.toString()
  return s.length > 0 ? `?${s}` : ''
}

/** An admin list page (C3): its rows under the collection's name, and the cursor of the next page. */
export type ListPage<K extends string, T> = { readonly [key in K]: T[] } & { readonly next_after: number | null }

/** The lines to show for a refused request: each 422 field with its messages, or the API's error. */
export function problemLines(err: unknown): string[] {
  if (err instanceof ApiError) {
    if (err.fields) return Object.entries(err.fields).flatMap(([field, messages]) => messages.map((m) => `${field.replaceAll('_', ' ')}: ${m}`))
    return [err.message]
  }
  return [t('admin.error', { error: String(err) })]
}
