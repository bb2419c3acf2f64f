/**
 * examples/fulfilment-worker (issue 29 item 5) against a real `replenish serve` (through tsx, as
 * test/cli does: npm test runs before the build): 100 due subscriptions become 100 orders in the
 * stand-in shop and 100 fulfilled installments, the worker is killed with kill -9 mid-way and
 * started again, and nothing is lost or doubled. The worker runs as a shop's developer runs it,
 * `node src/main.ts` on its own (Node's type stripping, no tsx, nothing of src/).
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../helpers/postgres.ts'
import { request } from '../helpers/server.ts'
import { runCli, spawnCli, spawnProcess, tempDir, testDb, type Child } from '../cli/harness.ts'

const WORKER = fileURLToPath(new URL('../../examples/fulfilment-worker/src/main.ts', import.meta.url))
const ADMIN = 'rpladm_fulfilment_worker_test_token_0123456789'
const USERS = 20
const PER_USER = 5
/** User 20's card is declined on its first charge (the stand-in shop's test card). */
const DECLINING_USER = USERS
/** The stand-in shop's time per order: 100 orders take 5 s, so the kill lands mid-way. */
const SHOP_LATENCY_MS = 50

interface ShopRecord { key: string; installment_id: number; attempt: number; outcome: { result: string; order_reference: string | null }; order: { reference: string } | null }

const lines = <T>(file: string): T[] =>
  existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l.startsWith('{') && l.endsWith('}')).map((l) => JSON.parse(l) as T) : []

/** Polls until `check` answers something other than undefined; fails after a minute (a hang, not a slow machine). */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const value = await check()
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

function dateIn(days: number): string {
  return new Date(Date.now() + days * 86_400_000).toISOString().slice(0, 10)
}

/** 20 customers with 5 monthly subscriptions each, all due today (docs/import.md's format). */
function seed(): string {
  const today = dateIn(0)
  const out: object[] = [{ type: 'payment_method', id: 1, name: 'Card' }, { type: 'subscribable', id: 1, sku: 'COFFEE-1KG', name: 'Coffee, 1 kg' }]
  for (let u = 1; u <= USERS; u++) {
    const email = u === DECLINING_USER ? `customer${u}@declines-once.example` : `customer${u}@example.com`
    out.push({ type: 'user', id: u, email, external_id: `cus_${u}` })
    out.push({ type: 'payment_source', id: u, user_id: u, payment_method_id: 1, last_digits: '4242' })
    for (let k = 1; k <= PER_USER; k++) {
      const id = (u - 1) * PER_USER + k
      out.push({
        type: 'subscription', id, user_id: u, interval_length: 1, interval_units: 'month', actionable_date: today,
        payment_method_id: 1, payment_source_id: u,
        shipping_address: { firstname: 'Ada', address1: '1 Main St', city: 'Portland', zipcode: '97205', country_iso: 'US' },
        line_items: [{ id, subscribable_id: 1, quantity: 1 + (id % 3) }],
      })
    }
  }
  return out.map((o) => JSON.stringify(o)).join('\n') + '\n'
}

async function installments(url: string): Promise<Record<string, unknown>[]> {
  const all: Record<string, unknown>[] = []
  for (let after = 0; ;) {
    const page = await request(url, 'GET', `/admin/api/v1/installments?limit=100&after=${after}`, { key: ADMIN })
    assert.equal(page.status, 200)
    all.push(...(page.body.installments as Record<string, unknown>[]))
    if (page.body.next_after === null) return all
    after = page.body.next_after as number
  }
}

async function deliveries(url: string, endpoint: number): Promise<{ id: number; state: string }[]> {
  const all: { id: number; state: string }[] = []
  for (let after = 0; ;) {
    const page = await request(url, 'GET', `/admin/api/v1/webhook_endpoints/${endpoint}/deliveries?limit=100&after=${after}`, { key: ADMIN })
    all.push(...(page.body.deliveries as { id: number; state: string }[]))
    if (page.body.next_after === null) return all
    after = page.body.next_after as number
  }
}

async function eventCount(url: string, type: string): Promise<number> {
  let count = 0
  for (let after = 0; ;) {
    const page = await request(url, 'GET', `/admin/api/v1/events?type=${type}&limit=100&after=${after}`, { key: ADMIN })
    count += (page.body.events as unknown[]).length
    if (page.body.next_after === null) return count
    after = page.body.next_after as number
  }
}

test('the fulfilment worker turns 100 due subscriptions into 100 orders and outcomes, through a kill -9 mid-way, losing and doubling nothing', async (t) => {
  const db = await testDb(t)
  const serve = spawnCli(t, ['serve'], {
    env: { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_PROCESS_EVERY: '0', REPLENISH_ADMIN_TOKEN: ADMIN, REPLENISH_LOG: 'off', REPLENISH_WEBHOOK_RETRY_BASE_SECONDS: '1' },
  })
  const url = (await serve.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  const imported = await request(url, 'POST', '/admin/api/v1/imports', { key: ADMIN, raw: seed(), headers: { 'content-type': 'application/x-ndjson' } })
  assert.equal(imported.status, 200, JSON.stringify(imported.body))

  // The shop registers the worker's URL for the two events that ask for an order.
  const port = await freePort()
  const endpoint = await request(url, 'POST', '/admin/api/v1/webhook_endpoints', {
    key: ADMIN,
    json: { webhook_endpoint: { url: `http://127.0.0.1:${port}/replenish/webhooks`, events: ['installment.created', 'installment.retry_due'] } },
  })
  assert.equal(endpoint.status, 201)
  const state = tempDir(t)
  const shopFile = join(state, 'stand-in-shop.jsonl')
  const startWorker = async (): Promise<Child> => {
    const worker = spawnProcess(t, process.execPath, [WORKER], {
      env: {
        REPLENISH_URL: url, REPLENISH_ADMIN_TOKEN: ADMIN, REPLENISH_WEBHOOK_SECRET: endpoint.body.secret as string,
        PORT: String(port), STATE_DIR: state, STAND_IN_SHOP_LATENCY_MS: String(SHOP_LATENCY_MS),
      },
    })
    await worker.waitFor(/^fulfilment worker listening on /m)
    return worker
  }
  const orders = (): ShopRecord[] => lines<ShopRecord>(shopFile).filter((r) => r.order !== null)

  let worker = await startWorker()
  const processed = await runCli(['process'], { REPLENISH_DB: db })
  assert.match(processed.stdout.join('\n'), /^processed 100 subscriptions .*: 100 installments made/m)

  // kill -9 while orders are being placed: some placed, some deliveries acknowledged and not yet ordered.
  await until('the worker to place 25 orders', () => (orders().length >= 25 ? true : undefined))
  worker.kill('SIGKILL')
  assert.deepEqual(await worker.exited, { code: null, signal: 'SIGKILL' })
  const placedBeforeKill = orders().length
  assert.ok(placedBeforeKill > 0 && placedBeforeKill < 100, `killed mid-way: ${placedBeforeKill} orders placed`)
  // replenish had been told 2xx for more deliveries than there were orders: those it will not send again.
  const acknowledged = (await deliveries(url, endpoint.body.id as number)).filter((d) => d.state === 'delivered').length
  assert.ok(acknowledged > placedBeforeKill, `killed with deliveries acknowledged and not yet ordered (${acknowledged} acknowledged, ${placedBeforeKill} ordered)`)

  // Started again on the same state: replenish retries what the dead worker did not answer.
  worker = await startWorker()
  const firstRound = await until('95 fulfilled and 5 declined installments', async () => {
    const all = await installments(url)
    const by = (s: string): number => all.filter((i) => i.state === s).length
    return all.length === 100 && by('fulfilled') === 95 && by('retrying') === 5 ? all : undefined
  })
  for (const inst of firstRound.filter((i) => i.state === 'retrying')) assert.equal((inst.user as { id: number }).id, DECLINING_USER)

  // A delivery seen twice (a 2xx that got lost, a redelivery by hand) places no second order. The
  // worker acknowledges it before acting, so what shows that it acted on nothing is the round
  // below: the worker takes tries in the order it received them, and this one came first.
  const first = (await deliveries(url, endpoint.body.id as number))[0] as { id: number }
  assert.equal((await request(url, 'POST', `/admin/api/v1/deliveries/${first.id}/redeliver`, { key: ADMIN })).status, 200)
  await until('the redelivery to be acknowledged', async () => {
    const d = await request(url, 'GET', `/admin/api/v1/deliveries/${first.id}`, { key: ADMIN })
    return (d.body.attempts as { redelivery: boolean; status_code: number | null }[]).some((a) => a.redelivery && a.status_code === 204) ? true : undefined
  })

  // Two days on, the declined ones are due again (installment.retry_due): the next charge passes.
  const retried = await runCli(['process', '--as-of', dateIn(2)], { REPLENISH_DB: db })
  assert.match(retried.stdout.join('\n'), /5 retries due/)
  const final = await until('100 fulfilled installments', async () => {
    const all = await installments(url)
    return all.every((i) => i.state === 'fulfilled') ? all : undefined
  })

  // 100 orders, one per installment; each installment fulfilled with its order's reference.
  const placed = orders()
  assert.equal(placed.length, 100, 'one order per installment, none doubled')
  assert.deepEqual(placed.map((r) => r.installment_id).sort((a, b) => a - b), Array.from({ length: 100 }, (_, i) => i + 1))
  const referenceOf = new Map(placed.map((r) => [r.installment_id, r.order?.reference]))
  assert.equal(new Set(referenceOf.values()).size, 100)
  for (const inst of final) {
    const attempts = inst.attempts as { result: string; order_reference: string | null }[]
    const declined = (inst.user as { id: number }).id === DECLINING_USER
    assert.deepEqual(attempts.map((a) => a.result), declined ? ['payment_failed', 'fulfilled'] : ['fulfilled'], `installment ${inst.id}`)
    assert.equal(attempts.at(-1)?.order_reference, referenceOf.get(inst.id as number), `installment ${inst.id}'s order`)
  }
  const declinedTries = lines<ShopRecord>(shopFile).filter((r) => r.order === null)
  assert.deepEqual(declinedTries.map((r) => r.attempt), [1, 1, 1, 1, 1])
  // Each outcome recorded once: no event twice.
  assert.equal(await eventCount(url, 'installment.fulfilled'), 100)
  assert.equal(await eventCount(url, 'installment.retry_scheduled'), 5)
  assert.equal(await eventCount(url, 'installment.retry_due'), 5)

  // Every delivery acknowledged, the redelivery's too.
  await until('every delivery delivered', async () => {
    const all = await deliveries(url, endpoint.body.id as number)
    return all.length === 105 && all.every((d) => d.state === 'delivered') ? all : undefined
  })

  // A request not signed with the endpoint's secret is refused and places nothing.
  const forged = await fetch(`http://127.0.0.1:${port}/replenish/webhooks`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'replenish-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` },
    body: JSON.stringify({ id: 9999, type: 'installment.created', data: { object: { ...final[0], id: 9999, attempts: [] } } }),
  })
  assert.equal(forged.status, 400)
  assert.equal(orders().length, 100)
  assert.equal(worker.stderr(), '')
  serve.kill('SIGTERM')
  assert.equal((await serve.exited).code, 0)
})
