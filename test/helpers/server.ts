import type { TestContext } from 'node:test'
import { loadConfig, type Config } from '../../src/config.ts'
import { listen, type RunningServer } from '../../src/http/server.ts'
import { RequestMetrics } from '../../src/http/metrics.ts'
import { buildApp, buildRoutes, corsOptions } from '../../src/cli/app.ts'
import type { Store } from '../../src/store/api.ts'
import { newTestLocation, openTestStore, type TestStoreOptions } from './store.ts'
import { sha256 } from '../../src/api/kit/auth.ts'
import { newApiKey } from '../../src/admin/users.ts'
import type { App } from '../../src/api/kit/app.ts'
import type { AccessLogEntry } from '../../src/http/types.ts'
import { checkResponse } from './openapi-check.ts'
import { withMailOutbox } from '../../src/processing/mail/outbox.ts'

// Row checks every API test uses, on either backend.
export { countRows, snapshot } from './rows.ts'

export const ADMIN_TOKEN = 'test-admin-token-0123456789'

export interface TestServer {
  readonly url: string
  readonly app: App
  readonly store: Store
  readonly config: Config
  /** Access log entries and logged errors, in order. */
  readonly log: AccessLogEntry[]
  readonly errors: object[]
  request(method: string, path: string, options?: RequestOptions): Promise<TestResponse>
  /**
   * Resolves once every write asked of the store so far has landed or failed. A request writes
   * some things (a key's last_used_at, a portal session's touch) in a unit it does not wait for;
   * an empty write asked after it is a barrier on SQLite's one writer but not on PostgreSQL, whose
   * units commit in any order.
   */
  settled(): Promise<void>
  /**
   * Runs `fn` when the server closes, before its store is closed and removed (the last added runs
   * first). A webhook dispatcher or a second store on the same database stops there: the test's
   * t.after hooks run in the order they were added, so one added after the server's would run
   * after its PostgreSQL schema was dropped, and the drop could deadlock with its queries.
   */
  beforeClose(fn: () => unknown): void
  close(): Promise<void>
}

export interface RequestOptions {
  /** An API key or admin token, sent as `Authorization: Bearer …`. */
  key?: string | undefined
  /** A JSON body (object or any value), sent as application/json. */
  json?: unknown
  /** A form body (already encoded), sent as application/x-www-form-urlencoded. */
  form?: string
  /** A raw body with its own content type (set it in headers). */
  raw?: string | Buffer
  headers?: Record<string, string>
  /** The answer comes from a test's own route table, which the OpenAPI document does not describe: not checked against it. */
  unchecked?: boolean
}

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  /** The parsed JSON body (undefined when the body is not JSON). */
  readonly body: any
}

/**
 * A real server on 127.0.0.1, port 0, on a fresh temporary database, closed after the test.
 * `env` sets REPLENISH_* values as the environment would (REPLENISH_TODAY, limits, …); its
 * REPLENISH_DB makes another instance on that server's database, which stays its first owner's.
 */
export async function startTestServer(
  t: TestContext | undefined,
  env: Record<string, string> = {},
  storeOptions: TestStoreOptions = {},
  serverOptions: { readonly wrapStore?: (store: Store) => Store } = {},
): Promise<TestServer> {
  const shared = env['REPLENISH_DB']
  const at = shared === undefined ? await newTestLocation() : { location: shared, remove: () => {} }
  const config = loadConfig({}, {
    REPLENISH_DB: at.location,
    REPLENISH_PORT: '0',
    REPLENISH_ADMIN_TOKEN: ADMIN_TOKEN,
    REPLENISH_LOG: 'off',
    REPLENISH_RATE_LIMIT: '0',
    REPLENISH_AUTH_FAILURE_LIMIT: '0',
    REPLENISH_PROCESS_EVERY: '0',
    ...env,
  })
  const opened = await openTestStore(undefined, { synchronous: config.synchronous, readCacheBytes: config.readCacheMb * 1024 * 1024, ...storeOptions }, at)
  // As openConfiguredStore does: with e-mail configured, events queue their mails (C17).
  const configured = config.smtpUrl === undefined ? opened.store : withMailOutbox(opened.store)
  const store = serverOptions.wrapStore ? serverOptions.wrapStore(configured) : configured
  const settled = trackWrites(store)
  const errors: object[] = []
  const app = buildApp(config, store, (e) => errors.push(e))
  const log: AccessLogEntry[] = []
  const metrics = new RequestMetrics()
  const server: RunningServer = await listen(
    {
      routes: buildRoutes(app, metrics, [], async () => undefined),
      maxBodyBytes: config.maxBodyBytes,
      cors: corsOptions(config),
      headersTimeoutMs: config.headersTimeoutMs,
      requestTimeoutMs: config.requestTimeoutMs,
      keepAliveTimeoutMs: config.keepAliveTimeoutMs,
      onResponse: (e) => {
        metrics.observe(e)
        log.push(e)
      },
      logError: (e) => errors.push(e),
    },
    '127.0.0.1',
    0,
  )
  let closed = false
  const first: (() => unknown)[] = []
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    try {
      for (const fn of first.reverse()) await fn()
    } finally {
      await server.close(1000)
      await opened.close()
    }
  }
  t?.after(close)
  return {
    url: server.url,
    app,
    store,
    config,
    log,
    errors,
    close,
    settled,
    beforeClose: (fn) => void first.push(fn),
    request: (method, path, options = {}) => request(server.url, method, path, options),
  }
}

/** Keeps the store's writes in flight (its `write` wrapped), and answers a wait for those asked so far. */
function trackWrites(store: Store): () => Promise<void> {
  const inFlight = new Set<Promise<unknown>>()
  const write = store.write.bind(store)
  const tracked: Store['write'] = (unit, context) => {
    const p = write(unit, context)
    inFlight.add(p)
    const done = (): void => void inFlight.delete(p)
    p.then(done, done)
    return p
  }
  Object.assign(store, { write: tracked })
  return async () => void (await Promise.allSettled([...inFlight]))
}

export async function request(base: string, method: string, path: string, options: RequestOptions = {}): Promise<TestResponse> {
  const headers: Record<string, string> = { ...(options.headers ?? {}) }
  if (options.key !== undefined) headers['authorization'] = `Bearer ${options.key}`
  let body: string | Buffer | undefined
  if (options.json !== undefined) {
    body = JSON.stringify(options.json)
    headers['content-type'] ??= 'application/json'
  } else if (options.form !== undefined) {
    body = options.form
    headers['content-type'] ??= 'application/x-www-form-urlencoded'
  } else if (options.raw !== undefined) {
    body = options.raw
  }
  const res = await fetch(base + path, { method, headers, body })
  const text = await res.text()
  // Every answer a test receives must be what the OpenAPI document says (issue 18).
  if (options.unchecked !== true) checkResponse(method, path, { status: res.status, headers: res.headers, text })
  let parsed: unknown
  try {
    parsed = text.length > 0 ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  return { status: res.status, headers: res.headers, text, body: parsed }
}

// ---- seeding straight into the store (fast, and independent of the admin API under test) -------

export interface SeededUser {
  readonly id: number
  readonly key: string
}

let emailCounter = 0

export async function seedUser(store: Store): Promise<SeededUser> {
  const key = newApiKey()
  const id = await store.write(async (tx) => {
    const user = await tx.accounts.createUser(`user${++emailCounter}-${Date.now()}@example.com`, null)
    await tx.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8))
    return user.id
  })
  return { id, key }
}

/** A catalog item; `prices` in C16's strings (`{USD: '12.50'}`), `discount` in basis points. */
export async function seedSubscribable(store: Store, options: { subscribable?: boolean; prices?: Record<string, string>; discount?: number } = {}): Promise<number> {
  const prices = new Map(Object.entries(options.prices ?? {}).map(([c, a]) => [c, BigInt(a.replace('.', ''))] as const))
  return store.write(async (tx) => (await tx.catalog.createSubscribable({
    sku: `SKU-${++emailCounter}-${Date.now()}`, name: 'Coffee', subscribable: options.subscribable ?? true, discount_bp: options.discount ?? 0, prices,
  })).id)
}

export async function seedPayment(store: Store, userId: number, options: { active?: boolean } = {}): Promise<{ methodId: number; sourceId: number }> {
  return store.write(async (tx) => {
    const method = await tx.catalog.createPaymentMethod('Card', options.active ?? true)
    const source = await tx.catalog.createPaymentSource({
      user_id: userId, payment_method_id: method.id, kind: 'card', brand: 'visa', last_digits: '4242', month: 1, year: 2030, gateway_reference: null,
    })
    return { methodId: method.id, sourceId: source.id }
  })
}

/** A subscription made through the API (so it is exactly what a client would have). */
export async function createSubscription(server: TestServer, key: string, attrs: Record<string, unknown> = {}): Promise<any> {
  const res = await server.request('POST', '/api/v1/subscriptions', { key, json: { subscription: { interval_length: 1, ...attrs } } })
  if (res.status !== 200) throw new Error(`createSubscription: ${res.status} ${res.text}`)
  return res.body
}

/**
 * Two subscriptions of one customer that between them hold every kind of value C3 renders: a
 * rich one (dates, payment, both addresses with escapes and non-ASCII text, two line items out
 * of catalog order) and a bare one (nulls, no line items).
 */
export async function createRichAndBare(server: TestServer): Promise<{ user: SeededUser; rich: any; bare: any }> {
  const user = await seedUser(server.store)
  const a = await seedSubscribable(server.store)
  const b = await seedSubscribable(server.store)
  const pay = await seedPayment(server.store, user.id)
  const address = { firstname: 'Ada', lastname: null, company: null, address1: '1 Main St', address2: null, city: 'Paris', zipcode: '75001', state_name: null, country_iso: 'fr', phone: '+33 1' }
  const rich = await createSubscription(server, user.key, {
    interval_units: 'week', end_date: '2027-01-01', payment_method_id: pay.methodId, payment_source_id: pay.sourceId,
    shipping_address_attributes: address, billing_address_attributes: { ...address, firstname: 'Élodie "É" \\ ✓' },
    line_items_attributes: [{ subscribable_id: b, quantity: 3 }, { subscribable_id: a, quantity: 1 }],
  })
  const bare = await createSubscription(server, user.key, {})
  return { user, rich, bare }
}
