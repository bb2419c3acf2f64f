/**
 * The router (C1): one lookup answers a handler with its params, 405 with the Allow list (PUT
 * beside PATCH), or 404.
 */
import { describe, test } from 'node:test'
import assert from 'node:assert/strict'
import { createRouter, type Match } from '../../src/http/router.ts'
import type { Handler, Route } from '../../src/http/types.ts'

const handler = (name: string): Handler => Object.assign(() => ({ status: 200, body: name }), { label: name })
const h = {
  list: handler('list'), create: handler('create'), show: handler('show'), update: handler('update'),
  skip: handler('skip'), cancel: handler('cancel'), replace: handler('replace'), remove: handler('remove'),
  openapi: handler('openapi'), events: handler('events'), other: handler('other'),
}

const routes: Route[] = [
  ['GET', '/api/v1/openapi.json', h.openapi],
  ['GET', '/api/v1/subscriptions', h.list],
  ['POST', '/api/v1/subscriptions', h.create],
  ['GET', '/api/v1/subscriptions/:id', h.show],
  ['PATCH', '/api/v1/subscriptions/:id', h.update],
  ['POST', '/api/v1/subscriptions/:id/skip', h.skip],
  ['POST', '/api/v1/subscriptions/:id/cancel', h.cancel],
  ['GET', '/api/v1/subscriptions/:id/events', h.events],
  ['DELETE', '/api/v1/line_items/:id', h.remove],
]

const label = (m: Match): string | undefined => (m.kind === 'found' ? (m.handler as unknown as { label: string }).label : undefined)

describe('createRouter', () => {
  const route = createRouter(routes)

  test('a static path finds its handler with no params', () => {
    const m = route('GET', '/api/v1/subscriptions')
    assert.equal(m.kind, 'found')
    assert.equal(label(m), 'list')
    assert.deepEqual(m.kind === 'found' && m.params, {})
    assert.equal(m.kind === 'found' && m.route, '/api/v1/subscriptions')
    assert.equal(label(route('POST', '/api/v1/subscriptions')), 'create')
    assert.equal(label(route('GET', '/api/v1/openapi.json')), 'openapi')
  })

  test('a template finds its handler, the template and the (decoded) params', () => {
    const m = route('POST', '/api/v1/subscriptions/42/skip')
    assert.deepEqual(m.kind === 'found' && { label: label(m), route: m.route, params: m.params }, {
      label: 'skip', route: '/api/v1/subscriptions/:id/skip', params: { id: '42' },
    })
    assert.equal(label(route('POST', '/api/v1/subscriptions/42/cancel')), 'cancel')
    assert.equal(label(route('GET', '/api/v1/subscriptions/42/events')), 'events')
    const decoded = route('GET', '/api/v1/subscriptions/a%20b')
    assert.deepEqual(decoded.kind === 'found' && decoded.params, { id: 'a b' })
    const undecodable = route('GET', '/api/v1/subscriptions/%E2%82')
    assert.deepEqual(undecodable.kind === 'found' && undecodable.params, { id: '%E2%82' })
  })

  test('PATCH routes answer PUT with the same handler', () => {
    assert.equal(label(route('PATCH', '/api/v1/subscriptions/1')), 'update')
    assert.equal(label(route('PUT', '/api/v1/subscriptions/1')), 'update')
  })

  test('HEAD is answered by the GET handler', () => {
    assert.equal(label(route('HEAD', '/api/v1/subscriptions/1')), 'show')
  })

  test('a trailing slash is ignored', () => {
    assert.equal(label(route('GET', '/api/v1/subscriptions/')), 'list')
    assert.equal(label(route('POST', '/api/v1/subscriptions/7/skip/')), 'skip')
  })

  test('a known path with another method: 405 with the sorted Allow list, PUT beside PATCH', () => {
    assert.deepEqual(route('DELETE', '/api/v1/subscriptions'), { kind: 'method_not_allowed', allow: 'GET, POST' })
    assert.deepEqual(route('POST', '/api/v1/subscriptions/1'), { kind: 'method_not_allowed', allow: 'GET, PATCH, PUT' })
    assert.deepEqual(route('GET', '/api/v1/subscriptions/1/skip'), { kind: 'method_not_allowed', allow: 'POST' })
    assert.deepEqual(route('PATCH', '/api/v1/line_items/1'), { kind: 'method_not_allowed', allow: 'DELETE' })
    assert.deepEqual(route('OPTIONS', '/api/v1/openapi.json'), { kind: 'method_not_allowed', allow: 'GET' })
  })

  test('anything else is 404', () => {
    for (const path of ['/', '', '/api', '/api/v1', '/api/v1/nothing', '/api/v1/subscriptions/1/nothing', '/api/v1/subscriptions//skip',
      '/api/v1/subscriptions/1/skip/2', '/API/V1/SUBSCRIPTIONS', '/api/v1/line_items', '//api/v1/subscriptions', '/api/v1/subscriptions/1//']) {
      assert.deepEqual(route('GET', path), { kind: 'not_found' }, path)
    }
  })

  test('a static path wins over a template of the same shape', () => {
    const r = createRouter([['GET', '/a/:id', h.show], ['GET', '/a/new', h.other]])
    assert.equal(label(r('GET', '/a/new')), 'other')
    assert.equal(label(r('GET', '/a/1')), 'show')
  })

  test('templates of the same shape are all tried before a 405', () => {
    const r = createRouter([['GET', '/a/:id/b', h.show], ['POST', '/a/x/:name', h.create]])
    assert.equal(label(r('POST', '/a/x/b')), 'create')
    assert.equal(label(r('GET', '/a/x/b')), 'show')
    assert.deepEqual(r('DELETE', '/a/x/b'), { kind: 'method_not_allowed', allow: 'GET, POST' })
  })

  test('a route defined twice is a programming error; an explicit PUT beside PATCH is not', () => {
    assert.throws(() => createRouter([['GET', '/a', h.list], ['GET', '/a', h.other]]), /duplicate route GET \/a/)
    const r = createRouter([['PATCH', '/a/:id', h.update], ['PUT', '/a/:id', h.replace]])
    assert.equal(label(r('PATCH', '/a/1')), 'update')
    assert.equal(label(r('PUT', '/a/1')), 'replace')
    const putFirst = createRouter([['PUT', '/a/:id', h.replace], ['PATCH', '/a/:id', h.update]])
    assert.equal(label(putFirst('PUT', '/a/1')), 'replace')
    assert.deepEqual(r('GET', '/a/1'), { kind: 'method_not_allowed', allow: 'PATCH, PUT' })
  })
})
