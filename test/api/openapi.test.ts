/**
 * The OpenAPI document (issue 18, item 1; C13): served without a key, one operation for every
 * route of the route tables and none more, every operation with the statuses the server can give
 * it, clean under `redocly lint --extends recommended`, and a response check (used by every API
 * test through request()) that refuses what the document does not say.
 */
import { after, before, describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { startTestServer, type TestServer } from '../helpers/server.ts'
import { checkResponse, compileEveryResponseSchema, OpenApiMismatch, type Received } from '../helpers/openapi-check.ts'
import { buildRoutes } from '../../src/cli/app.ts'
import { RequestMetrics } from '../../src/http/metrics.ts'
import { isApiPath, openApiDocument } from '../../src/api/openapi/document.ts'
import { lintDocument } from '../../src/api/openapi/lint.ts'

type Json = Record<string, any>
const doc = openApiDocument as Json
const METHODS = ['get', 'post', 'patch', 'put', 'delete']

/** Every operation as `METHOD /path/{id}`, with its object. */
function operations(): Map<string, Json> {
  const out = new Map<string, Json>()
  for (const [path, item] of Object.entries(doc['paths'] as Json)) {
    for (const method of METHODS) if (item[method]) out.set(`${method.toUpperCase()} ${path}`, item[method])
  }
  return out
}

let server: TestServer
before(async () => {
  server = await startTestServer(undefined)
})
after(() => server.close())

test('GET /api/v1/openapi.json needs no key and is the whole document, OpenAPI 3.1', async () => {
  const res = await server.request('GET', '/api/v1/openapi.json')
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(res.body.openapi, '3.1.0')
  assert.deepEqual(res.body, JSON.parse(JSON.stringify(openApiDocument)))
})

test('the document has every API route of the route tables and no other (PUT beside PATCH; HEAD implied by GET)', () => {
  const routes = buildRoutes(server.app, new RequestMetrics(), [], async () => undefined)
  const routed = new Set<string>()
  for (const [method, path] of routes) {
    // The web console's pages (C14) are HTML, outside the document; the routes under /admin/api/v1 it added are in it.
    if (!isApiPath(path)) continue
    const templated = path.replaceAll(/:(\w+)/g, '{$1}')
    routed.add(`${method} ${templated}`)
    // The router answers PUT wherever PATCH is (src/http/router.ts), so the document has both.
    if (method === 'PATCH') routed.add(`PUT ${templated}`)
  }
  const documented = new Set(operations().keys())
  const missing = [...routed].filter((r) => !documented.has(r))
  const extra = [...documented].filter((r) => !routed.has(r))
  assert.deepEqual({ missing, extra }, { missing: [], extra: [] }, 'routes the document lacks (missing) or has without a route (extra)')
  assert.ok(documented.size >= 70, `${documented.size} operations`)
})

describe('every operation', () => {
  const all = [...operations()]
  const tags = new Set((doc['tags'] as Json[]).map((t) => t['name']))
  const responseOf = (op: Json, status: string): Json | undefined => {
    const r = op['responses'][status] as Json | undefined
    return r?.['$ref'] ? doc['components']['responses'][(r['$ref'] as string).split('/').pop() as string] : r
  }

  test('has a unique operationId, one defined tag, a summary and its security', () => {
    const ids = all.map(([, op]) => op['operationId'])
    assert.equal(new Set(ids).size, ids.length, 'operationIds are unique')
    for (const [name, op] of all) {
      assert.match(op['operationId'] ?? '', /^[a-z][A-Za-z]+$/, name)
      assert.equal(op['tags']?.length, 1, name)
      assert.ok(tags.has(op['tags'][0]), `${name}: tag ${op['tags'][0]} is defined`)
      assert.ok(typeof op['summary'] === 'string' && op['summary'].length > 0, name)
      assert.ok(Array.isArray(op['security']), name)
    }
  })

  test('lists the statuses the server can give it', () => {
    for (const [name, op] of all) {
      const [method, path] = name.split(' ') as [string, string]
      const has = (status: string) => assert.ok(op['responses'][status], `${name} documents ${status}`)
      for (const s of ['408', '431', '500']) has(s)
      if (path.includes('{id}')) has('404')
      if (method !== 'GET' && path !== '/api/v1/openapi.json') for (const s of ['400', '409', '413', '415', '422', '429']) has(s)
      if (path.startsWith('/admin/')) for (const s of ['401', '403', '429']) has(s)
      if (path.startsWith('/api/v1/') && path !== '/api/v1/openapi.json') for (const s of ['401', '429']) has(s)
      if (op['security'].length > 0) assert.ok(responseOf(op, '429')?.['headers']?.['Retry-After'], `${name}: 429 carries Retry-After`)
    }
    assert.ok(operations().get('GET /readyz')?.['responses']['503'], '/readyz answers 503 when not ready')
    assert.deepEqual(operations().get('GET /metrics')?.['security'], [{ adminToken: ['admin'] }, { adminToken: ['metrics'] }, {}])
    assert.deepEqual(operations().get('GET /admin/api/v1/users')?.['security'], [{ adminToken: ['admin'] }, { adminToken: ['read'] }])
    assert.deepEqual(operations().get('POST /admin/api/v1/users')?.['security'], [{ adminToken: ['admin'] }])
    assert.deepEqual(operations().get('POST /api/v1/subscriptions')?.['security'], [{ apiKey: [] }, { portalSession: [] }])
  })

  test('a 422 is either shape: field errors or {"error": …} (and the missing-parameter body)', () => {
    const shapes = (doc['components']['schemas']['Unprocessable']['oneOf'] as Json[]).map((s) => s['$ref'])
    assert.deepEqual(shapes, ['#/components/schemas/FieldErrors', '#/components/schemas/MissingParameter', '#/components/schemas/Error'])
    for (const [name, op] of all) {
      // The import's refused line has a shape of its own: `{error, line, errors}` (docs/import.md).
      if (name.startsWith('POST ') && !name.endsWith('/imports')) assert.equal(op['responses']['422']?.['$ref'], '#/components/responses/Unprocessable', name)
    }
    const refusedLine = operations().get('POST /admin/api/v1/imports')?.['responses']['422']['content']['application/json']['schema']['oneOf']
    assert.deepEqual(refusedLine, [{ $ref: '#/components/schemas/ImportRefused' }, { $ref: '#/components/schemas/Error' }])
  })

  test('takes its body as JSON and as a form (the import: JSON Lines)', () => {
    for (const [name, op] of all) {
      const content = op['requestBody']?.['content'] as Json | undefined
      if (!content) continue
      const types = Object.keys(content)
      assert.deepEqual(types, name.endsWith('/imports') ? ['application/x-ndjson'] : ['application/json', 'application/x-www-form-urlencoded'], name)
    }
  })
})

test('redocly lint --extends recommended: no error and no warning', () => {
  const result = lintDocument()
  assert.deepEqual({ errors: result.errors, warnings: result.warnings }, { errors: 0, warnings: 0 }, result.output)
  assert.ok(result.ok, result.output)
})

describe('the response check request() runs on every answer', () => {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}): Received => ({
    status,
    headers: new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'r1', ...headers }),
    text: JSON.stringify(body),
  })
  const subscription = {
    id: 1, user_id: 2, state: 'active', paused: false, interval_length: 1, interval_units: 'month', actionable_date: '2026-12-22', end_date: null,
    skip_count: 0, successive_skip_count: 0, payment_method_id: null, payment_source_id: null, currency: 'USD',
    subtotal: '0.00', discount_total: '0.00', total: '0.00', processing_state: 'pending', shipping_address: null, billing_address: null, line_items: [], created_at: '2026-11-22T04:00:00.000Z', updated_at: '2026-11-22T04:00:00.000Z',
  }

  test('every response schema of the document compiles under ajv strict mode (2020-12)', () => {
    assert.ok(compileEveryResponseSchema() > 500)
  })

  test('a body the document describes passes, and is counted', () => {
    assert.equal(checkResponse('GET', '/api/v1/subscriptions/1?x=1', json(200, subscription)), 'validated')
    assert.equal(checkResponse('HEAD', '/api/v1/subscriptions/1', { ...json(200, {}), text: '' }), 'validated')
  })

  test('a body off the schema throws, naming the route, the status and what is wrong', () => {
    const { paused: _, ...withoutPaused } = subscription
    assert.throws(() => checkResponse('PATCH', '/api/v1/subscriptions/1', json(200, { ...withoutPaused, extra: 1 })), (err: Error) => {
      assert.ok(err instanceof OpenApiMismatch)
      assert.match(err.message, /^PATCH \/api\/v1\/subscriptions\/1 \(updateSubscription on \/api\/v1\/subscriptions\/\{id\}\) answered 200/)
      assert.match(err.message, /must have required property 'paused'/)
      assert.match(err.message, /must NOT have additional properties .*"additionalProperty":"extra"/)
      return true
    })
    assert.throws(() => checkResponse('GET', '/api/v1/subscriptions/1', json(200, { ...subscription, created_at: 'yesterday' })), /\/created_at must match format "date-time"/)
    assert.throws(() => checkResponse('POST', '/api/v1/subscriptions', json(422, { interval_length: 'must be greater than 0' })), /answered 422; the body does not match/)
  })

  test('a status the operation does not list, a missing required header or another content type throws', () => {
    assert.throws(() => checkResponse('GET', '/api/v1/subscriptions', json(403, { error: 'no' })), /answered 403, which the document does not list/)
    assert.throws(() => checkResponse('GET', '/api/v1/subscriptions', json(429, { error: 'slow down' })), /without its required Retry-After header/)
    assert.throws(() => checkResponse('GET', '/healthz', { ...json(200, { status: 'ok' }), headers: new Headers({ 'content-type': 'text/html', 'x-request-id': 'r' }) }), /as text\/html/)
  })

  test('an unknown path or a wrong method is skipped when the router refused it (404, 405), never otherwise; web pages are not the API', () => {
    assert.equal(checkResponse('GET', '/api/v1/nothing-here', json(404, { error: 'x' })), 'skipped')
    assert.equal(checkResponse('DELETE', '/api/v1/subscriptions', json(405, { error: 'x' })), 'skipped')
    assert.equal(checkResponse('OPTIONS', '/api/v1/subscriptions', { status: 204, headers: new Headers(), text: '' }), 'skipped')
    assert.throws(() => checkResponse('GET', '/api/v1/nothing-here', json(200, {})), /has no operation for it/)
    assert.throws(() => checkResponse('GET', '/admin/api/v1/nothing-here', json(401, { error: 'x' })), /has no operation for it/)
    assert.equal(checkResponse('GET', '/portal/api/session', json(401, { error: 'x' })), 'skipped', 'the web console is outside the document')
  })
})
