import { test } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { setFlagsFromString } from 'node:v8'
import { RequestCtx } from '../../src/http/server.ts'

// V8's own test of whether two objects share a hidden class (a "map").
setFlagsFromString('--allow-natives-syntax')
const haveSameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (a: object, b: object) => boolean

const ctxOf = (search: string): RequestCtx =>
  new RequestCtx({} as IncomingMessage, { route: '/things/:id', params: { id: '7' } }, 'GET', '/things/7', search,
    { kind: 'none', value: undefined }, Buffer.alloc(0), 'req-1')

test('the query string is parsed on first use, once', () => {
  const ctx = ctxOf('page=2&per_page=5&q%5Bstate_eq%5D=active')
  assert.equal(ctx.query.get('page'), '2')
  assert.equal(ctx.query.get('q[state_eq]'), 'active')
  assert.equal(ctx.query, ctx.query)
  assert.equal(ctxOf('').query.size, 0)
})

// Issue 6: the context used to be an object literal with a getter, which made V8 give every
// request's context a hidden class of its own. Those maps live in the old generation: under load
// they cost a full collection, a 5 ms pause, every second. Every context must share one map,
// whether or not its query string was read and whoever the caller turned out to be.
test('every request context shares one hidden class', () => {
  const plain = ctxOf('')
  const queried = ctxOf('page=2')
  void queried.query
  const authenticated = ctxOf('a=1')
  authenticated.userId = 42
  assert.ok(haveSameMap(plain, queried), 'reading the query string changed the hidden class')
  assert.ok(haveSameMap(plain, authenticated), 'setting the user changed the hidden class')
})
