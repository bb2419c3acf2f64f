import type { Store } from '../store/api.ts'

/**
 * Event retention (C13): events older than `days` are deleted in the background, in small units
 * (a request waits for one unit at most), never one with a webhook delivery or a mail still
 * pending (a mail is rendered from its event when it is sent, C17). Mails settled before then go
 * too. The first pass runs a minute after start, then one an hour.
 */
export interface Retention {
  start(): void
  stop(): Promise<void>
  /** One pass as of `nowMs`; answers how many events went. */
  runOnce(nowMs: number): Promise<number>
}

export interface RetentionOptions {
  readonly store: Store
  readonly days: number
  readonly log: (entry: object) => void
  readonly batch?: number
}

const DAY_MS = 24 * 60 * 60 * 1000
const FIRST_PASS_MS = 60_000
const EVERY_MS = 60 * 60 * 1000
const BATCH = 2000

export function eventRetention(o: RetentionOptions): Retention {
  let timer: NodeJS.Timeout | undefined
  let running: Promise<unknown> | undefined
  let stopped = false

  const runOnce = async (nowMs: number): Promise<number> => {
    if (o.days <= 0) return 0
    // Every event from the oldest pending delivery's or mail's on is kept: each is made with its event.
    const oldestPending = Math.min(
      (await o.store.deliveries.oldestPendingMs()) ?? Number.POSITIVE_INFINITY,
      (await o.store.emails.oldestPendingMs()) ?? Number.POSITIVE_INFINITY,
    )
    const bound = new Date(Math.min(nowMs - o.days * DAY_MS, oldestPending)).toISOString()
    const batch = o.batch ?? BATCH
    for (let n = batch; n === batch && !stopped; await new Promise((resolve) => setImmediate(resolve))) {
      n = await o.store.write((tx) => tx.emails.pruneBefore(nowMs - o.days * DAY_MS, batch))
    }
    let total = 0
    while (!stopped) {
      const n = await o.store.write((tx) => tx.events.pruneBefore(bound, batch))
      total += n
      if (n < batch) break
      await new Promise((resolve) => setImmediate(resolve))
    }
    if (total > 0) o.log({ time: new Date().toISOString(), level: 'info', msg: 'events pruned', events: total, before: bound })
    return total
  }

  const pass = (): void => {
    if (running || stopped) return
    running = runOnce(Date.now())
      .catch((err: unknown) => o.log({ time: new Date().toISOString(), level: 'error', msg: 'event retention failed', error: err instanceof Error ? err.message : String(err) }))
      .finally(() => {
        running = undefined
      })
  }

  return {
    start() {
      if (o.days <= 0 || timer) return
      timer = setTimeout(() => {
        pass()
        timer = setInterval(pass, EVERY_MS)
        timer.unref()
      }, FIRST_PASS_MS)
      timer.unref()
    },
    async stop() {
      stopped = true
      clearTimeout(timer)
      clearInterval(timer)
      await running
    },
    runOnce,
  }
}
