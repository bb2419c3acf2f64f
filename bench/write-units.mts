/**
 * The store's write path without HTTP: PATCH-shaped units of writes (find the line item, update
 * it, touch its subscription, record the event) in batches, on the bench's seeded database with
 * synchronous=FULL and the checkpoint thread, as `serve` runs them. Prints the CPU time per unit
 * (every thread: the fdatasyncs and the checkpoint thread included) and the wall time per unit.
 * Used to measure one change of the write path at a time, far more steadily than the HTTP bench.
 *
 *   node --import tsx bench/write-units.mts                  # 200,000 units, batches of 32
 *   node --import tsx bench/write-units.mts --grow 1000000   # with a million ~900-byte events first
 *
 * Pin it to one core (`taskset -c 0`) to compare with the bench's server.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { openStore } from '../src/store/store.ts'
import { seed } from './lib/seed.mjs'

const { values } = parseArgs({
  options: {
    units: { type: 'string', default: '200000' },
    batch: { type: 'string', default: '32' },
    grow: { type: 'string', default: '0' },
    dir: { type: 'string' },
  },
})
const units = Number(values.units)
const batch = Number(values.batch)
const grow = Number(values.grow)

const work = mkdtempSync(join(values.dir ?? tmpdir(), 'replenish-units-'))
const file = join(work, 'units.db')
const options = { synchronous: 'FULL', createDirectory: false, backgroundCheckpoints: true } as const
openStore(file, options).close()
const users = seed(file, new Date().toISOString().slice(0, 10))
const lineItems = users.flatMap((u) => u.lineItems)
const store = openStore(file, options)
try {
  if (grow > 0) {
    const data = JSON.stringify({ object: { padding: 'x'.repeat(850) } })
    for (let done = 0; done < grow; done += 10_000) {
      await store.write(() => {
        for (let i = done; i < Math.min(grow, done + 10_000); i++) store.events.recordJson('subscription.skipped', (i * 7919) % 10_000 + 1, data)
      })
    }
  }
  const subs = store.subscriptions
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  let quantity = 1
  for (let i = 0; i < units;) {
    const pending: Promise<unknown>[] = []
    for (let k = 0; k < batch && i < units; k++, i++) {
      // A stride through the items: random pages, as many customers at once would touch.
      const item = subs.findLineItem(lineItems[(i * 7919) % lineItems.length] as number)
      if (!item) throw new Error('a seeded line item is missing')
      pending.push(store.write(() => {
        const updated = subs.updateLineItem(item, item.subscribable_id, (quantity++ % 9) + 1)
        subs.touch(item.subscription_id)
        store.events.record('line_item.updated', item.subscription_id, updated)
      }))
    }
    await Promise.all(pending)
  }
  const wall = performance.now() - t0
  const cpu = process.cpuUsage(cpu0)
  process.stdout.write(`${units} units in batches of ${batch}${grow ? `, after ${grow} events` : ''}: ` +
    `${((cpu.user + cpu.system) / units).toFixed(1)} µs CPU and ${((wall * 1000) / units).toFixed(1)} µs wall per unit\n`)
} finally {
  await store.stopBackground()
  store.close()
  rmSync(work, { recursive: true, force: true })
}
