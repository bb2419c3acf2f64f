/**
 * Issue 16, the store interface's rule for the admin API: a read that a write decides from is
 * made inside the write's unit, through its `tx`, never on the store before it (on PostgreSQL a
 * row read before the unit may have changed by the time the unit writes from it). With the
 * configured admin token no read authenticates, so an admin write makes no store read outside
 * its unit at all. And C2's order holds inside the unit: an unknown id is a 404 before its body
 * is looked at (422).
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config.ts'
import { listen } from '../../src/http/server.ts'
import { RequestMetrics } from '../../src/http/metrics.ts'
import { buildApp, buildRoutes } from '../../src/cli/app.ts'
import type { Store } from '../../src/store/api.ts'
import { openTestStore } from '../helpers/store.ts'
import { ADMIN_TOKEN, request, seedPayment, seedSubscribable, seedUser, type TestResponse } from '../helpers/server.ts'

const A = '/admin/api/v1'
const NOT_FOUND = { error: 'The resource you were looking for could not be found.' }
const REPOSITORIES = new Set(['accounts', 'catalog', 'subscriptions', 'events', 'idempotency', 'installments', 'leases'])

/** `store` with every repository call made on it (not on a unit's `tx`) written down in `seen`. */
function recordingReads(store: Store, seen: string[]): Store {
  const repositories = new Map<PropertyKey, unknown>()
  for (const name of REPOSITORIES) {
    // A copy, not a Proxy: the store's repositories are frozen, and a Proxy may not answer
    // another function for a frozen property.
    const repository = store[name as keyof Store] as unknown as Record<string, (...args: unknown[]) => unknown>
    const copy: Record<string, (...args: unknown[]) => unknown> = {}
    for (const [method, fn] of Object.entries(repository)) {
      copy[method] = (...args) => {
        seen.push(`${name}.${method}`)
        return fn.apply(repository, args)
      }
    }
    repositories.set(name, copy)
  }
  return new Proxy(store, { get: (target, key) => (repositories.has(key) ? repositories.get(key) : Reflect.get(target, key)) })
}

/** A server on a fresh store whose reads outside units are recorded. */
async function startRecorded(t: TestContext): Promise<{ store: Store; url: string; seen: string[]; call(method: string, path: string, json?: unknown): Promise<TestResponse> }> {
  const { store, location } = await openTestStore(t)
  const seen: string[] = []
  const config = loadConfig({}, { REPLENISH_DB: location, REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN, REPLENISH_LOG: 'off', REPLENISH_TODAY: '2026-03-15' })
  const app = buildApp(config, recordingReads(store, seen))
  const server = await listen({
    routes: buildRoutes(app, new RequestMetrics(), [], async () => undefined),
    maxBodyBytes: config.maxBodyBytes,
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
    onResponse: () => {},
    logError: (e) => console.error(e), // a 500's cause, shown with the failed assertion
  }, '127.0.0.1', 0)
  t.after(() => server.close(1000))
  const call = (method: string, path: string, json?: unknown) => request(server.url, method, `${A}${path}`, { key: ADMIN_TOKEN, json })
  return { store, url: server.url, seen, call }
}

test('admin writes read what they decide from inside their unit: no store read outside it', async (t) => {
  const { store, seen, call, url } = await startRecorded(t)
  const alice = await seedUser(store)
  const pay = await seedPayment(store, alice.id)
  const item = await seedSubscribable(store)
  const created = await request(url, 'POST', '/api/v1/subscriptions', {
    key: alice.key,
    json: { subscription: { interval_length: 1, payment_method_id: pay.methodId, payment_source_id: pay.sourceId, line_items_attributes: [{ subscribable_id: item, quantity: 2 }] } },
  })
  assert.equal(created.status, 200, created.text)
  const sub = created.body.id as number
  await store.write((tx) => tx.installments.processMany([{ subscription_id: sub, due_date: '2026-04-15', actionable_date: '2026-05-15', state: 'active' }], new Date().toISOString()))
  const installment = (await store.installments.listOfSubscription(sub, 0, 1))[0]?.id
  assert.ok(installment !== undefined, 'the seeded installment exists')
  // A read outside a unit is recorded: the spy sees what it must.
  seen.length = 0
  assert.equal((await call('GET', `/payment_methods/${pay.methodId}`)).status, 200)
  assert.deepEqual(seen, ['catalog.findPaymentMethod'])

  const writes: [string, string, unknown, number][] = [
    ['POST', '/users', { user: { email: 'bea@example.com' } }, 201],
    ['POST', `/users/${alice.id}/api_keys`, {}, 201],
    ['POST', `/users/${alice.id}/api_keys`, { api_key: { key: 'imported-key-0123456789' } }, 201],
    ['PATCH', `/payment_methods/${pay.methodId}`, { payment_method: { active: false } }, 200],
    ['POST', '/payment_methods', { payment_method: { name: 'Cheque' } }, 201],
    ['POST', '/payment_sources', { payment_source: { user_id: alice.id, payment_method_id: pay.methodId } }, 201],
    ['POST', '/subscribables', { subscribable: { sku: 'TEA-1', name: 'Tea' } }, 201],
    ['PATCH', `/subscribables/${item}`, { subscribable: { sku: 'COFFEE-2' } }, 200],
    ['POST', `/subscriptions/${sub}/skip`, undefined, 200],
    ['POST', `/subscriptions/${sub}/pause`, undefined, 200],
    ['POST', `/subscriptions/${sub}/resume`, undefined, 200],
    ['POST', `/installments/${installment}/outcome`, { outcome: { result: 'fulfilled', order_reference: 'R-1' } }, 200],
    ['POST', `/subscriptions/${sub}/cancel`, undefined, 200],
    ['POST', `/subscriptions/${sub}/activate`, undefined, 200],
    ['DELETE', `/payment_sources/${pay.sourceId}`, undefined, 200],
    ['DELETE', `/subscribables/${item}`, undefined, 200],
    ['DELETE', '/api_keys/1', undefined, 200],
  ]
  for (const [method, path, json, status] of writes) {
    seen.length = 0
    const res = await call(method, path, json)
    assert.equal(res.status, status, `${method} ${path}: ${res.text}`)
    assert.deepEqual(seen, [], `${method} ${path} read the store outside its unit`)
  }
})

test('admin writes to an unknown id: 404 before the body is looked at (C2), still with no read outside the unit', async (t) => {
  const { seen, call } = await startRecorded(t)
  const unknown: [string, string][] = [
    ['POST', '/users/999999/api_keys'],
    ['DELETE', '/api_keys/999999'],
    ['PATCH', '/payment_methods/999999'],
    ['DELETE', '/payment_sources/999999'],
    ['PATCH', '/subscribables/999999'],
    ['DELETE', '/subscribables/999999'],
    ['POST', '/subscriptions/999999/cancel'],
    ['POST', '/subscriptions/999999/pause'],
    ['POST', '/installments/999999/outcome'],
  ]
  for (const [method, path] of unknown) {
    seen.length = 0
    // A body each of these routes refuses (422) for a known id: roots that are not objects, a key
    // too short to import, a date that is not one.
    const res = await call(method, path, { api_key: { key: 'short' }, payment_method: 'x', subscribable: 'x', subscription: { actionable_date: 'soon' }, outcome: 'x' })
    assert.deepEqual([res.status, res.body], [404, NOT_FOUND], `${method} ${path}`)
    assert.deepEqual(seen, [], `${method} ${path} read the store outside its unit`)
  }
})
