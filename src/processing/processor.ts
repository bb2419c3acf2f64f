import type { Clock } from '../clock.ts'
import { decideEnded } from '../domain/processing.ts'
import type { Store } from '../store/store.ts'
import { applyChange, dueWalk, processBatch, type Counts } from './batch.ts'
import { retryDue } from './installment-actions.ts'
import { acquireLease, newHolder, releaseLease, renewLease } from './lease.ts'
import { LockSharing, RowBudget } from './pacing.ts'

/**
 * One processor run (C9): every due subscription, then subscriptions whose end date passed,
 * then retries whose time came. Work goes in batches; each batch is one unit of writes
 * (one transaction) that also renews the lease, so a crash loses at most the batch in flight,
 * which the next run does again, and a unique (subscription, due date) key makes a repeat
 * impossible even without the lease.
 */
export interface ProcessOptions {
  /** The run's "today" and "now" are read from it once, at the start. */
  readonly clock: Clock
  readonly batchSize?: number | undefined
  /** Wait for another processor's run to end (the CLI), or give up at once (a schedule tick). */
  readonly waitForLease?: boolean | undefined
  readonly onWait?: ((holder: string) => void) | undefined
  /** Stops the run at the next batch boundary (serve shutting down). */
  readonly signal?: AbortSignal | undefined
  readonly onProgress?: ((p: Progress) => void) | undefined
}

export interface Progress {
  /** Due subscriptions looked at so far, of `total` due when the run began. */
  readonly examined: number
  readonly total: number
  readonly elapsedMs: number
  /** The walk through the due subscriptions has ended: this is its last report. */
  readonly done: boolean
}

export interface RunSummary {
  /** False when another processor held the lease and we did not wait. */
  readonly ran: boolean
  readonly asOf: string
  /** Due subscriptions looked at (some have nothing to deliver and are left as they are). */
  readonly examined: number
  /** Subscriptions acted on: an installment made, ended, canceled or resumed. */
  readonly processed: number
  readonly installments: number
  readonly ended: number
  readonly canceled: number
  readonly resumed: number
  readonly retriesDue: number
  readonly abandoned: number
  readonly completed: boolean
  readonly elapsedMs: number
}

/**
 * Two thousand per transaction at most: measured best for a million (fewer commits) at a flat
 * ~120 MB. Fewer while another process writes to the file (pacing.ts).
 */
export const DEFAULT_BATCH = 2000
/** WAL pages between checkpoints during a run (128 MB): each page goes to the database once, not once per batch. */
const RUN_CHECKPOINT_PAGES = 32_000

export async function runProcessor(store: Store, options: ProcessOptions): Promise<RunSummary> {
  const started = performance.now()
  const today = options.clock.today()
  const nowIso = options.clock.now().toISOString()
  const batch = options.batchSize ?? DEFAULT_BATCH
  const counts: Counts = { processed: 0, installments: 0, ended: 0, canceled: 0, resumed: 0, retriesDue: 0, abandoned: 0 }
  let examined = 0
  const summary = (ran: boolean, completed: boolean): RunSummary => ({ ran, asOf: today, examined, ...counts, completed, elapsedMs: performance.now() - started })
  const holder = newHolder()
  if (!(await acquireLease(store, holder, { wait: options.waitForLease ?? false, signal: options.signal, onWait: options.onWait }))) {
    return summary(false, false)
  }
  const stopped = (): boolean => options.signal?.aborted === true
  const checkpointPages = store.installments.checkpointEvery(RUN_CHECKPOINT_PAGES)
  try {
    const runId = await store.write(() => store.leases.startRun(holder, today, new Date().toISOString()))

    const total = store.installments.countDue(today)
    const walk = dueWalk(store, today, total, batch)
    // Each phase sizes its units by its own rows' cost; all leave the lock free between units
    // while another process writes (pacing.ts).
    const sharing = new LockSharing(() => store.dataVersion())
    // Floors that skips left behind and that have come due are lifted first, in batches, so that
    // the walk through the index and every later /readyz step over none of them. Each batch reads
    // at most the due rows (few, or the walk would go by id) besides the floors it lifts; a run
    // that walks by id does not need it, and the next run lifts them.
    const lifts = new RowBudget(sharing, batch)
    for (let full = walk.byIndex; full && !stopped(); await sharing.pause()) {
      full = await store.write(() => {
        const limit = lifts.begin()
        renewLease(store, holder)
        const n = store.installments.liftDueFloors(today, limit)
        lifts.end(n)
        return n === limit
      })
    }
    const due = new RowBudget(sharing, batch)
    for (let more = true; more && !stopped(); await sharing.pause()) {
      more = await store.write(() => {
        const limit = due.begin()
        renewLease(store, holder)
        const rows = walk.next(limit)
        processBatch(store, rows, today, new Date().toISOString(), counts)
        examined += rows.length
        due.end(rows.length)
        return !walk.done
      })
      options.onProgress?.({ examined, total, elapsedMs: performance.now() - started, done: !more })
    }

    let cursor = { date: '', id: 0 }
    const ending = new RowBudget(sharing, batch)
    for (let full = true; full && !stopped(); await sharing.pause()) {
      full = await store.write(() => {
        const limit = ending.begin()
        renewLease(store, holder)
        const subs = store.installments.endingBatch(today, cursor.date, cursor.id, limit)
        for (const sub of subs) {
          const d = decideEnded(sub, today)
          if (d.kind === 'wait') continue
          counts.processed++
          applyChange(store, sub.id, d, counts)
        }
        const last = subs[subs.length - 1]
        if (last) cursor = { date: last.end_date ?? '', id: last.id }
        ending.end(subs.length)
        return subs.length === limit
      })
    }

    // Retries last, after cancellations have abandoned theirs. Each leaves the retrying state, so
    // the next batch starts from the top again.
    const retries = new RowBudget(sharing, batch)
    for (let full = true; full && !stopped(); await sharing.pause()) {
      full = await store.write(() => {
        const limit = retries.begin()
        renewLease(store, holder)
        const due = store.installments.retriesDue(nowIso, limit)
        const at = new Date().toISOString()
        for (const inst of due) {
          if (retryDue(store, inst, store.subscriptions.find(inst.subscription_id), at) === 'due') counts.retriesDue++
          else counts.abandoned++
        }
        retries.end(due.length)
        return due.length === limit
      })
    }

    if (stopped()) return summary(true, false)
    await store.write(() => {
      renewLease(store, holder)
      store.leases.finishRun(runId, counts.processed, new Date().toISOString())
    })
    return summary(true, true)
  } finally {
    // Cleanup that fails is not worth masking the run's own error: the lease expires by itself.
    try {
      store.installments.checkpointEvery(checkpointPages)
    } catch {
      // The connection is gone; the setting went with it.
    }
    await releaseLease(store, holder).catch(() => undefined)
  }
}
