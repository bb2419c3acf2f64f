import { setTimeout as sleep } from 'node:timers/promises'

/**
 * How long the processor holds the write lock at a time, and how long it leaves it free (issue
 * 15, item 6). A unit of the processor holds SQLite's one write lock from its BEGIN to its
 * COMMIT; `serve` beside it (a cron job's `replenish process` on the same file) waits for the lock
 * on a timer, trying every millisecond or two (writer.ts). So:
 *
 * - a unit takes as many rows as fit its time budget, measured as it goes (rows cost the same
 *   within a phase of the run, and differ between phases, so each phase has its own RowBudget);
 * - while another connection writes to the file (its commits move `store.externalChanges()`,
 *   SQLite's `PRAGMA data_version`), the budget is small and the lock is left free for a moment
 *   after each unit, longer than the waiting server's retry interval, so a waiting request gets
 *   in after at most one short unit.
 *
 * With nobody else writing, units keep the full batch size (the budget only caps a pathological
 * disk) and there is no pause: `npm run bench:process` is unchanged (docs/decisions.md).
 */
export interface PacingOptions {
  /** Time a unit may take while another connection writes. */
  readonly sharedBudgetMs: number
  /** Time a unit may take otherwise. */
  readonly quietBudgetMs: number
  /** The lock is left free this long after each unit while another connection writes. */
  readonly gapMs: number
  /** Another connection counts as writing for this long after its last commit seen. */
  readonly windowMs: number
}

export const PACING: PacingOptions = { sharedBudgetMs: 8, quietBudgetMs: 40, gapMs: 4, windowMs: 1_000 }

/** Fewest rows a unit takes however slow they are, so a run always moves on. */
const MIN_ROWS = 10
/** Rows of a unit whose rows have not been timed yet while the lock is shared. */
const FIRST_SHARED_ROWS = 100

/** Whether another connection has been writing to the database lately, and the pause that leaves it room. */
export class LockSharing {
  /** `store.externalChanges`: moves whenever another connection commits. */
  private readonly externalChanges: () => number
  private readonly options: PacingOptions
  private readonly now: () => number
  private version: number
  private sharedUntil = Number.NEGATIVE_INFINITY

  constructor(externalChanges: () => number, options: PacingOptions = PACING, now: () => number = () => performance.now()) {
    this.externalChanges = externalChanges
    this.options = options
    this.now = now
    this.version = externalChanges()
  }

  get budgetMs(): number {
    return this.shared ? this.options.sharedBudgetMs : this.options.quietBudgetMs
  }

  get shared(): boolean {
    return this.now() < this.sharedUntil
  }

  /** Between two units (no transaction open): notices another writer's commits, then leaves it the lock a moment. */
  async pause(): Promise<void> {
    const version = this.externalChanges()
    if (version !== this.version) {
      this.version = version
      this.sharedUntil = this.now() + this.options.windowMs
    }
    if (this.shared) await sleep(this.options.gapMs)
  }
}

/** Rows per unit for one phase of a run: as many as its time budget holds, at most `maxRows`. */
export class RowBudget {
  private readonly sharing: LockSharing
  private readonly maxRows: number
  private readonly now: () => number
  private msPerRow: number | undefined
  private started = 0

  constructor(sharing: LockSharing, maxRows: number, now: () => number = () => performance.now()) {
    this.sharing = sharing
    this.maxRows = maxRows
    this.now = now
  }

  /** Called first thing in a unit: the rows it may take. */
  begin(): number {
    this.started = this.now()
    if (this.msPerRow === undefined) return this.sharing.shared ? Math.min(FIRST_SHARED_ROWS, this.maxRows) : this.maxRows
    const fit = Math.floor(this.sharing.budgetMs / this.msPerRow)
    return Math.max(Math.min(MIN_ROWS, this.maxRows), Math.min(this.maxRows, fit))
  }

  /** Called last thing in a unit, with the rows it took. */
  end(rows: number): void {
    if (rows <= 0) return
    const perRow = Math.max(this.now() - this.started, 0.001) / rows
    // Smoothed: one slow unit (a page fault, a collection) does not halve the next.
    this.msPerRow = this.msPerRow === undefined ? perRow : 0.7 * this.msPerRow + 0.3 * perRow
  }
}
