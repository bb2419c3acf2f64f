import type { RequestOptions } from './server.ts'

/** The two body encodings the service accepts (C1); tests run each case in both. */
export const ENCODINGS = ['json', 'form'] as const
export type Encoding = (typeof ENCODINGS)[number]

/** Rails bracket notation: `{subscription: {interval_length: 11}}` → `subscription[interval_length]=11`; null is a bare key. */
export function railsForm(value: Record<string, unknown>): string {
  const parts: string[] = []
  const name = (n: string) => encodeURIComponent(n).replaceAll('%5B', '[').replaceAll('%5D', ']')
  const walk = (v: unknown, key: string): void => {
    if (v === null) parts.push(name(key))
    else if (Array.isArray(v)) v.forEach((x, i) => walk(x, typeof x === 'object' && x !== null ? `${key}[${i}]` : `${key}[]`))
    else if (typeof v === 'object') for (const [k, x] of Object.entries(v as object)) walk(x, key === '' ? k : `${key}[${k}]`)
    else parts.push(`${name(key)}=${encodeURIComponent(String(v))}`)
  }
  walk(value, '')
  return parts.join('&')
}

export function encoded(encoding: Encoding, value: Record<string, unknown>): RequestOptions {
  return encoding === 'json' ? { json: value } : { form: railsForm(value) }
}
