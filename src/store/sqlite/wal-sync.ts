import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync } from 'node:fs'

/** The WAL could not be made durable: what was committed may not survive a power cut. */
export class DurabilityLost extends Error {
  override readonly name = 'DurabilityLost'
}

/**
 * Makes committed transactions durable without holding the event loop.
 *
 * With `synchronous=FULL` SQLite fsyncs the WAL inside every COMMIT, on the calling thread: the
 * whole server waits for the disk. Instead the connection runs with `synchronous=NORMAL` (SQLite
 * still syncs the WAL header on a restart and both files around each checkpoint) and this class
 * fdatasyncs the WAL file on libuv's thread pool after each COMMIT. A caller is told its writes
 * are durable only once an fdatasync that *began after its COMMIT returned* has finished, which
 * is exactly what FULL does for a WAL database (one fdatasync of the WAL per commit), so no
 * acknowledged write is lost to a power cut. Commits that end while a sync is running share the
 * next one: under load a single fdatasync covers several batches.
 */
export class WalSync {
  private readonly path: string
  private fd: number | undefined
  private running = false
  private closing = false
  /** Callers whose COMMIT returned after the running sync began: they need the next one. */
  private waiting: ((err: Error | null) => void)[] = []
  /** Test hook: replaces fdatasync (to fail it, or to hold it). */
  private readonly syncFile: (fd: number, done: (err: Error | null) => void) => void

  constructor(walPath: string, syncFile?: (fd: number, done: (err: Error | null) => void) => void) {
    this.path = walPath
    this.syncFile = syncFile ?? ((fd, done) => fdatasync(fd, (err) => done(err)))
  }

  /** An fdatasync is running on the thread pool. */
  get busy(): boolean {
    return this.running
  }

  /** Calls `done` once the writes committed before this call are on stable storage. */
  afterCommit(done: (err: Error | null) => void): void {
    this.waiting.push(done)
    if (!this.running) this.start()
  }

  /** Syncs now, on this thread (shutdown and backups: nothing else is running then). */
  syncNow(): void {
    const fd = this.file()
    if (fd !== undefined) fdatasyncSync(fd)
  }

  /** Closes the descriptor, once the sync that may be running on the thread pool is done with it. */
  close(): void {
    if (this.running) {
      this.closing = true
      return
    }
    if (this.fd !== undefined) closeSync(this.fd)
    this.fd = undefined
  }

  private start(): void {
    const batch = this.waiting
    this.waiting = []
    let fd: number | undefined
    try {
      fd = this.file()
    } catch (err) {
      for (const done of batch) done(err as Error)
      return
    }
    // No WAL file (nothing was ever written): nothing to make durable.
    if (fd === undefined) {
      for (const done of batch) done(null)
      return
    }
    this.running = true
    this.syncFile(fd, (err) => {
      this.running = false
      const failure = err ? new DurabilityLost(`fdatasync of the WAL failed: ${err.message}`, { cause: err }) : null
      for (const done of batch) done(failure)
      if (this.waiting.length > 0) this.start()
      else if (this.closing) this.close()
    })
  }

  /**
   * The open WAL file. SQLite deletes the WAL when the last connection closes and makes a new one
   * later; a descriptor of the unlinked file would sync nothing useful, so it is reopened then.
   */
  private file(): number | undefined {
    if (this.fd !== undefined && fstatSync(this.fd).nlink > 0) return this.fd
    if (this.fd !== undefined) {
      closeSync(this.fd)
      this.fd = undefined
    }
    try {
      this.fd = openSync(this.path, 'r')
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw err
    }
    return this.fd
  }
}
