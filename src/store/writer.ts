import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { WalSync } from './wal-sync.ts'

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

export interface WriterOptions {
  /** Most units one commit holds; a full batch commits at once. */
  readonly maxBatch: number
  /** Test hook: runs just before COMMIT; throwing there fails the whole batch. */
  readonly beforeCommit?: () => void
  /**
   * Makes a COMMIT durable off the event loop (the connection then runs synchronous=NORMAL);
   * without it a unit settles as soon as its COMMIT returns.
   */
  readonly walSync?: WalSync
  /** Called whenever writes are rolled back, so caches filled from them can forget them. */
  readonly onRollback?: () => void
  /** Called after each successful COMMIT, with no transaction open (background checkpoints). */
  readonly afterCommit?: () => void
}

/** SQLite rolled the shared transaction back by itself (an I/O error, a full disk): its units are lost. */
export class TransactionLost extends Error {
  override readonly name = 'TransactionLost'
}

/**
 * Group commit. Every unit of writes (one request's, or one processor batch's) runs in its own
 * SAVEPOINT inside a shared transaction; a unit that throws rolls back only its savepoint. The
 * transaction commits once the event loop has handled everything that arrived together (a
 * setImmediate: the batch's time window is one turn of the loop, so a lone write waits for
 * nothing) or when the batch is full, so concurrent writers share one fsync. A unit's promise
 * settles only after the COMMIT that holds its writes has returned (and, with a WalSync, after
 * the WAL holding them has reached the disk): no answer goes out before its data is durable, and
 * a failed COMMIT fails every unit of its batch. A failed WAL sync fails its batches and every
 * write after it: what the disk holds is no longer known, and only a restart, which reads the
 * WAL back from the disk, can tell.
 */
export class Writer {
  private open = false
  private running = false
  private waiters: Waiter[] = []
  private broken: Error | undefined
  /** The open batch waits for the running WAL sync to return before it commits. */
  private commitAfterSync = false
  private readonly db: DatabaseSync
  private readonly options: WriterOptions
  // Prepared once: each unit runs two of these, and exec() would parse them every time.
  private readonly begin: StatementSync
  private readonly commit: StatementSync
  private readonly savepoint: StatementSync
  private readonly release: StatementSync
  private readonly rollbackTo: StatementSync

  constructor(db: DatabaseSync, options: WriterOptions) {
    this.db = db
    this.options = options
    this.begin = db.prepare('BEGIN IMMEDIATE')
    this.commit = db.prepare('COMMIT')
    this.savepoint = db.prepare('SAVEPOINT unit')
    this.release = db.prepare('RELEASE unit')
    this.rollbackTo = db.prepare('ROLLBACK TO unit')
  }

  /**
   * Runs `fn` (synchronous: writes after an `await` would escape the unit) as one unit of the
   * open batch. Calling it from inside another unit is a bug: the inner unit could not be
   * rolled back on its own, so it throws at once.
   */
  write<T>(fn: () => T): Promise<T> {
    if (this.running) throw new Error('store.write called inside a unit of writes; do the inner writes in the outer unit')
    if (this.broken) return Promise.reject(this.broken)
    try {
      this.join()
    } catch (err) {
      return Promise.reject(err)
    }
    let out: T
    this.running = true
    try {
      out = fn()
      if (isThenable(out)) throw new TypeError('a unit of writes must be synchronous: it returned a promise')
      this.release.run()
    } catch (err) {
      this.undo()
      return Promise.reject(err)
    } finally {
      this.running = false
    }
    return new Promise<T>((resolve, reject) => {
      this.waiters.push({ resolve: () => resolve(out), reject })
      if (this.waiters.length >= this.options.maxBatch) this.flush()
    })
  }

  /** The failed WAL sync that stopped all writes, if one did. */
  get failure(): Error | undefined {
    return this.broken
  }

  /**
   * Commits what is open now (the scheduled flush, a full batch, or a shutdown). With `now`, the
   * WAL is synced on this thread before returning: for a shutdown or a backup, when nothing else
   * is waiting for the event loop.
   */
  readonly flush = (now = false): void => {
    if (!this.open) return
    if (this.running) throw new Error('cannot commit while a unit of writes is running')
    // While a WAL sync runs the batch stays open and gathers more units, and commits when that
    // sync returns: its units could not be answered sooner anyway (syncs run one at a time), and
    // one COMMIT and one sync then serve them all.
    if (!now && this.options.walSync?.busy && this.waiters.length < this.options.maxBatch) {
      this.commitAfterSync = true
      return
    }
    this.commitAfterSync = false
    if (this.broken) {
      this.abandon()
      this.fail(this.broken)
      return
    }
    this.open = false
    const waiters = this.waiters
    this.waiters = []
    try {
      this.options.beforeCommit?.()
      this.commit.run()
    } catch (err) {
      this.abandon()
      for (const w of waiters) w.reject(err)
      return
    }
    this.options.afterCommit?.()
    const sync = this.options.walSync
    if (!sync) {
      for (const w of waiters) w.resolve()
      return
    }
    if (now) {
      sync.syncNow()
      for (const w of waiters) w.resolve()
      return
    }
    sync.afterCommit((err) => {
      if (err) this.broken ??= err
      for (const w of waiters) {
        if (err) w.reject(err)
        else w.resolve()
      }
      if (this.commitAfterSync) this.flush()
    })
  }

  /** Opens the shared transaction if none is open, then this unit's savepoint inside it. */
  private join(): void {
    if (this.open && !this.db.isTransaction) {
      // Without this, the SAVEPOINT below would start a fresh transaction and the next COMMIT
      // would report the lost units as written.
      this.fail(new TransactionLost('the database rolled back the open batch of writes'))
    }
    if (!this.open) {
      this.begin.run()
      this.open = true
      setImmediate(this.flush)
    }
    this.savepoint.run()
  }

  /** Rolls back a failed unit; if even that fails, the batch's state is unknown and it all goes. */
  private undo(): void {
    this.options.onRollback?.()
    try {
      this.rollbackTo.run()
      this.release.run()
      return
    } catch {
      // The savepoint is gone (the unit ended the transaction, or SQLite rolled it back).
    }
    this.abandon()
    this.fail(new TransactionLost('a unit of writes could not be rolled back alone; its whole batch was rolled back'))
  }

  private abandon(): void {
    this.options.onRollback?.()
    try {
      if (this.db.isTransaction) this.db.exec('ROLLBACK')
    } catch {
      // The connection has already rolled back; the waiters learn of the failure anyway.
    }
  }

  private fail(err: Error): void {
    this.options.onRollback?.()
    this.open = false
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w.reject(err)
  }
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
