import { AsyncLocalStorage } from 'node:async_hooks'
import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { WalSync } from './wal-sync.ts'
import { SYSTEM_UNIT, type UnitContext } from '../api.ts'
import { WriteLockTimeout, isLockBusy, isStorageFailure } from './write-failure.ts'

/**
 * A unit asked for: queued until it runs, then the one running, then (with the value it answered)
 * waiting for its batch's COMMIT. One object all the way: a unit is one allocation, not four.
 */
class Queued {
  readonly fn: () => Promise<unknown>
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
  readonly context: UnitContext
  /** performance.now() when it was asked for. */
  readonly since: number
  value: unknown = undefined

  constructor(fn: () => Promise<unknown>, resolve: (value: unknown) => void, reject: (err: unknown) => void, context: UnitContext) {
    this.fn = fn
    this.resolve = resolve
    this.reject = reject
    this.context = context
    this.since = performance.now()
  }
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
  /**
   * Called with true when a dry unit starts and false when it has been rolled back: caches must
   * neither serve it (they hold what it is about to change) nor learn from it (it is undone).
   */
  readonly onDryRun?: (running: boolean) => void
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

/**
 * A unit awaited something other than the store (a timer, the network, a file) and was still
 * running when its batch was due to commit. It would hold every other writer back; it is rolled
 * back and refused instead, as the store's rules say (docs/decisions.md, "The store interface").
 */
export class UnitEscaped extends TypeError {
  override readonly name = 'UnitEscaped'
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
 *
 * Units are asynchronous functions (the store's interface is: a server database answers over a
 * socket), run one at a time in the order they were asked for: the next starts only when the
 * one before has settled, so no unit's statements ever fall between another's. On SQLite every
 * store call of a unit answers at once, so a unit runs to its end within the microtasks of the
 * turn that started it, long before its batch's setImmediate commit. A unit still running then
 * has awaited something else: it is rolled back and refused (UnitEscaped).
 *
 * The connection never waits for a lock inside SQLite (busy_timeout 0: SQLite's busy handler
 * sleeps on the calling thread, which here is the event loop). When another connection holds
 * the write lock (`replenish process` beside `serve`), BEGIN answers SQLITE_BUSY at once: the
 * unit stays queued, with every unit asked for after it, and BEGIN is tried again on a timer every
 * millisecond or two; the queue then runs in order. A unit that has waited `lockTimeoutMs` fails
 * with WriteLockTimeout (a 500 for a request).
 *
 * A dry unit (C18's dry runs) runs in its savepoint like any other, and then its savepoint is
 * rolled back whatever it answered: the units before and after it in the batch keep theirs. It
 * settles at once (nothing of it waits for the COMMIT), and caches are kept out of it
 * (`onDryRun`), so they need no forgetting afterwards.
 */
export class Writer {
  private open = false
  /** The unit running now (between its SAVEPOINT and its RELEASE), if one is. */
  private current: Queued | undefined = undefined
  private waiters: Queued[] = []
  /** Units not started yet, oldest first. */
  private queue: Queued[] = []
  /** Readers waiting for the running unit to settle (the read barrier). */
  private idleWaiters: (() => void)[] = []
  private retry: NodeJS.Timeout | undefined
  private broken: Error | undefined
  private outcome: WriteOutcome = { at: performance.now(), error: undefined }
  /** The open batch waits for the running WAL sync to return before it commits. */
  private commitAfterSync = false
  /** Which unit the code running now belongs to: a write asked for from inside a unit is refused. */
  private readonly context = new AsyncLocalStorage<Queued>()
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
   * Runs `fn` as one unit of the open batch: at once when no unit runs or waits before it and the
   * write lock is free, else when its turn comes. Asked for from inside another unit it is
   * refused at once: the inner unit could not be rolled back on its own, and it would wait for
   * the unit that waits for it.
   */
  write<T>(fn: () => Promise<T>, context: UnitContext = SYSTEM_UNIT): Promise<T> {
    if (this.current !== undefined && this.context.getStore() !== undefined) {
      return Promise.reject(new Error('store.write called inside a unit of writes; do the inner writes in the outer unit'))
    }
    if (this.broken) return Promise.reject(this.broken)
    return new Promise<T>((resolve, reject) => {
      this.queue.push(new Queued(fn, resolve as (value: unknown) => void, reject, context))
      if (this.current === undefined && this.queue.length === 1 && this.retry === undefined) this.next()
    })
  }

  /** A unit is running now: reads outside units wait for it (`settled`), so none sees it half done. */
  get busy(): boolean {
    return this.current !== undefined
  }

  /** Resolves once no unit is running (the read barrier). */
  settled(): Promise<void> {
    if (this.current === undefined) return Promise.resolve()
    return new Promise((resolve) => this.idleWaiters.push(resolve))
  }

  /**
   * True when the code running now is the running unit's own (its `tx` may be used): not merely
   * while some unit runs, or a call kept from an ended unit would land in another's savepoint.
   */
  get inUnit(): boolean {
    return this.current !== undefined && this.context.getStore() === this.current
  }

  /** The context of the running unit (its events are stamped with it); SYSTEM_UNIT between units. */
  get unitContext(): UnitContext {
    return this.current?.context ?? SYSTEM_UNIT
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
    return this.retry === undefined ? undefined : this.queue[0]?.since
  }

  /** Nothing is queued, running or open: a heartbeat would not be in anyone's way. */
  get idle(): boolean {
    return this.queue.length === 0 && this.current === undefined && !this.open
  }

  /**
   * Commits what is open now (the scheduled flush, a full batch, or a shutdown). With `now`, the
   * WAL is synced on this thread before returning: for a shutdown or a backup, when nothing else
   * is waiting for the event loop. A unit still running here has escaped (see the class comment).
   */
  readonly flush = (now = false): void => {
    if (!this.open) return
    if (this.current !== undefined) this.escape(this.current)
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
      this.abandonQueued(this.broken)
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
      this.resume()
      return
    }
    this.options.afterCommit?.()
    const sync = this.options.walSync
    if (!sync || now) {
      if (sync) sync.syncNow()
      // A batch whose units all failed wrote nothing: its COMMIT says nothing of the disk.
      if (waiters.length > 0) this.noteOutcome(undefined)
      for (const w of waiters) w.resolve(w.value)
      this.resume()
      return
    }
    sync.afterCommit((err) => {
      if (err) this.broken ??= err
      if (err || waiters.length > 0) this.noteOutcome(err ?? undefined)
      for (const w of waiters) {
        if (err) w.reject(err)
        else w.resolve(w.value)
      }
      if (this.commitAfterSync) this.flush()
    })
    this.resume()
  }

  /**
   * `flush(true)` once no unit is running: for a shutdown or a backup asked for while a unit is
   * between two of its awaits (it ends within this turn, or its batch's flush refuses it). Flushing
   * at once would refuse that unit as escaped. With no unit running it flushes before returning.
   */
  async commitNow(): Promise<void> {
    while (this.current !== undefined) await this.settled()
    this.flush(true)
  }

  /** Fails the units still waiting to run (the store is closing). */
  abandonQueued(err: Error): void {
    clearTimeout(this.retry)
    this.retry = undefined
    const queued = this.queue
    this.queue = []
    for (const unit of queued) unit.reject(err)
  }

  /** Starts the oldest queued unit, if the write lock can be had; units that cannot start fail here. */
  private next(): void {
    while (this.current === undefined && this.queue.length > 0) {
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
      this.start(this.queue.shift() as Queued)
    }
  }

  /** After a commit outside the run of units (a full batch, a flush): carry on with the queue. */
  private resume(): void {
    if (this.current === undefined && this.retry === undefined && this.queue.length > 0) this.next()
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
      this.next()
    }, LOCK_RETRY_MS + Math.random() * LOCK_RETRY_JITTER_MS)
  }

  /** One unit in its savepoint (the batch's transaction is open); it settles in `finish`. */
  private start(unit: Queued): void {
    this.current = unit
    if (unit.context.dryRun) this.options.onDryRun?.(true)
    let result: Promise<unknown>
    try {
      result = this.context.run(unit, unit.fn)
    } catch (err) {
      this.finish(unit, err, undefined, true)
      return
    }
    result.then(
      (value) => this.finish(unit, undefined, value, false),
      (err: unknown) => this.finish(unit, err, undefined, true),
    )
  }

  private finish(unit: Queued, err: unknown, value: unknown, failed: boolean): void {
    if (this.current !== unit) return // it escaped: already rolled back and refused
    this.current = undefined
    if (unit.context.dryRun) {
      this.undoDry()
      if (failed) unit.reject(err)
      else unit.resolve(value)
      this.wakeReaders()
      this.next()
      return
    }
    if (!failed) {
      try {
        this.release.run()
      } catch (releaseErr) {
        failed = true
        err = releaseErr
      }
    }
    if (failed) {
      this.undo()
      if (isStorageFailure(err)) this.noteOutcome(err)
      unit.reject(err)
    } else {
      unit.value = value
      this.waiters.push(unit)
    }
    this.wakeReaders()
    if (this.waiters.length >= this.options.maxBatch) this.flush()
    else this.next()
  }

  /** A unit still running at its batch's commit: rolled back and refused now; its end is ignored. */
  private escape(unit: Queued): void {
    this.current = undefined
    if (unit.context.dryRun) this.options.onDryRun?.(false)
    this.undo()
    unit.reject(new UnitEscaped('a unit of writes may only await the store: it awaited something else (a timer, the network, a file) and was rolled back'))
    this.wakeReaders()
  }

  private wakeReaders(): void {
    if (this.idleWaiters.length === 0) return
    const waiting = this.idleWaiters
    this.idleWaiters = []
    for (const wake of waiting) wake()
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

  /**
   * Rolls a dry unit back, without telling caches (they kept out of it), then lets them back in.
   * If the savepoint cannot be rolled back alone, the batch goes, as for `undo`.
   */
  private undoDry(): void {
    try {
      this.rollbackTo.run()
      this.release.run()
      this.options.onDryRun?.(false)
      return
    } catch {
      // As in undo.
    }
    this.options.onDryRun?.(false)
    this.abandon()
    this.fail(new TransactionLost('a dry unit of writes could not be rolled back alone; its whole batch was rolled back'))
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

