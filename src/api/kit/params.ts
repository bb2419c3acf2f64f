import { HttpError, notFound } from '../../http/http-error.ts'
import type { Ctx } from '../../http/types.ts'
import { isRecord } from '../../domain/field-errors.ts'

/** Ids in paths are positive integers written plainly (`12`); `1e3`, `-1`, `01` find nothing. */
export function parseId(raw: string | undefined): number {
  if (raw === undefined || !/^[1-9]\d{0,14}$/.test(raw)) throw notFound()
  return Number(raw)
}

export function missingParam(name: string): HttpError {
  const text = `param is missing or the value is empty: ${name}`
  return new HttpError(422, { error: text, exception: text, missing_param: name })
}

/**
 * The required root object (`subscription`, `subscription_line_item`). A JSON body without
 * the root key counts as wrapped (Rails wrap_parameters); missing or not an object → 422.
 */
export function rootObject(ctx: Ctx, name: string): Record<string, unknown> {
  const body = ctx.body
  if (isRecord(body)) {
    if (name in body) {
      const value = body[name]
      if (isRecord(value)) return value
      throw missingParam(name)
    }
    if (ctx.bodyKind === 'json' && Object.keys(body).length > 0) return body
  }
  throw missingParam(name)
}

/** An optional root object: absent → `{}` (pause/resume/skip accept an empty body). */
export function optionalRoot(ctx: Ctx, name: string): Record<string, unknown> {
  const body = ctx.body
  if (!isRecord(body)) return {}
  if (name in body) return isRecord(body[name]) ? (body[name] as Record<string, unknown>) : {}
  return ctx.bodyKind === 'json' ? body : {}
}

export interface Page {
  readonly page: number
  readonly perPage: number
  readonly offset: number
}

function positive(raw: string | null): number | undefined {
  if (raw === null || !/^\s*\d+\s*$/.test(raw)) return undefined
  const n = Number(raw)
  return n >= 1 ? n : undefined
}

/**
 * Rows skipped before a page, at most: no list holds two billion rows, so a page past this is
 * empty whatever the offset, and bounding it keeps the client's number within what every
 * backend's SQL takes (PostgreSQL's `integer` ends at 2,147,483,647 and the page query adds
 * `per_page` to it; `?page=2147483647` was a 500 there, issue 25).
 */
export const MAX_OFFSET = 2_000_000_000

/** C3: `?page=` and `?per_page=` (default 25, at most 100; nonsense gives the default). */
export function readPage(query: URLSearchParams): Page {
  const page = Math.min(positive(query.get('page')) ?? 1, 1_000_000_000)
  const perPage = Math.min(positive(query.get('per_page')) ?? 25, 100)
  return { page, perPage, offset: Math.min((page - 1) * perPage, MAX_OFFSET) }
}

/** What follows the items of a page, in this order (solidus_subscriptions' pagination fields). */
function pageMeta(count: number, page: Page, total: number): Record<string, number> {
  return { count, current_page: page.page, pages: Math.ceil(total / page.perPage), per_page: page.perPage, total_count: total }
}

export function pageBody(key: string, items: unknown[], page: Page, total: number): Record<string, unknown> {
  return { [key]: items, ...pageMeta(items.length, page, total) }
}

/**
 * `pageBody` as JSON text around items that are JSON text already (the cached C3 bodies): the
 * same bytes `JSON.stringify(pageBody(…))` would give, without parsing the items back.
 */
export function pageJson(key: string, items: readonly string[], page: Page, total: number): string {
  return `{${JSON.stringify(key)}:[${items.join(',')}],${JSON.stringify(pageMeta(items.length, page, total)).slice(1)}`
}

/** Fetch one more than asked, so `next_after` is null exactly when nothing follows. */
export function cursorBody<T extends { id: number }>(key: string, rows: T[], limit: number, render: (row: T) => unknown): Record<string, unknown> {
  const more = rows.length > limit
  const page = more ? rows.slice(0, limit) : rows
  return { [key]: page.map(render), next_after: more ? (page[page.length - 1]?.id ?? null) : null }
}
