import { test } from 'node:test'
import assert from 'node:assert/strict'
import { startTestServer } from '../helpers/server.ts'

test('GET /api/v1/openapi.json needs no key and describes every customer route', async (t) => {
  const server = await startTestServer(t)
  const res = await server.request('GET', '/api/v1/openapi.json')
  assert.equal(res.status, 200)
  assert.equal(res.headers.get('content-type'), 'application/json; charset=utf-8')
  assert.equal(res.body.openapi, '3.1.0')
  const documented = new Set<string>()
  for (const [path, ops] of Object.entries(res.body.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(ops)) documented.add(`${method.toUpperCase()} ${path.replaceAll(/\{(\w+)\}/g, ':$1')}`)
  }
  const routes = (await import('../../src/api/v1/routes.ts')).customerRoutes(server.app)
  for (const [method, path] of routes) {
    if (path === '/api/v1/openapi.json') continue
    assert.ok(documented.has(`${method} ${path}`), `${method} ${path} is documented`)
  }
})
