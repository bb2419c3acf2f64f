import type { Config } from '../config.ts'
import { serviceClock } from '../clock.ts'
import { isDate } from '../domain/dates.ts'
import { runProcessor, type Progress, type RunSummary } from '../processing/processor.ts'
import { openExistingStore, UsageError } from './commands.ts'

type Io = {
  out: (l: string) => void
  err: (l: string) => void
  /** Resolves when the process is asked to stop (SIGINT: Ctrl-C, or SIGTERM); never, when not given. */
  stopSignal?: Promise<string>
}

const PROGRESS_EVERY_MS = 1000
/** The status of a run stopped by SIGINT or SIGTERM before its end (128 + SIGINT's 2, as a shell reports Ctrl-C). */
export const INTERRUPTED = 130

/**
 * `replenish process [--as-of YYYY-MM-DD]`: one processor run, as of that date (default the
 * service clock's today), then exit 0. Waits when another processor holds the lease, so the
 * run has happened by the time the command returns. Progress goes to stderr, the summary to
 * stdout. SIGINT (Ctrl-C) or SIGTERM ends the run once the batch in hand has committed: the
 * summary of what was done, `interrupted after N of M; run it again to go on` on stderr, and
 * status 130 (INTERRUPTED). What is left is due still, so the next run does it; nothing is done
 * twice (C9).
 */
export async function processCommand(config: Config, asOf: string | undefined, io: Io): Promise<number> {
  if (asOf !== undefined && !isDate(asOf)) throw new UsageError(`--as-of: expected a real date as YYYY-MM-DD, got ${JSON.stringify(asOf)}`)
  // --as-of moves the whole service clock for this run, exactly as REPLENISH_TODAY would.
  const clock = serviceClock(config.timeZone, asOf ?? config.today)
  const store = await openExistingStore(config)
  const stop = new AbortController()
  void io.stopSignal?.then(() => stop.abort())
  try {
    const s = await runProcessor(store, {
      clock,
      waitForLease: true,
      signal: stop.signal,
      onWait: (holder) => io.err(`replenish: another processor is running (${holder}); waiting for it to finish`),
      onProgress: progressPrinter(io.err),
      upcomingDays: config.upcomingDays,
    })
    if (!s.ran) {
      io.err('replenish: interrupted while waiting for the other processor, before this run began; run it again to go on')
      return INTERRUPTED
    }
    io.out(formatSummary(s))
    if (!s.completed) {
      io.err(`replenish: interrupted after ${s.examined} of ${s.total}; run it again to go on`)
      return INTERRUPTED
    }
  } finally {
    await store.close()
  }
  return 0
}

/**
 * `examined 12000/1000000 due (1.2%), 40312/s, ETA 24 s`: the first unit at once, then at most
 * once a second, then the walk's last report, once. The walk may look at its last rows before it
 * knows it is done (walking by id, the rest of the ids hold none): only `done` ends it.
 */
export function progressPrinter(err: (line: string) => void): (p: Progress) => void {
  let lastAt = Number.NEGATIVE_INFINITY
  return (p) => {
    if (!p.done && p.elapsedMs - lastAt < PROGRESS_EVERY_MS) return
    lastAt = p.elapsedMs
    err(formatProgress(p))
  }
}

/** Progress counts due subscriptions looked at; the summary counts what was done to them. */
export function formatProgress(p: Progress): string {
  const seconds = p.elapsedMs / 1000
  const rate = seconds > 0 ? p.examined / seconds : 0
  const percent = p.total > 0 ? Math.min(100, (p.examined / p.total) * 100) : 100
  const left = Math.max(0, p.total - p.examined)
  const eta = left === 0 ? '0 s' : rate > 0 ? `${Math.ceil(left / rate)} s` : 'unknown'
  return `examined ${p.examined}/${p.total} due (${percent.toFixed(1)}%), ${Math.round(rate)}/s, ETA ${eta}`
}

/**
 * `processed 1 subscription as of 2026-01-20 in 0.0 s (examined 2 due): 1 installment made, …`.
 * Processed: acted on (an installment made, ended, canceled or resumed); a due subscription with
 * nothing to deliver is examined and left as it is.
 */
export function formatSummary(s: RunSummary): string {
  return (
    `processed ${plural(s.processed, 'subscription')} as of ${s.asOf} in ${(s.elapsedMs / 1000).toFixed(1)} s (examined ${s.examined} due): ` +
    `${plural(s.installments, 'installment')} made, ${s.ended} ended, ${s.canceled} canceled, ${s.resumed} resumed; ` +
    `${s.retriesDue} ${s.retriesDue === 1 ? 'retry' : 'retries'} due, ${s.abandoned} abandoned` +
    (s.upcoming > 0 ? `; ${s.upcoming} upcoming ${s.upcoming === 1 ? 'delivery' : 'deliveries'} announced` : '')
  )
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`
}
