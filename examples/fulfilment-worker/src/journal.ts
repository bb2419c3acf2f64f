import { JsonLines } from './jsonl.ts'
import type { Attempt, Outcome } from './types.ts'

/**
 * Where a try at an installment has got to:
 * - `received`: its webhook is on disk, so it may be acknowledged; the order is still to place.
 * - `ordered`: the shop answered (an order, or why not); the outcome is still to report.
 * - `reported`: replenish recorded the outcome (or refused it, and a person must look).
 */
export type Step = 'received' | 'ordered' | 'reported'

export interface Entry extends Attempt {
  readonly step: Step
  readonly outcome?: Outcome
  /** Replenish's refusal of the outcome (its status and errors), when it refused it. */
  readonly refused?: unknown
  readonly at: string
}

/** Tries reported longer ago than this are forgotten when the worker starts (the file stays small). */
const FORGET_AFTER_DAYS = 30

/**
 * What the worker has seen and done, one line per step, in a small file: it is how a restart
 * (or a kill -9) picks up where the worker stopped without losing a webhook or repeating an order.
 * The newest line of a key is its step. On start the file is rewritten with one line per key,
 * leaving out tries reported more than 30 days ago; replenish stops retrying a delivery after 3
 * days, so only a redelivery asked for by hand could bring one back after that, and the shop's
 * own deduplication on the key (shop.ts) still holds then.
 */
export class Journal {
  private readonly entries = new Map<string, Entry>()
  /** Each key's last append: a duplicate delivery waits for it before it is acknowledged. */
  private readonly written = new Map<string, Promise<void>>()
  private readonly log: JsonLines<Entry>

  private constructor(log: JsonLines<Entry>, entries: Entry[]) {
    this.log = log
    for (const e of entries) this.entries.set(e.key, e)
  }

  static async open(path: string, now = Date.now()): Promise<Journal> {
    const { log, records } = await JsonLines.open<Entry>(path, (lines) => {
      const latest = new Map<string, Entry>()
      for (const e of lines) latest.set(e.key, e)
      const cutoff = now - FORGET_AFTER_DAYS * 86_400_000
      return [...latest.values()].filter((e) => e.step !== 'reported' || Date.parse(e.at) >= cutoff)
    })
    return new Journal(log, records)
  }

  get(key: string): Entry | undefined {
    return this.entries.get(key)
  }

  /** The tries at `step`, oldest first. */
  at(step: Step): Entry[] {
    return [...this.entries.values()].filter((e) => e.step === step)
  }

  /**
   * Records a try's new step. Memory changes at once (a duplicate arriving meanwhile sees it);
   * the promise resolves once the line is on disk. A line that cannot be written rejects: the
   * caller must stop the worker, since memory then holds what the disk may not.
   */
  record(entry: Omit<Entry, 'at'>): Promise<void> {
    const full: Entry = { ...entry, at: new Date().toISOString() }
    this.entries.set(full.key, full)
    const written = this.log.append(full)
    this.written.set(full.key, written)
    return written
  }

  /** Resolves once everything recorded for `key` so far is on disk. */
  durable(key: string): Promise<void> {
    return this.written.get(key) ?? Promise.resolve()
  }
}
