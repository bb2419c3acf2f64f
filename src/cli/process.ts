import type { Config } from '../config.ts'
import { serviceClock } from '../clock.ts'
import { isDate } from '../domain/dates.ts'
import { runProcessor, type Progress } from '../processing/processor.ts'
import { openConfiguredStore } from './app.ts'
import { UsageError } from './commands.ts'

type Io = { out: (l: string) => void; err: (l: string) => void }

const PROGRESS_EVERY_MS = 1000

/**
 * `replenish process [--as-of YYYY-MM-DD]`: one processor run, as of that date (default the
 * service clock's today), then exit 0. Waits when another processor holds the lease, so the
 * run has happened by the time the command returns. Progress goes to stderr, the summary to
 * stdout.
 */
export async function processCommand(config: Config, asOf: string | undefined, io: Io): Promise<number> {
  if (asOf !== undefined && !isDate(asOf)) throw new UsageError(`--as-of: expected a real date as YYYY-MM-DD, got ${JSON.stringify(asOf)}`)
  // --as-of moves the whole service clock for this run, exactly as REPLENISH_TODAY would.
  const clock = serviceClock(config.timeZone, asOf ?? config.today)
  const store = openConfiguredStore(config)
  try {
    const s = await runProcessor(store, {
      clock,
      waitForLease: true,
      onWait: (holder) => io.err(`replenish: another processor is running (${holder}); waiting for it to finish`),
      onProgress: progressPrinter(io.err),
    })
    io.out(
      `processed ${s.processed} subscriptions as of ${s.asOf} in ${(s.elapsedMs / 1000).toFixed(1)} s: ` +
        `${s.installments} installments, ${s.ended} ended, ${s.canceled} canceled, ${s.resumed} resumed; ` +
        `${s.retriesDue} retries due, ${s.abandoned} abandoned`,
    )
  } finally {
    store.close()
  }
  return 0
}

/** `processing 12000/1000000 (1.2%), 40312/s, ETA 24 s`: the first batch at once, then once a second, then the last. */
export function progressPrinter(err: (line: string) => void): (p: Progress) => void {
  let lastAt = Number.NEGATIVE_INFINITY
  return (p) => {
    const done = p.examined >= p.total
    if (!done && p.elapsedMs - lastAt < PROGRESS_EVERY_MS) return
    lastAt = p.elapsedMs
    err(formatProgress(p))
  }
}

export function formatProgress(p: Progress): string {
  const seconds = p.elapsedMs / 1000
  const rate = seconds > 0 ? p.examined / seconds : 0
  const percent = p.total > 0 ? Math.min(100, (p.examined / p.total) * 100) : 100
  const left = Math.max(0, p.total - p.examined)
  const eta = left === 0 ? '0 s' : rate > 0 ? `${Math.ceil(left / rate)} s` : 'unknown'
  return `processing ${p.examined}/${p.total} (${percent.toFixed(1)}%), ${Math.round(rate)}/s, ETA ${eta}`
}
