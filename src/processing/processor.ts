import { setTimeout as sleep } from 'node:timers/promises'
import type { Clock } from '../clock.ts'
import { PROCESSOR_UNIT, type Store, type Unit } from '../store/api.ts'
import { addCounts, dueWalk, endBatch, indexWalkMax, noCounts, processBatch, retryBatch } from './batch.ts'
import { acquireLease, newHolder, releaseLease, renewLease } from './lease.ts'
import { LockSharing, RowBudget } from './pacing.ts'
import { announceUpcoming } from './upcoming.ts'
import { upcomingHorizon } from '../domain/upcoming.ts'

/**
 * One processor run (C9): every due subscription, then subscriptions whose end date passed,
 * then retries whose time came. Work goes in batches; each batch is one unit of writes
 * (one transaction) that also renews the lease, so a crash loses at most the batch in flight,
 * which the next run does again, and a unique (subscription, due date) key makes a repeat
 * impossible even without the lease. What a unit counts, and where a walk stands after it, is
 * applied once the unit has committed: a unit rolled back (or run again by a backend that
 * retries on a conflict) counts nothing and moves no cursor. Only the pacing (pacing.ts) is
 * measured from inside a unit: it times the unit itself.
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
  /**
   * C17: subscriptions whose next delivery is at most this many days away get their
   * `subscription.upcoming` event, after everything else (REPLENISH_UPCOMING_DAYS; 0, the
   * default here, turns it off: the CLI and serve pass the configured value).
   */
  readonly upcomingDays?: number | undefined
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
  /** Due subscriptions when the run began (0 when it did not run). */
  readonly total: number
  /** Subscriptions acted on: an installment made, ended, canceled or resumed. */
  readonly processed: number
  readonly installments: number
  readonly ended: number
  readonly canceled: number
  readonly resumed: number
  readonly retriesDue: number
  readonly abandoned: number
  /** Subscriptions told of their next delivery (C17): as the walk moved them, and in the last phase. */
  readonly upcoming: number
  readonly completed: boolean
  readonly elapsedMs: number
}

/**
 * Two thousand per transaction at most: measured best for a million (fewer commits) at a flat
 * ~120 MB. Fewer while another process writes to the file (pacing.ts).
 */
export const DEFAULT_BATCH = 2000
/** PostgreSQL: passes after the walk for rows a request held while it passed, and the pause before each but the first. */
const SWEEPS = 3
const SWEEP_PAUSE_MS = 50

export async function runProcessor(store: Store, options: ProcessOptions): Promise<RunSummary> {
  const started = performance.now()
  const today = options.clock.today()
  const nowIso = options.clock.now().toISOString()
  const batch = options.batchSize ?? DEFAULT_BATCH
  const counts = noCounts()
  let examined = 0
  let total = 0
  const summary = (ran: boolean, completed: boolean): RunSummary => ({ ran, asOf: today, examined, total, ...counts, completed, elapsedMs: performance.now() - started })
  const holder = newHolder()
  if (!(await acquireLease(store, holder, { wait: options.waitForLease ?? false, signal: options.signal, onWait: options.onWait }))) {
    return summary(false, false)
  }
  const stopped = (): boolean => options.signal?.aborted === true
  // Every event of the run says the processor made it (C18).
  const write = <T>(unit: Unit<T>): Promise<T> => store.write(unit, PROCESSOR_UNIT)
  try {
    // A long batch job: SQLite checkpoints its WAL less often meanwhile, so each page goes to the
    // database once, not once per batch.
    return await store.bulk(async () => {
      const runId = await write((tx) => tx.leases.startRun(holder, today, new Date().toISOString()))

      // Each phase sizes its units by its own rows' cost; all leave the lock free between units
      // while another process writes (pacing.ts).
      const sharing = new LockSharing(() => store.externalChanges())
      // Counted from the due index alone (the floors up to today), which counts too the rows a skip
      // has moved past today whose floors trail behind. Few due (the walk then goes through the
      // index), those floors are lifted to their rows' dates first, in batches, so that the walk
      // and every later /readyz step over none of them, and the count is made again, exact. Many
      // due (the walk goes by id), the count stays an upper bound by those few rows: exact, it
      // would read every due row once more (1.2 s for a million), and the next run lifts them.
      total = await store.installments.countDue(today)
      if (total <= indexWalkMax(batch)) {
        const lifts = new RowBudget(sharing, batch)
        let lifted = 0
        for (let full = true; full && !stopped(); await sharing.pause()) {
          const unit = await write(async (tx) => {
            const limit = lifts.begin()
            await renewLease(tx, holder)
            const n = await tx.installments.liftDueFloors(today, limit)
            lifts.end(n)
            return { n, full: n === limit }
          })
          lifted += unit.n
          full = unit.full
        }
        if (lifted > 0) total = await store.installments.countDue(today)
      }
      const walk = await dueWalk(store, today, total, batch)
      // C17's window: a subscription the walk moves into it is told of its date in the same unit.
      const days = options.upcomingDays ?? 0
      const horizon = days > 0 ? upcomingHorizon(today, days) : undefined
      const due = new RowBudget(sharing, batch)
      for (let more = true; more && !stopped(); await sharing.pause()) {
        const unit = await write(async (tx) => {
          const limit = due.begin()
          await renewLease(tx, holder)
          const { rows, next } = await walk.read(tx, limit)
          const made = await processBatch(tx, rows, today, new Date().toISOString(), horizon)
          due.end(rows.length)
          return { next, examined: rows.length, made }
        })
        walk.advance(unit.next)
        addCounts(counts, unit.made)
        examined += unit.examined
        more = !walk.done
        options.onProgress?.({ examined, total, elapsedMs: performance.now() - started, done: !more })
      }

      // A server database's walk steps over rows a request holds at that moment (SKIP LOCKED, so
      // the processor never queues behind customers). A few more passes through the date index
      // pick up the ones such a request has let go of since, so a run leaves nothing due behind
      // that was only briefly held (C9); a row held longer is the next run's. Only rows with
      // something to deliver count: the others stay due by design and were examined already.
      // SQLite's walk never steps over a row.
      for (let pass = 0; store.kind === 'postgres' && pass < SWEEPS && !stopped(); pass++) {
        if (pass > 0) await sleep(SWEEP_PAUSE_MS)
        let at = { date: '', id: 0 }
        let found = 0
        for (let full = true; full && !stopped(); await sharing.pause()) {
          const unit = await write(async (tx) => {
            const limit = due.begin()
            await renewLease(tx, holder)
            const read = await tx.installments.dueByDate(today, at.date, at.id, limit)
            const rows = read.filter((r) => r.has_items)
            const made = await processBatch(tx, rows, today, new Date().toISOString(), horizon)
            due.end(read.length)
            const last = read[read.length - 1]
            return { after: last ? { date: last.due_floor ?? '', id: last.id } : at, full: read.length === limit, examined: rows.length, made }
          })
          at = unit.after
          addCounts(counts, unit.made)
          examined += unit.examined
          found += unit.examined
          full = unit.full
        }
        if (found === 0) break
      }

      let cursor = { date: '', id: 0 }
      const ending = new RowBudget(sharing, batch)
      for (let full = true; full && !stopped(); await sharing.pause()) {
        const unit = await write(async (tx) => {
          const limit = ending.begin()
          await renewLease(tx, holder)
          const subs = await tx.installments.endingBatch(today, cursor.date, cursor.id, limit)
          const made = await endBatch(tx, subs, today)
          ending.end(subs.length)
          const last = subs[subs.length - 1]
          return { after: last ? { date: last.end_date ?? '', id: last.id } : cursor, full: subs.length === limit, made }
        })
        cursor = unit.after
        addCounts(counts, unit.made)
        full = unit.full
      }

      // Retries last, after cancellations have abandoned theirs. Each leaves the retrying state, so
      // the next batch starts from the top again.
      const retries = new RowBudget(sharing, batch)
      for (let full = true; full && !stopped(); await sharing.pause()) {
        const unit = await write(async (tx) => {
          const limit = retries.begin()
          await renewLease(tx, holder)
          const due = await tx.installments.retriesDue(nowIso, limit)
          const made = await retryBatch(tx, due, new Date().toISOString())
          retries.end(due.length)
          return { full: due.length === limit, made }
        })
        addCounts(counts, unit.made)
        full = unit.full
      }

      // Last, so that the dates this run moved are the ones told of (C17).
      counts.upcoming += await announceUpcoming(store, {
        today, days, batch, sharing, stopped, inUnit: (tx) => renewLease(tx, holder),
      })

      if (stopped()) return summary(true, false)
      await write(async (tx) => {
        await renewLease(tx, holder)
        await tx.leases.finishRun(runId, counts.processed, new Date().toISOString())
      })
      return summary(true, true)
    })
  } finally {
    // Cleanup that fails is not worth masking the run's own error: the lease expires by itself.
    await releaseLease(store, holder).catch(() => undefined)
  }
}
