/**
 * The store's write path without HTTP: units of writes shaped like the bench's writes, in
 * batches, on the bench's seeded database with
 * synchronous=FULL and the checkpoint thread, as `serve` runs them. Prints the CPU time per unit
 * (every thread: the fdatasyncs and the checkpoint thread included) and the wall time per unit.
 * Used to measure one change of the write path at a time, far more steadily than the HTTP bench.
 *
 *   node --import tsx bench/write-units.mts                  # 200,000 units, batches of 32
 *   node --import tsx bench/write-units.mts --grow 1000000   # with a million ~900-byte events first
 *   node --import tsx bench/write-units.mts --shape skip     # patch (default), skip or create
 *
 * - patch: lock the line item with its owner, update its quantity, touch its subscription,
 *   record `line_item.updated` (the PATCH handler's unit);
 * - skip: lock the subscription, decide the skip, update it, render its body (around its kept
 *   line items, as the route does), record `subscription.skipped` with it (the skip route's unit);
 * - create: validate a subscription with two line items (its catalog questions answered through
 *   the unit, as the handler's are), insert them, render, record `subscription.created` (the
 *   create handler's unit).
 *
 * Every unit is `store.write(async (tx) => …)` through the store's interface (src/store/api.ts),
 * its reads inside it, exactly as the handlers run them.
 *
 * Pin it to one core (`taskset -c 0`) to compare with the bench's server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openStore } from '../src/store/open.ts'
import { seed } from './lib/seed.mjs'
import { skip } from '../src/domain/lifecycle.ts'
import { validateCreate } from '../src/domain/subscription-input.ts'
import { withLookups } from '../src/api/kit/lookups.ts'

/** Bytes and write calls of every thread so far, from /proc (Linux only). */
function processIo(): { wchar: number; syscw: number } | undefined {
  try {
    const text = readFileSync('/proc/self/io', 'utf8')
    const field = (name: string): number => Number(new RegExp(`^${name}: (\\d+)`, 'm').exec(text)?.[1])
    return { wchar: field('wchar'), syscw: field('syscw') }
  } catch {
    return undefined
  }
}

const { values } = parseArgs({
  options: {
    units: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '32' },
    grow: { type: 'string', default: '0' },
    dir: { type: 'string' },
    shape: { type: 'string', default: 'patch' },
  },
})
const shape = values.shape
if (shape !== 'patch' && shape !== 'skip' && shape !== 'create') throw new Error(`unknown --shape ${shape}: patch, skip or create`)
const units = Number(values.units)
const batch = Number(values.batch)
const grow = Number(values.grow)

const work = mkdtempSync(join(values.dir ?? tmpdir(), 'replenish-units-'))
const file = join(work, 'units.db')
const options = { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true } as const
await (await openStore(file, options)).close()
const users = seed(file, new Date().toISOString().slice(0, 10))
const lineItems = users.flatMap((u) => u.lineItems)
const store = await openStore(file, options)
try {
  if (grow > 0) {
    const data = JSON.stringify({ object: { padding: 'x'.repeat(850) } })
    for (let done = 0; done < grow; done += 10_000) {
      await store.write(async (tx) => {
        for (let i = done; i < Math.min(grow, done + 10_000); i++) await tx.events.recordJson('subscription.skipped', (i * 7919) % 10_000 + 1, data)
      })
    }
  }
  const today = new Date().toISOString().slice(0, 10)
  const limits = { maxSuccessiveSkips: undefined, maxTotalSkips: undefined }
  let quantity = 1
  // A stride through the rows: random pages, as many customers at once would touch.
  const unit = (i: number): Promise<unknown> => {
    if (shape === 'patch') {
      const id = lineItems[(i * 7919) % lineItems.length] as number
      return store.write(async (tx) => {
        const item = await tx.subscriptions.lockLineItem(id)
        if (!item) throw new Error('a seeded line item is missing')
        const updated = await tx.subscriptions.updateLineItem(item, item.subscribable_id, (quantity++ % 9) + 1)
        await tx.subscriptions.touch(item.subscription_id)
        await tx.events.recordJson('line_item.updated', item.subscription_id, JSON.stringify(updated))
      })
    }
    const user = users[(i * 7919) % users.length] as (typeof users)[number]
    if (shape === 'skip') {
      const id = user.subscriptions[i % user.subscriptions.length] as number
      return store.write(async (tx) => {
        const sub = await tx.subscriptions.lock(id)
        if (!sub) throw new Error('a seeded subscription is missing')
        const transition = skip(sub, today, limits)
        await tx.subscriptions.update(sub, transition.patch)
        const json = (await tx.subscriptions.renderJson(sub.id, true))?.body as string
        await tx.events.recordJson(transition.event, sub.id, json)
      })
    }
    const userId = ((i * 7919) % users.length) + 1
    const attrs = { interval_units: 'month', interval_length: 1, line_items_attributes: [
      { subscribable_id: (i % 50) + 1, quantity: 2 }, { subscribable_id: ((i + 1) % 50) + 1, quantity: 1 }] }
    return store.write(async (tx) => {
      const input = await withLookups(tx, (lookups) => validateCreate(attrs, { today, userId, lookups }, 'USD'))
      const id = await tx.subscriptions.create(userId, input, today)
      const json = (await tx.subscriptions.renderJson(id, false))?.body as string
      await tx.events.recordJson('subscription.created', id, json)
    })
  }
  const io0 = processIo()
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  for (let i = 0; i < units;) {
    const pending: Promise<unknown>[] = []
    for (let k = 0; k < batch && i < units; k++, i++) pending.push(unit(i))
    await Promise.all(pending)
  }
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  const io = processIo()
  process.stdout.write(`${units} ${shape} units in batches of ${batch}${grow ? `, after ${grow} events` : ''}: ` +
    `${((cpu.user + cpu.system) / units).toFixed(1)} µs CPU and ${((wall * 1000) / units).toFixed(1)} µs wall per unit` +
    (io && io0 ? `; ${((io.wchar - io0.wchar) / units / 1024).toFixed(2)} KiB written and ${((io.syscw - io0.syscw) / units).toFixed(2)} write calls per unit (all threads)` : '') + '\n')
} finally {
  await store.stopBackground()
  await store.close()
  rmSync(work, { recursive: true, force: true })
}
