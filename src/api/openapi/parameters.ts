/** components/parameters, and the query filters of the admin lists (strict: C13). */
import type { Schema } from './schema-kit.ts'

export const parameters: Record<string, Schema> = {
  Id: { name: 'id', in: 'path', required: true, description: 'A positive integer; anything else finds nothing (404).', schema: { type: 'integer', minimum: 1 } },
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    description:
      'Within 24 h, the same key from the same caller on the same method, path and body replays the first answer without acting again; ' +
      'another request with it is a 422, one while the first still runs a 409 (C5).',
    schema: { type: 'string', maxLength: 255 },
  },
  DryRun: {
    name: 'Replenish-Dry-Run',
    in: 'header',
    description:
      '`1`: a dry run (C18). The request is answered exactly as it would be (status and body, refusals included) and changes nothing: ' +
      'no row, no event, no webhook delivery, no Idempotency-Key stored; the answer carries `Replenish-Dry-Run: 1`. ' +
      'Any other value is a 422 and nothing runs. On PostgreSQL the ids a dry run shows may be taken by then by the real request.',
    schema: { type: 'string', enum: ['1'] },
  },
  AcceptLanguage: {
    name: 'Accept-Language',
    in: 'header',
    description: 'The language of validation messages: en (default), es, fr or de. Keys and structure never change with it.',
    schema: { type: 'string', examples: ['es'] },
  },
  Page: { name: 'page', in: 'query', description: 'Lenient (C3): below 1 or not a number gives the default.', schema: { type: 'integer', minimum: 1, default: 1 } },
  PerPage: { name: 'per_page', in: 'query', description: 'Lenient (C3): capped at 100; below 1 or not a number gives the default.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
  After: { name: 'after', in: 'query', description: 'Keyset paging: the `next_after` of the previous page.', schema: { type: 'integer', minimum: 0, default: 0 } },
  Limit: { name: 'limit', in: 'query', description: '1–100; anything else is a 422.', schema: { type: 'integer', minimum: 1, maximum: 100, default: 25 } },
}

const use = (name: string): Schema => ({ $ref: `#/components/parameters/${name}` })

export const pageParameters: readonly Schema[] = [use('Page'), use('PerPage')]

/** An admin list's query: `after`, `limit`, then its own filters (each strict, C13). */
export function listParameters(filters: Record<string, { schema: Schema; description: string }> = {}): Schema[] {
  return [
    use('After'),
    use('Limit'),
    ...Object.entries(filters).map(([name, f]) => ({ name, in: 'query', description: f.description, schema: f.schema })),
  ]
}

export const idFilter = (description: string) => ({ description, schema: { type: 'integer', minimum: 1 } })
export const dateFilter = (description: string) => ({ description, schema: { type: 'string', format: 'date' } })
export const textFilter = (description: string) => ({ description, schema: { type: 'string' } })
export const enumFilter = (values: readonly string[], description: string) => ({ description, schema: { type: 'string', enum: [...values] } })
