import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { WalSync } from './wal-sync.ts'
import { WriteLockTimeout, isLockBusy, isStorageFailure } from './write-failure.ts'

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

/** A unit asked for and not run yet: the write lock is held by another connection. */
interface Queued {
  readonly fn: () => unknown
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
  /** performance.now() when it was asked for. */
  readonly since: number
}

/** What the last attempt to write came to (for /readyz): when, and the error if it failed. */
export interface WriteOutcome {
  readonly at: number
  readonly error: Error | undefined
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
  /** How long a unit waits for a write lock held by another connection before it fails (5 s). */
  readonly lockTimeoutMs?: number
}

export const LOCK_TIMEOUT_MS = 5_000
/**
 * Between two tries for a write lock held elsewhere: a try costs microseconds, and a waiting
 * request should get in within a few milliseconds of the lock's release. The jitter keeps two
 * waiting processes from trying in step.
 */
const LOCK_RETRY_MS = 1
const LOCK_RETRY_JITTER_MS = 1

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
 *
 * The connection never waits for a lock inside SQLite (busy_timeout 0: SQLite's busy handler
 * sleeps on the calling thread, which here is the event loop). When another connection holds
 * the write lock (`replenish process` beside `serve`), BEGIN answers SQLITE_BUSY at once: the
 * unit is queued, with every unit asked for after it, and BEGIN is tried again on a timer every
 * millisecond or two; the queue then runs in order, each unit whole, as if it had just been asked
 * for. A unit that has waited `lockTimeoutMs` fails with WriteLockTimeout (a 500 for a request).
 * A unit runs at once, inside `write`, whenever nothing is queued and the lock is free.
 */
export class Writer {
  private open = false
  private running = false
  private waiters: Waiter[] = []
  /** Units waiting for the write lock, oldest first. */
  private queue: Queued[] = []
  private retry: NodeJS.Timeout | undefined
  private broken: Error | undefined
  private outcome: WriteOutcome = { at: performance.now(), error: undefined }
  /** The open batch waits for the running WAL sync to return before it commits. */
  private commitAfterSync = false
  private readonly db: DatabaseSync
  private readonly options: WriterOptions
  private readonly lockTimeoutMs: number
  // Prepared once: each unit runs two of these, and exec() would parse them every time.
  private readonly begin: StatementSync
  private readonly commit: StatementSync
  private readonly savepoint: StatementSync
  private readonly release: StatementSync
  private readonly rollbackTo: StatementSync

  constructor(db: DatabaseSync, options: WriterOptions) {
    this.db = db
    this.options = options
    this.lockTimeoutMs = options.lockTimeoutMs ?? LOCK_TIMEOUT_MS
    this.begin = db.prepare('BEGIN IMMEDIATE')
    this.commit = db.prepare('COMMIT')
    this.savepoint = db.prepare('SAVEPOINT unit')
    this.release = db.prepare('RELEASE unit')
    this.rollbackTo = db.prepare('ROLLBACK TO unit')
  }

  /**
   * Runs `fn` (synchronous: writes after an `await` would escape the unit) as one unit of the
   * open batch: at once when the write lock is free and no unit waits before it, else when its
   * turn comes. Calling it from inside another unit is a bug: the inner unit could not be
   * rolled back on its own, so it throws at once.
   */
  write<T>(fn: () => T): Promise<T> {
    if (this.running) throw new Error('store.write called inside a unit of writes; do the inner writes in the outer unit')
    if (this.broken) return Promise.reject(this.broken)
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ fn, resolve: resolve as (value: unknown) => void, reject, since: performance.now() })
      // A unit queued before this one is waiting for the lock: this one waits behind it.
      if (this.queue.length === 1) this.drain()
    })
  }

  /** The failed WAL sync that stopped all writes, if one did. */
  get failure(): Error | undefined {
    return this.broken
  }

  /** The last attempt to write: a batch committed with writes in it, or a failure of the storage. */
  get lastOutcome(): WriteOutcome {
    return this.outcome
  }

  /** Since when (performance.now()) the oldest queued unit has waited for the write lock, if one does. */
  get waitingSince(): number | undefined {
    return this.queue[0]?.since
  }

  /** Nothing is queued and no batch is open: a heartbeat would not be in anyone's way. */
  get idle(): boolean {
    return this.queue.length === 0 && !this.open
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
      this.noteOutcome(err)
      for (const w of waiters) w.reject(err)
      return
    }
    this.options.afterCommit?.()
    const sync = this.options.walSync
    if (!sync || now) {
      if (sync) sync.syncNow()
      // A batch whose units all failed wrote nothing: its COMMIT says nothing of the disk.
      if (waiters.length > 0) this.noteOutcome(undefined)
      for (const w of waiters) w.resolve()
      return
    }
    sync.afterCommit((err) => {
      if (err) this.broken ??= err
      if (err || waiters.length > 0) this.noteOutcome(err ?? undefined)
      for (const w of waiters) {
        if (err) w.reject(err)
        else w.resolve()
      }
      if (this.commitAfterSync) this.flush()
    })
  }

  /** Fails the units still waiting for the lock (the store is closing). */
  abandonQueued(err: Error): void {
    clearTimeout(this.retry)
    this.retry = undefined
    const queued = this.queue
    this.queue = []
    for (const unit of queued) unit.reject(err)
  }

  /** Runs the queued units, oldest first, for as long as the write lock can be had. */
  private drain(): void {
    while (this.queue.length > 0) {
      if (this.broken) {
        this.abandonQueued(this.broken)
        return
      }
      try {
        this.join()
      } catch (err) {
        if (isLockBusy(err)) {
          this.waitForLock()
          return
        }
        this.noteOutcome(err)
        this.queue.shift()?.reject(err)
        continue
      }
      this.run(this.queue.shift() as Queued)
    }
  }

  /** The lock is held elsewhere: fail the units that waited too long, try again soon for the rest. */
  private waitForLock(): void {
    const now = performance.now()
    let expired: WriteLockTimeout | undefined
    while (this.queue.length > 0 && now - (this.queue[0] as Queued).since >= this.lockTimeoutMs) {
      expired ??= new WriteLockTimeout(`the database is locked by another process: no write lock within ${this.lockTimeoutMs / 1000} s`)
      this.queue.shift()?.reject(expired)
    }
    if (expired) this.noteOutcome(expired)
    if (this.queue.length === 0) return
    // Kept referenced: a command waiting for its write must not exit before it.
    this.retry = setTimeout(() => {
      this.retry = undefined
      this.drain()
    }, LOCK_RETRY_MS + Math.random() * LOCK_RETRY_JITTER_MS)
  }

  /** One unit in its savepoint (the batch's transaction is open); it joins the batch's commit. */
  private run(unit: Queued): void {
    let out: unknown
    this.running = true
    try {
      out = unit.fn()
      if (isThenable(out)) throw new TypeError('a unit of writes must be synchronous: it returned a promise')
      this.release.run()
    } catch (err) {
      this.undo()
      if (isStorageFailure(err)) this.noteOutcome(err)
      unit.reject(err)
      return
    } finally {
      this.running = false
    }
    this.waiters.push({ resolve: () => unit.resolve(out), reject: unit.reject })
    if (this.waiters.length >= this.options.maxBatch) this.flush()
  }

  private noteOutcome(err: unknown): void {
    const error = err === undefined ? undefined : err instanceof Error ? err : new Error(String(err))
    this.outcome = { at: performance.now(), error }
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
    this.noteOutcome(err)
    const waiters = this.waiters
    this.waiters = []
    for (const w of waiters) w.reject(err)
  }
}

function isThenable(value: unknown): boolean {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function'
}
