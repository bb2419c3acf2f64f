import type { DatabaseSync } from 'node:sqlite'

interface Waiter {
  resolve(): void
  reject(err: unknown): void
}

export interface WriterOptions {
  /** Most units one commit holds; a full batch commits at once. */
  readonly maxBatch: number
  /** Test hook: runs just before COMMIT; throwing there fails the whole batch. */
  readonly beforeCommit?: () => void
}

/**
 * Group commit. Every unit of writes (one request's, or one processor batch's) runs in its own
 * SAVEPOINT inside a shared transaction; a unit that throws rolls back only its savepoint. The
 * transaction commits once the event loop has handled everything that arrived together (or the
 * batch is full), so concurrent writers share one fsync, and a unit's promise settles only after
 * the COMMIT that holds its writes has returned: no answer goes out before its data is durable.
 */
export class Writer {
  private open = false
  private waiters: Waiter[] = []
  private readonly db: DatabaseSync
  private readonly options: WriterOptions

  constructor(db: DatabaseSync, options: WriterOptions) {
    this.db = db
    this.options = options
  }

  write<T>(fn: () => T): Promise<T> {
    if (!this.open) {
      this.db.exec('BEGIN IMMEDIATE')
      this.open = true
      setImmediate(this.flush)
    }
    this.db.exec('SAVEPOINT unit')
    let out: T
    try {
      out = fn()
    } catch (err) {
      this.db.exec('ROLLBACK TO unit')
      this.db.exec('RELEASE unit')
      return Promise.reject(err)
    }
    this.db.exec('RELEASE unit')
    return new Promise<T>((resolve, reject) => {
      this.waiters.push({ resolve: () => resolve(out), reject })
      if (this.waiters.length >= this.options.maxBatch) this.flush()
    })
  }

  /** Commits what is open now (the scheduled flush, a full batch, or a shutdown). */
  readonly flush = (): void => {
    if (!this.open) return
    this.open = false
    const waiters = this.waiters
    this.waiters = []
    try {
      this.options.beforeCommit?.()
      this.db.exec('COMMIT')
    } catch (err) {
      try {
        if (this.db.isTransaction) this.db.exec('ROLLBACK')
      } catch {
        // The connection already rolled back; the waiters learn of the failure below.
      }
      for (const w of waiters) w.reject(err)
      return
    }
    for (const w of waiters) w.resolve()
  }
}
