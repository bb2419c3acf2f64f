import { test } from 'node:test'
import assert from 'node:assert/strict'
import { openApiDocument } from '../../src/api/openapi/document.ts'
import { ADMIN_TOKEN, createSubscription, seedPayment, seedSubscribable, seedUser, startTestServer, type TestServer } from '../helpers/server.ts'
import { processAsOf } from '../processing/helpers.ts'
import { prng } from '../helpers/prng.ts'

/**
 * A seeded fuzz of every route the OpenAPI document describes (issue 25): path ids, query
 * parameters and bodies (JSON and form, built from each operation's request schema) filled with
 * values a client may send on purpose: integers past every column's range, negative and
 * fractional numbers, NUL characters, long and odd strings. Whatever the values, the answer is
 * never a 5xx (C1: every user-caused error is a clear 4xx), on either backend, and it is what the
 * document says (request() checks each answer against it). The seed is fixed, so a failure is
 * repeatable; REPLENISH_FUZZ_SEED runs another, REPLENISH_FUZZ_ROUNDS more requests per operation.
 */
const SEED = Number(process.env['REPLENISH_FUZZ_SEED'] ?? 25)
const ROUNDS = Number(process.env['REPLENISH_FUZZ_ROUNDS'] ?? 6)
const TODAY = '2026-01-15'

type Json = Record<string, any>
const doc = openApiDocument as Json


/** Integers as a client writes them: past PostgreSQL's integer and bigint, past 2^53, and not integers at all. */
export const BIG_INTEGER_TEXTS = [
  '2147483647', '2147483648', '4294967296', '9007199254740993', '9223372036854775807', '9223372036854775808',
  '99999999999999999999', '-2147483649', '-1', '0', '1.5', '1e3', '1e308', ' 7', '0x10', '+5',
]
const BIG_INTEGERS = [2147483647, 2147483648, -2147483649, 2 ** 53, 2 ** 63, 1e20, 1e308, -1, 0, 1.5]
const ODD_STRINGS = ['a\u0000b', '\u0000', 'x'.repeat(300), 'Ünïcødé ✓ 😀', '\ud800', ' ', '%00', '<script>', "'; DROP TABLE users; --"]

function resolve(schema: Json | undefined): Json {
  let s = schema ?? {}
  while (typeof s['$ref'] === 'string') s = doc['components']['schemas'][(s['$ref'] as string).split('/').pop() as string] as Json
  return s
}

/** A value for `schema`: usually a sensible one, often a hostile one. */
function valueFor(schemaIn: Json | undefined, rnd: () => number, depth = 0): unknown {
  const schema = resolve(schemaIn)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  if (Array.isArray(schema['oneOf'])) return valueFor(pick(schema['oneOf'] as Json[]), rnd, depth)
  const types: string[] = Array.isArray(schema['type']) ? schema['type'] : [schema['type'] ?? 'string']
  const type = pick(types)
  const hostile = rnd() < 0.5
  switch (type) {
    case 'null':
      return null
    case 'boolean':
      return hostile ? pick(['yes', 2, '\u0000']) : rnd() < 0.5
    case 'integer':
    case 'number':
      return hostile ? (rnd() < 0.5 ? pick(BIG_INTEGERS) : pick(BIG_INTEGER_TEXTS)) : 1 + Math.floor(rnd() * 3)
    case 'array': {
      if (depth > 3) return []
      const n = Math.floor(rnd() * 3)
      return Array.from({ length: n }, () => valueFor(schema['items'] as Json, rnd, depth + 1))
    }
    case 'object': {
      if (depth > 3) return {}
      const out: Record<string, unknown> = {}
      const props = (schema['properties'] ?? {}) as Record<string, Json>
      for (const [name, sub] of Object.entries(props)) if (rnd() < 0.8) out[name] = valueFor(sub, rnd, depth + 1)
      if (schema['additionalProperties'] && rnd() < 0.5) out['0'] = valueFor(schema['additionalProperties'] as Json, rnd, depth + 1)
      return out
    }
    default: {
      if (hostile) return pick(ODD_STRINGS)
      if (Array.isArray(schema['enum'])) return pick(schema['enum'] as string[])
      if (schema['format'] === 'date') return pick(['2026-02-01', '2030-12-31', '2026-02-30', '9999-12-31'])
      if (schema['format'] === 'uri') return pick(['http://127.0.0.1:9/hook', 'https://example.com/a\u0000b'])
      return pick(['a@example.com', 'plain', 'http://shop.example/back'])
    }
  }
}

/** Rails bracket notation of a JSON-ish value (`a[b][0][c]=…`), as a form client sends it. */
function formEncode(value: unknown, prefix = ''): string[] {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v) => ['', v] as const) : Object.entries(value)
    return entries.flatMap(([k, v]) => formEncode(v, prefix === '' ? k : `${prefix}[${k}]`))
  }
  return [new URLSearchParams([[prefix, value === null ? '' : String(value)]]).toString()]
}

const IMPORT_LINES = [
  '{"type":"user","id":2147483648,"email":"big@example.com"}',
  '{"type":"user","id":900,"email":"nul@example.com","external_id":"a\\u0000b"}',
  '{"type":"payment_method","id":900,"name":"Card\\u0000"}',
  '{"type":"payment_source","id":900,"user_id":1,"payment_method_id":1,"month":99999999999,"year":-99999999999}',
  '{"type":"subscribable","id":900,"sku":"S\\u0000","name":"n"}',
  '{"type":"subscription","id":900,"user_id":1,"interval_length":1,"skip_count":99999999999,"successive_skip_count":1e300,"line_items":[]}',
]

interface Seeded {
  readonly key: string
  /** A real id per resource path segment (`subscriptions` → an id that exists). */
  readonly ids: Record<string, number>
}

async function seed(server: TestServer): Promise<Seeded> {
  const user = await seedUser(server.store)
  const item = await seedSubscribable(server.store)
  const pay = await seedPayment(server.store, user.id)
  const sub = await createSubscription(server, user.key, {
    actionable_date: TODAY, payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
    line_items_attributes: [{ subscribable_id: item, quantity: 2 }],
  })
  await processAsOf(server, TODAY)
  const admin = async (path: string, json: unknown): Promise<any> => (await server.request('POST', `/admin/api/v1${path}`, { key: ADMIN_TOKEN, json })).body
  const endpoint = await admin('/webhook_endpoints', { webhook_endpoint: { url: 'http://127.0.0.1:9/hook', events: ['*'] } })
  const token = await admin('/admin_tokens', { admin_token: { scope: 'read', label: 'fuzz' } })
  const apiKey = await admin(`/users/${user.id}/api_keys`, {})
  const installment = (await server.store.installments.listOfSubscription(sub.id, 0, 1))[0]
  const delivery = (await server.request('GET', `/admin/api/v1/webhook_endpoints/${endpoint.id}/deliveries`, { key: ADMIN_TOKEN })).body.deliveries[0]
  return {
    key: user.key,
    ids: {
      subscriptions: sub.id, line_items: sub.line_items[0].id, users: user.id, api_keys: apiKey.id, payment_methods: pay.methodId,
      payment_sources: pay.sourceId, subscribables: item, admin_tokens: token.id, installments: installment?.id ?? 1,
      webhook_endpoints: endpoint.id, deliveries: delivery?.id ?? 1,
    },
  }
}

interface Operation {
  readonly method: string
  readonly template: string
  readonly operation: Json
}

/** Every operation of the document; the ones that remove what others use come last. */
function operations(): Operation[] {
  const all: Operation[] = []
  for (const [template, item] of Object.entries(doc['paths'] as Json)) {
    for (const method of ['get', 'post', 'patch', 'put', 'delete']) {
      if (item[method]) all.push({ method: method.toUpperCase(), template, operation: { ...item[method], parameters: [...(item['parameters'] ?? []), ...(item[method]['parameters'] ?? [])] } })
    }
  }
  const destructive = (o: Operation): boolean => o.method === 'DELETE' || /erase|cancel/.test(o.template)
  return [...all.filter((o) => !destructive(o)), ...all.filter(destructive)]
}

test('issue 25: a seeded fuzz of every route with big integers, NULs and odd strings answers no 5xx, on either backend', async (t) => {
  const server = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const seeded = await seed(server)
  const rnd = prng(SEED)
  const pick = <T>(list: readonly T[]): T => list[Math.floor(rnd() * list.length)] as T
  const failures: string[] = []
  let sent = 0
  for (const { method, template, operation } of operations()) {
    if (template === '/metrics' || template === '/readyz' || template === '/healthz' || template === '/api/v1/openapi.json') continue
    const admin = template.startsWith('/admin/')
    for (let round = 0; round < ROUNDS; round++) {
      // Path: the resource's real id in the first round and half the others, else a hostile one.
      const path = template.replace(/\{id\}/g, (_m, offset: number) => {
        const resource = template.slice(0, offset).split('/').filter(Boolean).pop() ?? ''
        return round === 0 || rnd() < 0.5 ? String(seeded.ids[resource] ?? 1) : encodeURIComponent(pick([...BIG_INTEGER_TEXTS, '1\u0000']))
      })
      const query = new URLSearchParams()
      for (const p of operation['parameters'] as Json[]) {
        const param = resolve(p['$ref'] ? doc['components']['parameters'][(p['$ref'] as string).split('/').pop() as string] : p)
        if (param['in'] !== 'query' || rnd() < 0.3) continue
        const v = valueFor(param['schema'] as Json, rnd)
        query.set(param['name'] as string, v === null ? '' : String(v))
      }
      // The issue's own case, in the first round of a paged list: a page far past the end.
      if (round === 0 && (operation['parameters'] as Json[]).some((p) => p['$ref'] === '#/components/parameters/Page')) {
        query.set('page', '2147483647')
        query.set('per_page', '100')
      }
      const qs = query.size > 0 ? `?${query}` : ''
      const content = operation['requestBody']?.['content'] as Json | undefined
      const options: Parameters<TestServer['request']>[2] = { key: admin ? ADMIN_TOKEN : seeded.key }
      let shown = ''
      if (content?.['application/x-ndjson']) {
        options.raw = pick(IMPORT_LINES)
        options.headers = { 'content-type': 'application/x-ndjson' }
        shown = options.raw
      } else if (content) {
        const body = valueFor((content['application/json'] as Json)['schema'] as Json, rnd)
        if (rnd() < 0.3) {
          options.form = formEncode(body).join('&')
          shown = options.form
        } else {
          options.json = body
          shown = JSON.stringify(body)
        }
      }
      sent++
      let res
      try {
        res = await server.request(method, path + qs, options)
      } catch (err) {
        failures.push(`${method} ${path}${qs} ${shown}: ${(err as Error).message.slice(0, 300)}`)
        continue
      }
      if (res.status >= 500) failures.push(`${method} ${path}${qs} ${shown} → ${res.status} ${res.text.slice(0, 200)} ${JSON.stringify(server.errors.at(-1) ?? {}).slice(0, 300)}`)
    }
  }
  assert.ok(sent > 300, `only ${sent} requests`)
  assert.deepEqual(failures, [], `seed ${SEED}: ${failures.length} of ${sent} requests failed`)
})
