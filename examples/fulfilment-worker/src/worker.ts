import type { IncomingMessage, ServerResponse } from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Journal, Entry } from './journal.ts'
import { MAX_ENTRIES, type OutcomeEntry, type OutcomeResult } from './replenish.ts'
import type { Shop } from './shop.ts'
import { verifyReplenishSignature } from './signature.ts'
import { attemptOf, type Installment } from './types.ts'

/** The events that ask the shop for an order: a new installment, and a retry of a failed one. */
const ORDER_EVENTS = new Set(['installment.created', 'installment.retry_due'])
/** replenish's events are a few KiB; anything much larger is not one. */
const MAX_BODY_BYTES = 1_048_576
/** How long to wait before asking again a shop or a replenish that did not answer. */
const RETRY_MS = 1000

export interface WorkerOptions {
  /** The endpoint's signing secret (whsec_…), shown when it was registered. */
  readonly secret: string
  readonly journal: Journal
  readonly shop: Shop
  readonly report: (entries: readonly OutcomeEntry[]) => Promise<OutcomeResult[]>
  readonly log: (line: string) => void
  /** Called when the journal cannot be written: the worker must stop (see Journal.record). */
  readonly fatal: (err: unknown) => never
}

/**
 * The loop every shop writes, in three steps, each recorded in the journal before the next:
 *
 *   webhook ──▶ received ──▶ order placed in the shop ──▶ ordered ──▶ outcomes reported ──▶ reported
 *
 * 1. A delivery is verified, and its try recorded on disk, before it is answered 2xx: once
 *    replenish hears 2xx it does not send it again, so what it was told must not be lost.
 * 2. One try at a time is placed in the shop, under the try's key (the shop places one order per key).
 * 3. Outcomes go to replenish in batches, as many as are waiting, with an Idempotency-Key.
 *
 * After a crash, the journal says which step each try had reached, and the loops go on from
 * there: a try `received` is placed (again: the shop answers what it did the first time), one
 * `ordered` is reported (again: replenish ignores an identical outcome).
 */
export function startWorker(options: WorkerOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const { secret, journal, shop, report, log, fatal } = options
  const ordering = wakeable()
  const reporting = wakeable()

  async function receive(installment: Installment): Promise<void> {
    const attempt = attemptOf(installment)
    // Seen before (a retry of a delivery whose 2xx was lost, a redelivery, an old event arriving
    // late): acknowledge it once what was recorded for it is on disk, and do nothing else.
    if (journal.get(attempt.key) === undefined) {
      void journal.record({ ...attempt, step: 'received' }).catch(fatal)
      ordering.wake()
    }
    await journal.durable(attempt.key)
  }

  async function placeOrders(): Promise<never> {
    for (;;) {
      const next = journal.at('received')[0]
      if (next === undefined) {
        await ordering.next()
        continue
      }
      let outcome
      try {
        outcome = await shop.placeOrder(next)
      } catch (err) {
        log(`the shop did not answer for ${next.key}: ${(err as Error).message}; trying again in ${RETRY_MS} ms`)
        await sleep(RETRY_MS)
        continue
      }
      log(`${next.key}: ${outcome.result}${outcome.order_reference ? ` (order ${outcome.order_reference})` : ''}`)
      await journal.record({ ...next, step: 'ordered', outcome }).catch(fatal)
      reporting.wake()
    }
  }

  async function reportOutcomes(): Promise<never> {
    for (;;) {
      const batch = journal.at('ordered').slice(0, MAX_ENTRIES)
      if (batch.length === 0) {
        await reporting.next()
        continue
      }
      let results: OutcomeResult[]
      try {
        results = await report(batch.map(entryOf))
      } catch (err) {
        log(`could not report ${batch.length} outcomes: ${(err as Error).message}; trying again in ${RETRY_MS} ms`)
        await sleep(RETRY_MS)
        continue
      }
      const written = batch.map((entry, i) => {
        const result = results[i]
        if (result?.status === 200) return journal.record({ ...entry, step: 'reported' })
        // 422: the installment no longer takes this outcome (abandoned because its subscription
        // was canceled, or fulfilled under another order). Sending it again will not change
        // that: a person must look, and perhaps cancel the order in the shop.
        log(`replenish refused the outcome of ${entry.key}: ${JSON.stringify(result)}`)
        return journal.record({ ...entry, step: 'reported', refused: result ?? 'no answer for this entry' })
      })
      await Promise.all(written).catch(fatal)
      log(`reported ${batch.length} outcome${batch.length === 1 ? '' : 's'}`)
    }
  }

  void placeOrders()
  void reportOutcomes()

  // The HTTP side: a POST from replenish, verified with the endpoint's secret.
  return (req, res) => {
    if (req.method !== 'POST') return void res.writeHead(405, { allow: 'POST' }).end()
    const chunks: Buffer[] = []
    let size = 0
    req.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_BODY_BYTES) req.destroy()
      else chunks.push(chunk)
    })
    req.on('end', () => {
      const raw = Buffer.concat(chunks)
      // Before parsing: the signature is over the bytes as sent.
      if (!verifyReplenishSignature(raw, req.headers['replenish-signature'] as string | undefined, secret)) {
        return void res.writeHead(400).end('bad signature') // replenish retries; check the secret
      }
      const event = parseEvent(raw)
      if (event === undefined) return void res.writeHead(400).end('not an event')
      if (!ORDER_EVENTS.has(event.type)) return void res.writeHead(204).end() // not ours: acknowledged, ignored
      receive(event.data.object).then(
        () => res.writeHead(204).end(),
        () => res.writeHead(500).end(), // not recorded: not acknowledged, so replenish sends it again
      )
    })
  }
}

function parseEvent(raw: Buffer): { type: string; data: { object: Installment } } | undefined {
  try {
    return JSON.parse(raw.toString('utf8')) as { type: string; data: { object: Installment } }
  } catch {
    return undefined
  }
}

function entryOf(entry: Entry): OutcomeEntry {
  const outcome = entry.outcome as NonNullable<Entry['outcome']>
  return { installment_id: entry.installment.id, ...outcome }
}

/** A loop's pause until there is work: `next()` resolves at the next `wake()` (or at once if one came since). */
function wakeable(): { next: () => Promise<void>; wake: () => void } {
  let pending = false
  let resolve: (() => void) | undefined
  return {
    next: () => {
      if (pending) {
        pending = false
        return Promise.resolve()
      }
      return new Promise<void>((r) => (resolve = r))
    },
    wake: () => {
      if (resolve) {
        const r = resolve
        resolve = undefined
        r()
      } else {
        pending = true
      }
    },
  }
}
