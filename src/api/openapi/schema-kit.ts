/**
 * Small builders for the JSON Schema (2020-12, OpenAPI 3.1's dialect) the document is written in.
 * They exist so that every fixed body is exact by default: an `object()` lists all of its
 * properties as required and allows no others, which is what the tests' response validation
 * (test/helpers/openapi-check.ts) holds every answer to.
 */
export type Schema = Record<string, unknown>

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` })

/** A fixed body: every property required (unless listed in `optional`), no others allowed. */
export function object(properties: Record<string, Schema>, optional: readonly string[] = []): Schema {
  const required = Object.keys(properties).filter((name) => !optional.includes(name))
  return { type: 'object', additionalProperties: false, required, properties }
}

/** `type: [t, "null"]`, as OpenAPI 3.1 writes nullable. */
export const nullable = (type: string, extra: Schema = {}): Schema => ({ type: [type, 'null'], ...extra })

export const id: Schema = { type: 'integer', minimum: 1 }
export const count: Schema = { type: 'integer', minimum: 0 }
export const text: Schema = { type: 'string' }
export const date: Schema = { type: 'string', format: 'date' }
export const timestamp: Schema = { type: 'string', format: 'date-time' }
export const nullableId = nullable('integer', { minimum: 1 })
export const nullableText = nullable('string')
export const nullableDate = nullable('string', { format: 'date' })
export const nullableTimestamp = nullable('string', { format: 'date-time' })
export const oneOfValues = (values: readonly string[]): Schema => ({ type: 'string', enum: [...values] })

/** C3's customer lists: the items under the collection's name, then Spree's paging fields. */
export function page(key: string, item: Schema): Schema {
  return object({
    [key]: { type: 'array', items: item },
    count,
    current_page: { type: 'integer', minimum: 1 },
    pages: count,
    per_page: { type: 'integer', minimum: 1, maximum: 100 },
    total_count: count,
  })
}

/** C3's admin lists: keyset pages, `next_after` null exactly when nothing follows. */
export function cursorList(key: string, item: Schema): Schema {
  return object({ [key]: { type: 'array', items: item }, next_after: nullableId })
}

/** An input object (a request body's root): the fields a client may send, none of them required unless listed. */
export function input(properties: Record<string, Schema>, required: readonly string[] = []): Schema {
  return { type: 'object', ...(required.length > 0 ? { required: [...required] } : {}), properties }
}

/** The body wrapped in its root key (C1); a JSON body may leave the root out. */
export const rooted = (root: string, inner: Schema, required = true): Schema =>
  ({ type: 'object', ...(required ? { required: [root] } : {}), properties: { [root]: inner } })
