/**
 * C15's multi-instance test: three `serve` processes on one PostgreSQL database, 3,000 mixed
 * customer requests spread over them (some writes sent twice at once, with one Idempotency-Key,
 * to two instances), the in-serve processors and two `replenish process` runs racing over 5,000
 * due subscriptions, and a `kill -9` of one instance (the one processing, when it can be caught
 * at it) in the middle. Afterwards, through a surviving instance: no duplicate installment, no
 * acknowledged write lost, every event delivered to the webhook receiver at least once.
 *
 * Every write carries an Idempotency-Key, and a write whose instance died under it is sent
 * again, with its key, to the next instance (what a client behind a load balancer does): the
 * first try may or may not have committed, the key makes the retry its replay or its one run.
 * Each subscription is written by one worker, one request at a time, so the customer's fields
 * after a write's answer are known exactly: the processor changes others (dates, counters it
 * resets, processing_state), never these.
 *
 * Its wall time is bound by the webhook claims: deliveries the killed instance had claimed are
 * posted by another once their claim runs out (CLAIM_LEASE_MS after it was taken), and the test
 * waits for them.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import pg from 'pg'
import { runCli, spawnCli, tempDir, type Child } from './harness.ts'
import { newTestLocation, ON_POSTGRES } from '../helpers/store.ts'
import { sleep, startReceiver, type Receiver } from '../helpers/webhooks.ts'
import { CLAIM_LEASE_MS } from '../../src/store/postgres/deliveries.ts'
import { PROCESSING_LEASE } from '../../src/processing/lease.ts'

const ADMIN = 'multi-instance-admin-token-0123456789'
const TODAY = '2026-03-10'
/** Before TODAY by less than a month: a changed interval (C7) moves an unprocessed subscription past TODAY, never onto it. */
const IMPORTED_AT = '2026-02-28T12:00:00.000Z'
const USERS = 48
const DUE = 5000
/**
 * The last TOUCHED due subscriptions are the customers' to change (the processor comes to them
 * last, so customers and processors meet on them); each of the others must get exactly one installment.
 */
const TOUCHED = 600
const FIRST_TOUCHED = DUE - TOUCHED + 1
const REQUESTS = 3000
const WORKERS = 12
const SUBSCRIBABLES = 5
const keyOf = (user: number): string => `mi-key-${user}-0123456789abcdef`
/** The processing holder is killed once this many installments are made (a run in progress). */
const KILL_AT_INSTALLMENTS = 1500

// ---- the seed: one `replenish import` --------------------------------------------------------

function seedFile(dir: string): string {
  const lines: object[] = []
  for (let u = 1; u <= USERS; u++) {
    lines.push({ type: 'user', id: u, email: `customer${u}@multi.example` })
    lines.push({ type: 'api_key', user_id: u, key: keyOf(u) })
  }
  for (let s = 1; s <= SUBSCRIBABLES; s++) lines.push({ type: 'subscribable', id: s, sku: `MI-${s}`, name: `Item ${s}` })
  for (let id = 1; id <= DUE; id++) {
    lines.push({
      type: 'subscription', id, user_id: ownerOf(id), interval_length: 1, interval_units: 'month', actionable_date: TODAY,
      created_at: IMPORTED_AT, line_items: [{ id, subscribable_id: (id % SUBSCRIBABLES) + 1, quantity: 1 }],
    })
  }
  const file = join(dir, 'seed.jsonl')
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n')
  return file
}

const ownerOf = (subscriptionId: number): number => ((subscriptionId - 1) % USERS) + 1

/** An imported subscription's customer fields, as the seed gave them (C3's defaults for the rest). */
const imported = (id: number): object => ({
  id, state: 'active', paused: false, interval_length: 1, interval_units: 'month', skip_count: 0, end_date: null,
  shipping_address: null, billing_address: null, line_items: [{ id, subscription_id: id, subscribable_id: (id % SUBSCRIBABLES) + 1, quantity: 1 }],
})

// ---- the instances ---------------------------------------------------------------------------

interface Instance {
  readonly index: number
  readonly child: Child
  url: string
  killed: boolean
}

/** Three `serve`; `onFirst` is called when the first of them listens (its processor ticks then). */
async function startInstances(t: TestContext, env: Record<string, string>, onFirst: () => void): Promise<Instance[]> {
  const instances = [0, 1, 2].map((index): Instance => ({ index, child: spawnCli(t, ['serve'], { env }), url: '', killed: false }))
  await Promise.all(instances.map(async (i) => {
    i.url = (await i.child.waitFor(/^replenish listening on (http:\/\/\S+)$/m))[1] as string
    onFirst()
  }))
  return instances
}

/** Installments a `process` run made, from its summary on stdout. */
const madeBy = (stdout: string): number => Number(/(\d+) installments? made/.exec(stdout)?.[1] ?? NaN)

/** The instances' lines on stderr that pass `test` (JSON log lines; the access log is off). */
const logged = (instances: readonly Instance[], test: (line: string) => boolean): string[] =>
  instances.flatMap((i) => i.child.stderr().split('\n').filter(test).map((l) => `serve ${i.index}: ${l}`))

// ---- requests, sent again elsewhere when their instance dies ---------------------------------

interface Answer {
  readonly status: number
  readonly text: string
  readonly body: any
  readonly replayed: boolean
  /** Tries that got no answer (the instance died): never acknowledged. */
  readonly lost: number
}

interface Req {
  readonly method: string
  readonly path: string
  readonly key: string
  readonly json?: unknown
  readonly idempotencyKey?: string
}

class Cluster {
  private turn = 0
  unanswered = 0
  retriedAfter503 = 0
  acknowledged = 0

  readonly instances: Instance[]

  constructor(instances: Instance[]) {
    this.instances = instances
  }

  /** The next live instance after `start`, round robin. */
  private pick(start: number): Instance {
    for (let n = 0; n < this.instances.length; n++) {
      const i = this.instances[(start + n) % this.instances.length] as Instance
      if (!i.killed) return i
    }
    throw new Error('no instance is left')
  }

  next(): number {
    return this.turn++
  }

  /**
   * One request, on the instance `start` names (or the next live one); a try that gets no answer
   * goes to the next instance, and a 409 (the same key still running there) or a 503 is sent again.
   */
  async send(req: Req, start = this.next()): Promise<Answer> {
    let lost = 0
    for (let attempt = 0; attempt < 40; attempt++) {
      const instance = this.pick(start + lost)
      const headers: Record<string, string> = { authorization: `Bearer ${req.key}` }
      if (req.json !== undefined) headers['content-type'] = 'application/json'
      if (req.idempotencyKey !== undefined) headers['idempotency-key'] = req.idempotencyKey
      let res: Response
      let text: string
      try {
        res = await fetch(instance.url + req.path, {
          method: req.method, headers, body: req.json === undefined ? undefined : JSON.stringify(req.json), signal: AbortSignal.timeout(30_000),
        })
        text = await res.text()
      } catch {
        lost++
        this.unanswered++
        continue
      }
      if (res.status === 409 && req.idempotencyKey !== undefined) {
        await sleep(20)
        continue
      }
      // A lock waited on in vain (a row a processing batch held for 5 s on a loaded machine):
      // rolled back, and sent again after its Retry-After, as a client should.
      if (res.status === 503) {
        this.retriedAfter503++
        await sleep(1000 * Number(res.headers.get('retry-after') ?? 1))
        continue
      }
      if (res.status >= 200 && res.status < 300) this.acknowledged++
      return { status: res.status, text, body: text ? JSON.parse(text) : undefined, replayed: res.headers.get('idempotent-replayed') === 'true', lost }
    }
    throw new Error(`${req.method} ${req.path}: no answer after 40 tries`)
  }

  /** Admin GET on a live instance. */
  async admin(path: string): Promise<any> {
    const a = await this.send({ method: 'GET', path: `/admin/api/v1${path}`, key: ADMIN })
    assert.equal(a.status, 200, `GET ${path}: ${a.text}`)
    return a.body
  }

  /** Every item of an admin list, following `next_after`. */
  async adminAll(path: string, collection: string): Promise<any[]> {
    const all: any[] = []
    const join = path.includes('?') ? '&' : '?'
    let after = 0
    for (let page = 0; page < 10_000; page++) {
      const body = await this.admin(`${path}${join}limit=100&after=${after}`)
      all.push(...(body[collection] as any[]))
      if (body.next_after === null) return all
      after = body.next_after as number
    }
    throw new Error(`${path}: more than 10,000 pages`)
  }
}

// ---- the customers ---------------------------------------------------------------------------

/** What a write may change of its subscription that no processor run changes: known exactly after each answer. */
function customerView(s: any): string {
  const items = (s.line_items as any[]).map((li) => [li.id, li.subscribable_id, li.quantity]).sort((a, b) => a[0] - b[0])
  return JSON.stringify({
    state: s.state, paused: s.paused, interval_length: s.interval_length, interval_units: s.interval_units, skip_count: s.skip_count,
    end_date: s.end_date, shipping_address: s.shipping_address, billing_address: s.billing_address, line_items: items,
  })
}

interface Owned {
  readonly id: number
  readonly key: string
  /** The subscription as the last acknowledged write answered it (line item writes patch its items). */
  sub: any
}

interface Figures {
  requests: number
  writes: number
  pairs: number
  pairsWithoutReplayHeader: number
  staleReads: string[]
  unexpected: string[]
}

/** Events each acknowledged write must have made, by subscription: "id type" → count. */
type Expected = Map<string, number>
const expect = (expected: Expected, subscriptionId: number, type: string): void => {
  const k = `${subscriptionId} ${type}`
  expected.set(k, (expected.get(k) ?? 0) + 1)
}

type Kind = 'get' | 'list' | 'address' | 'interval' | 'skip' | 'skip-pair' | 'pause-resume' | 'add-item' | 'item-quantity' | 'remove-item' | 'create' | 'create-pair'
const MIX: readonly [Kind, number][] = [
  ['get', 22], ['list', 5], ['address', 11], ['interval', 5], ['skip', 10], ['skip-pair', 4], ['pause-resume', 8],
  ['add-item', 8], ['item-quantity', 8], ['remove-item', 5], ['create', 10], ['create-pair', 4],
]
const MIX_TOTAL = MIX.reduce((n, [, w]) => n + w, 0)

/** A small seeded generator (mulberry32): the same mix of operations on every run. */
function random(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let x = Math.imul(a ^ (a >>> 15), 1 | a)
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296
  }
}

class Customers {
  readonly owned: Owned[][] = []
  readonly expected: Expected = new Map()
  readonly created = new Set<number>()
  readonly figures: Figures = { requests: 0, writes: 0, pairs: 0, pairsWithoutReplayHeader: 0, staleReads: [], unexpected: [] }
  private keys = 0

  private readonly cluster: Cluster

  constructor(cluster: Cluster) {
    this.cluster = cluster
    for (let w = 0; w < WORKERS; w++) this.owned.push([])
    for (let id = FIRST_TOUCHED; id <= DUE; id++) {
      const user = ownerOf(id)
      this.ownedBy(user).push({ id, key: keyOf(user), sub: imported(id) })
    }
  }

  private ownedBy(user: number): Owned[] {
    return this.owned[(user - 1) % WORKERS] as Owned[]
  }

  /** `n` requests over the workers, each worker one request (or one pair) at a time. */
  async run(n: number, onProgress: (sent: number) => void): Promise<void> {
    const rand = random(20260310)
    const take = (size: number): boolean => {
      if (this.figures.requests >= n) return false
      this.figures.requests += size
      onProgress(this.figures.requests)
      return true
    }
    await Promise.all(this.owned.map(async (mine, w) => {
      for (;;) {
        const kind = pickKind(rand())
        const pair = kind === 'skip-pair' || kind === 'create-pair'
        if (!take(pair ? 2 : 1)) return
        await this.act(kind, mine, w, rand)
      }
    }))
  }

  private idempotencyKey(): string {
    return `mi-${++this.keys}-${Math.random().toString(36).slice(2)}`
  }

  private async act(kind: Kind, mine: Owned[], worker: number, rand: () => number): Promise<void> {
    const own = mine[Math.floor(rand() * mine.length)] as Owned
    const items = own.sub.line_items as any[]
    switch (kind) {
      case 'get': return this.read(own)
      case 'list': return this.list(own.key)
      case 'address':
        return this.write(own, 'PATCH', `/api/v1/subscriptions/${own.id}`, { subscription: { shipping_address_attributes: {
          firstname: 'Ann', address1: `${this.keys + 1} Main St`, city: 'Paris', zipcode: '75001', country_iso: 'FR',
        } } }, 'subscription.shipping_address_changed')
      case 'interval':
        return this.write(own, 'PATCH', `/api/v1/subscriptions/${own.id}`, { subscription: { interval_length: (own.sub.interval_length % 3) + 1 } }, 'subscription.frequency_changed')
      case 'skip':
      case 'skip-pair':
      case 'pause-resume': {
        const pair = kind === 'skip-pair'
        // A paused subscription cannot be skipped (422): it is resumed instead.
        if (own.sub.paused) return this.write(own, 'POST', `/api/v1/subscriptions/${own.id}/resume`, undefined, 'subscription.resumed', pair)
        if (kind === 'pause-resume') return this.write(own, 'POST', `/api/v1/subscriptions/${own.id}/pause`, undefined, 'subscription.paused')
        return this.write(own, 'POST', `/api/v1/subscriptions/${own.id}/skip`, undefined, 'subscription.skipped', pair)
      }
      case 'add-item':
      case 'remove-item':
      case 'item-quantity': {
        // At least one line item stays (a due subscription without any is never processed), at most six.
        if (kind === 'remove-item' && items.length > 1) return this.itemWrite(own, 'DELETE', items[items.length - 1], 'line_item.deleted')
        if (kind !== 'item-quantity' && items.length < 6) return this.itemWrite(own, 'POST', { subscribable_id: 1 + Math.floor(rand() * SUBSCRIBABLES), quantity: 1 + Math.floor(rand() * 5) }, 'line_item.created')
        const item = items[Math.floor(rand() * items.length)]
        return this.itemWrite(own, 'PATCH', { ...item, quantity: (item.quantity % 9) + 1 }, 'line_item.updated')
      }
      case 'create':
      case 'create-pair':
        return this.create(mine, worker, rand, kind === 'create-pair')
    }
  }

  /** A GET answers what the last acknowledged write left, whichever instance answers it (C15: no stale body). */
  private async read(own: Owned): Promise<void> {
    const a = await this.cluster.send({ method: 'GET', path: `/api/v1/subscriptions/${own.id}`, key: own.key })
    if (a.status !== 200) return void this.figures.unexpected.push(`GET ${own.id}: ${a.status} ${a.text}`)
    if (customerView(a.body) !== customerView(own.sub)) this.figures.staleReads.push(`${own.id}: ${customerView(a.body)} after ${customerView(own.sub)}`)
  }

  private async list(key: string): Promise<void> {
    const a = await this.cluster.send({ method: 'GET', path: '/api/v1/subscriptions?per_page=100', key })
    if (a.status !== 200) this.figures.unexpected.push(`GET list: ${a.status} ${a.text}`)
  }

  /**
   * A write with a fresh key; `pair`: sent at the same time to two instances with that key, whose
   * answers must be the same (one run, the other its replay).
   */
  private async send(req: Req, pair: boolean): Promise<Answer | undefined> {
    this.figures.writes++
    if (!pair) return this.checked(req, await this.cluster.send(req))
    this.figures.pairs++
    const start = this.cluster.next()
    const [a, b] = await Promise.all([this.cluster.send(req, start), this.cluster.send(req, start + 1)])
    if (a.status !== b.status || a.text !== b.text) {
      this.figures.unexpected.push(`pair ${req.method} ${req.path}: ${a.status} ${a.text} / ${b.status} ${b.text}`)
      return undefined
    }
    // Both ran only if neither was replayed; a try lost with its instance may have been the run.
    if (!a.replayed && !b.replayed && a.lost + b.lost === 0) this.figures.pairsWithoutReplayHeader++
    return this.checked(req, a)
  }

  private checked(req: Req, a: Answer): Answer | undefined {
    if (a.status === 200) return a
    this.figures.unexpected.push(`${req.method} ${req.path}: ${a.status} ${a.text}`)
    return undefined
  }

  private async write(own: Owned, method: string, path: string, json: unknown, event: string, pair = false): Promise<void> {
    const a = await this.send({ method, path, key: own.key, json, idempotencyKey: this.idempotencyKey() }, pair)
    if (!a) return
    own.sub = a.body
    expect(this.expected, own.id, event)
  }

  private async itemWrite(own: Owned, method: 'POST' | 'PATCH' | 'DELETE', item: any, event: string): Promise<void> {
    const path = method === 'POST' ? `/api/v1/subscriptions/${own.id}/line_items` : `/api/v1/line_items/${item.id}`
    const json = method === 'DELETE' ? undefined : { subscription_line_item: { subscribable_id: item.subscribable_id, quantity: item.quantity } }
    const a = await this.send({ method, path, key: own.key, json, idempotencyKey: this.idempotencyKey() }, false)
    if (!a) return
    const others = (own.sub.line_items as any[]).filter((li) => li.id !== a.body.id)
    own.sub = { ...own.sub, line_items: method === 'DELETE' ? others : [...others, a.body] }
    expect(this.expected, own.id, event)
  }

  private async create(mine: Owned[], worker: number, rand: () => number, pair: boolean): Promise<void> {
    // The worker's customers are the users it owns (user - 1 ≡ worker mod WORKERS).
    const users = Math.ceil((USERS - worker) / WORKERS)
    const user = worker + 1 + WORKERS * Math.floor(rand() * users)
    const json = { subscription: { interval_length: 1 + Math.floor(rand() * 3), line_items_attributes: [{ subscribable_id: 1 + Math.floor(rand() * SUBSCRIBABLES), quantity: 2 }] } }
    const a = await this.send({ method: 'POST', path: '/api/v1/subscriptions', key: keyOf(user), json, idempotencyKey: this.idempotencyKey() }, pair)
    if (!a) return
    const id = a.body.id as number
    this.created.add(id)
    mine.push({ id, key: keyOf(user), sub: a.body })
    expect(this.expected, id, 'subscription.created')
  }
}

function pickKind(r: number): Kind {
  let at = r * MIX_TOTAL
  for (const [kind, weight] of MIX) {
    if (at < weight) return kind
    at -= weight
  }
  return 'get'
}

// ---- the race: processors and the kill -------------------------------------------------------

/**
 * The in-serve processors tick when an instance starts, then every minute at the least: too late
 * for a test of a minute. So the test holds the lease's row, as a processor starting elsewhere
 * would (an insert not yet committed), while the instances boot: their first ticks wait on it,
 * and race for the lease the moment it is let go, when the load begins. (Held for at most a few
 * seconds: a tick that waits longer than the store's lock time-out gives up, and logs it.)
 */
async function holdLease(db: pg.Client): Promise<() => Promise<boolean>> {
  await db.query('BEGIN')
  await db.query('INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, 0)', [PROCESSING_LEASE, 'test-gate'])
  let released = false
  // True when this call let it go (false: the time-out had already).
  return async () => {
    if (released) return false
    released = true
    await db.query('ROLLBACK')
    return true
  }
}

interface KillReport {
  readonly victim: Instance
  readonly heldLease: boolean
  readonly installmentsAtKill: number
  readonly at: number
}

/**
 * Kills (-9) the instance holding the processing lease once its run has made KILL_AT_INSTALLMENTS
 * installments; when no instance is caught processing, the second one at the middle of the load.
 */
async function killMidRun(db: pg.Client, cluster: Cluster, halfway: Promise<void>): Promise<KillReport> {
  let half = false
  void halfway.then(() => (half = true))
  const deadline = Date.now() + 60_000
  for (;;) {
    const made = Number((await db.query('SELECT count(*) AS n FROM installments')).rows[0].n)
    const holder = ((await db.query('SELECT holder FROM leases WHERE name = $1', [PROCESSING_LEASE])).rows[0]?.holder ?? '') as string
    const pid = Number(holder.split(':')[1])
    const processing = cluster.instances.find((i) => i.child.pid === pid)
    if (processing && made >= KILL_AT_INSTALLMENTS && made < DUE) return kill(processing, true, made)
    if (half || Date.now() > deadline) return kill(cluster.instances[1] as Instance, processing !== undefined && processing.index === 1, made)
    await sleep(15)
  }
}

function kill(victim: Instance, heldLease: boolean, installmentsAtKill: number): KillReport {
  victim.child.kill('SIGKILL')
  victim.killed = true
  return { victim, heldLease, installmentsAtKill, at: Date.now() }
}

/** Resolves once `predicate` holds, checking every 25 ms; false after `ms`. */
async function until(predicate: () => boolean | Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await predicate()) return true
    await sleep(25)
  }
  return predicate()
}

// ---- the test --------------------------------------------------------------------------------

test('three instances on one database: no duplicate installment, no lost write, every event delivered (C15)', { timeout: 480_000 }, async (t) => {
  assert.ok(ON_POSTGRES, 'this test needs PostgreSQL: REPLENISH_TEST_DB=postgres://…')
  const started = Date.now()
  const at = await newTestLocation()
  // The test's own connection (it holds the lease back, and watches the processing) ends first:
  // the schema is dropped after it.
  const db = new pg.Client({ connectionString: at.location })
  await db.connect()
  // After hooks run in the order they were added: this one first. Instances still running when
  // an assertion failed may hold locks DROP SCHEMA waits on, and two outlived a failed run once
  // (2026-11-28): they are killed before the schema goes.
  let running: readonly Instance[] = []
  t.after(async () => {
    await Promise.all(running.filter((i) => i.child.pid !== undefined).map(async (i) => {
      i.child.kill('SIGKILL')
      await i.child.exited
    }))
    await db.end()
    await at.remove()
  })
  const env = { REPLENISH_DB: at.location, REPLENISH_TODAY: TODAY }
  assert.equal((await runCli(['migrate'], env)).status, 0)
  const seeded = await runCli(['import', seedFile(tempDir(t))], env)
  assert.equal(seeded.status, 0, seeded.stderr.join('\n'))

  // One event in 20 fails its first delivery: it is retried a second later (REPLENISH_WEBHOOK_RETRY_BASE_SECONDS).
  const seen = new Set<string>()
  /** Events the receiver accepted (answered 2xx): a refused try is no delivery. */
  const accepted = new Set<string>()
  const receiver: Receiver = await startReceiver(t, (req, res) => {
    const id = req.headers['replenish-event-id'] as string
    res.statusCode = Number(id) % 20 === 7 && !seen.has(id) ? 503 : 200
    seen.add(id)
    if (res.statusCode === 200) accepted.add(id)
    res.end()
  })
  const release = await holdLease(db)
  // Released when the load begins, or before a waiting tick's lock time-out (5 s) when booting is slow.
  let gate: NodeJS.Timeout | undefined
  t.after(() => clearTimeout(gate))
  const instances = running = await startInstances(t, {
    ...env, REPLENISH_PORT: '0', REPLENISH_ADMIN_TOKEN: ADMIN, REPLENISH_PROCESS_EVERY: '1', REPLENISH_WEBHOOK_RETRY_BASE_SECONDS: '1',
    REPLENISH_RATE_LIMIT: '0', REPLENISH_AUTH_FAILURE_LIMIT: '0', REPLENISH_LOG: 'off', REPLENISH_DB_POOL: '8',
  }, () => (gate ??= setTimeout(() => void release(), 4000)))
  const cluster = new Cluster(instances)
  const endpoint = await cluster.send({ method: 'POST', path: '/admin/api/v1/webhook_endpoints', key: ADMIN, json: { webhook_endpoint: { url: receiver.url, events: ['*'] } } })
  assert.equal(endpoint.status, 201, endpoint.text)
  const booted = Date.now()

  // The load, the processors and the kill, all at once.
  const customers = new Customers(cluster)
  let reachedHalf!: () => void
  const halfway = new Promise<void>((resolve) => (reachedHalf = resolve))
  const gateHeld = await release()
  const answeredBefore = cluster.acknowledged
  const load = customers.run(REQUESTS, (sent) => sent >= REQUESTS / 2 && reachedHalf())
  const processors = (async () => {
    // The first `process` waits for the lease an instance took; the second starts after the kill.
    await until(async () => Number((await db.query('SELECT count(*) AS n FROM installments')).rows[0].n) > 0, 10_000)
    const first = spawnCli(t, ['process'], { env })
    const killed = await killMidRun(db, cluster, halfway)
    const second = spawnCli(t, ['process'], { env })
    const exits = await Promise.all([first.exited, second.exited])
    return { killed, cli: [first, second], exits }
  })()
  const [, { killed, cli, exits }] = await Promise.all([load, processors])
  const loadDone = Date.now()
  const answered = cluster.acknowledged - answeredBefore
  assert.deepEqual(exits.map((e) => e.code), [0, 0], cli.map((c) => c.stderr()).join('\n'))
  // A run leaves a due row a request holds at that moment to the next run (FOR UPDATE SKIP LOCKED):
  // one more, with the load over, makes that next run.
  const last = await runCli(['process'], env)
  assert.equal(last.status, 0, last.stderr.join('\n'))
  const leftOver = madeBy(last.stdout.join('\n'))

  // Every request was answered as the customer API answers it, and no GET was stale.
  const f = customers.figures
  assert.deepEqual(f.unexpected, [], `answers other than 200; the instances' errors:\n${logged(instances, (l) => l.includes('"level":"error"')).join('\n')}`)
  assert.deepEqual(f.staleReads, [], 'a GET after an acknowledged write did not show it')
  assert.equal(f.pairsWithoutReplayHeader, 0, 'a write sent twice with one key ran twice')

  // No acknowledged write lost: each subscription shows its last acknowledged write's fields.
  const subs = new Map((await cluster.adminAll('/subscriptions', 'subscriptions')).map((s) => [s.id as number, s]))
  const lost: string[] = []
  for (const own of customers.owned.flat()) {
    const now = subs.get(own.id)
    if (!now || customerView(now) !== customerView(own.sub)) lost.push(`${own.id}: ${now ? customerView(now) : 'missing'}, acknowledged ${customerView(own.sub)}`)
  }
  assert.deepEqual(lost, [], 'acknowledged writes lost')
  assert.equal(subs.size, DUE + customers.created.size, 'subscriptions made that no acknowledged create answered')

  // Installments: one per (subscription, due date); one for TODAY for every due subscription the
  // customers left alone; and none left due (moved by a skip, a pause, or processed).
  const installments = await cluster.adminAll('/installments', 'installments')
  const perDue = new Map<string, number>()
  for (const i of installments) perDue.set(`${i.subscription_id} ${i.due_date}`, (perDue.get(`${i.subscription_id} ${i.due_date}`) ?? 0) + 1)
  const duplicates = [...perDue].filter(([, n]) => n > 1).map(([k, n]) => `${k}: ${n}`)
  assert.deepEqual(duplicates, [], 'duplicate installments')
  const missing = []
  for (let id = 1; id < FIRST_TOUCHED; id++) if (!perDue.has(`${id} ${TODAY}`)) missing.push(id)
  assert.deepEqual(missing, [], 'due subscriptions the customers left alone without an installment')
  const stillDue = [...subs.values()].filter((s) => s.state === 'active' && !s.paused && s.actionable_date !== null && s.actionable_date <= TODAY && s.line_items.length > 0)
  assert.deepEqual(stillDue.map((s) => s.id), [], 'due subscriptions left unprocessed')
  assert.ok(installments.every((i) => i.due_date === TODAY), 'an installment for another date')

  // Events: each acknowledged write made its event once (a write sent twice with one key too),
  // each installment its installment.created.
  const events = await cluster.adminAll('/events', 'events')
  const made = new Map<string, number>()
  for (const e of events) made.set(`${e.subscription_id} ${e.type}`, (made.get(`${e.subscription_id} ${e.type}`) ?? 0) + 1)
  const eventsOff = [...customers.expected].filter(([k, n]) => made.get(k) !== n).map(([k, n]) => `${k}: ${made.get(k) ?? 0} events, ${n} acknowledged writes`)
  assert.deepEqual(eventsOff, [], 'events of acknowledged writes')
  assert.equal(events.filter((e) => e.type === 'installment.created').length, installments.length)

  // Webhooks: every event reaches the receiver at least once. Deliveries the killed instance had
  // claimed wait for their claim to run out (CLAIM_LEASE_MS) before another instance posts them.
  const eventIds = new Set(events.map((e) => String(e.id)))
  // The claims run out CLAIM_LEASE_MS after the kill; the minute after that is for a busy machine.
  const drained = await until(() => [...eventIds].every((id) => accepted.has(id)), Math.max(0, killed.at + CLAIM_LEASE_MS + 60_000 - Date.now()))
  const undelivered = [...eventIds].filter((id) => !accepted.has(id))
  const drainedAt = Date.now()

  const ms = (a: number, b: number): string => `${((b - a) / 1000).toFixed(1)} s`
  t.diagnostic(`requests: ${f.requests} (${f.writes} writes, ${f.pairs} of them sent twice at once with one key), ${answered} acknowledged (2xx); ${cluster.unanswered} tries unanswered by the killed instance, sent again elsewhere; ${cluster.retriedAfter503} answered 503 and sent again`)
  t.diagnostic(`killed serve ${killed.victim.index} (${killed.heldLease ? 'holding the processing lease' : 'not processing'}) at ${killed.installmentsAtKill} installments, ${ms(booted, killed.at)} into the load`)
  const byCli = cli.map((c) => madeBy(c.stdout()))
  const inServe = installments.length - byCli.reduce((a, b) => a + b, leftOver)
  t.diagnostic(`installments made by: the instances ${inServe} (first ticks held until ${gateHeld ? 'the load began' : 'a boot time-out'}), ` +
    `process runs ${byCli.join(' and ')}, a run after the load ${leftOver} (due rows a request held when the runs came to them)${logged(instances, (l) => l.includes('"processor run')).map((l) => `; ${l}`).join('')}`)
  t.diagnostic(`installments: ${installments.length} (due ${DUE}, ${DUE - installments.length} moved by customers first), duplicates ${duplicates.length}, lost writes ${lost.length}, stale reads ${f.staleReads.length}`)
  t.diagnostic(`events delivered: ${eventIds.size - undelivered.length}/${eventIds.size} (${receiver.received.length} requests received), drained ${ms(killed.at, drainedAt)} after the kill`)
  const errors = logged(instances, (l) => l.includes('"level":"error"'))
  t.diagnostic(`errors the instances logged: ${errors.length}${errors.slice(0, 5).map((l) => `; ${l}`).join('')}`)
  t.diagnostic(`wall time: ${ms(started, drainedAt)} (boot ${ms(started, booted)}, load ${ms(booted, loadDone)}, checks and drain ${ms(loadDone, drainedAt)})`)
  assert.ok(drained, `${undelivered.length} events never reached the receiver: ${undelivered.slice(0, 20).join(', ')}`)

  // The survivors stop on SIGTERM as ever (C12): in-flight work finished, exit 0.
  const survivors = instances.filter((i) => !i.killed)
  for (const i of survivors) i.child.kill('SIGTERM')
  assert.deepEqual((await Promise.all(survivors.map((i) => i.child.exited))).map((e) => e.code), survivors.map(() => 0))
})
