/**
 * The fulfilment worker: replenish's installment webhooks in, orders placed in the shop, outcomes
 * reported back (README.md). Run it with `node src/main.ts` (Node 22.18 or later runs TypeScript
 * as it is), configured by the environment:
 *
 *   REPLENISH_URL             where replenish serves, e.g. http://127.0.0.1:8080
 *   REPLENISH_ADMIN_TOKEN     an admin token of scope admin (replenish admin-tokens create)
 *   REPLENISH_WEBHOOK_SECRET  the whsec_… secret shown when this worker's endpoint was registered
 *   PORT, HOST                where to listen for webhooks (3000, 127.0.0.1)
 *   STATE_DIR                 where the journal (and the stand-in shop's orders) live (./state)
 *   STAND_IN_SHOP_LATENCY_MS  how long the stand-in shop takes per order (0)
 */
import { createServer } from 'node:http'
import { join } from 'node:path'
import { Journal } from './journal.ts'
import { reportOutcomes } from './replenish.ts'
import { StandInShop } from './shop.ts'
import { startWorker } from './worker.ts'

function required(name: string): string {
  const value = process.env[name]
  if (value === undefined || value === '') {
    console.error(`fulfilment worker: ${name} is not set (see src/main.ts)`)
    process.exit(2)
  }
  return value
}

const replenishUrl = required('REPLENISH_URL')
const adminToken = required('REPLENISH_ADMIN_TOKEN')
const secret = required('REPLENISH_WEBHOOK_SECRET')
const port = Number(process.env['PORT'] ?? 3000)
const host = process.env['HOST'] ?? '127.0.0.1'
const stateDir = process.env['STATE_DIR'] ?? 'state'

const journal = await Journal.open(join(stateDir, 'journal.jsonl'))
const shop = await StandInShop.open(join(stateDir, 'stand-in-shop.jsonl'), { latencyMs: Number(process.env['STAND_IN_SHOP_LATENCY_MS'] ?? 0) })
const log = (line: string): void => console.log(line)
const pending = journal.at('received').length + journal.at('ordered').length
if (pending > 0) log(`resuming ${pending} tries from the journal`)

const handler = startWorker({
  secret,
  journal,
  shop,
  report: (entries) => reportOutcomes(replenishUrl, adminToken, entries),
  log,
  fatal: (err) => {
    // What was acknowledged must be on disk: with the journal unwritable, stop rather than go on.
    console.error(`fulfilment worker: cannot write the journal: ${(err as Error).message}`)
    process.exit(1)
  },
})

const server = createServer(handler)
server.listen(port, host, () => log(`fulfilment worker listening on http://${host}:${port}`))

// Stopping at any moment is safe (that is the journal's job), so a signal just stops.
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.once(signal, () => process.exit(0))
