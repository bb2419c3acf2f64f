import { Worker } from 'node:worker_threads'
import type { DatabaseSync, StatementSync } from 'node:sqlite'
import { prepareValues } from './rows.ts'

/**
 * The worker's code: CommonJS on built-ins only, evaluated as a string, because a single
 * executable's worker threads cannot load our bundle. It owns a second connection and answers
 * each message with one `PRAGMA wal_checkpoint(PASSIVE)`: [busy, frames in the WAL, frames in
 * the database]. PASSIVE takes no writer lock, so it never blocks the server's writes; the
 * connection keeps SQLite's own syncing (NORMAL: the WAL before copying, the database after),
 * so what it copies is durable before the WAL may be reused.
 */
export const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { DatabaseSync } = require('node:sqlite')
// Background work yields the core to the event loop when both want it (Linux gives each thread
// its own nice value; elsewhere this is skipped).
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop())
  if (workerData.nice > 0 && tid > 0) require('node:os').setPriority(tid, workerData.nice)
} catch {}
const db = new DatabaseSync(workerData.file, { timeout: 0 })
db.exec('PRAGMA synchronous = NORMAL; PRAGMA cache_size = -64')
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')
checkpoint.setReturnArrays(true)
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close()
    parentPort.close()
    return
  }
  try {
    parentPort.postMessage({ result: checkpoint.get() })
  } catch (err) {
    parentPort.postMessage({ error: String((err && err.message) || err) })
  }
})
`

/**
 * WAL frames (pages) past which the WAL is restarted: 64 MB at 4 KiB pages. Each restart costs the
 * event loop one small checkpoint with two fsyncs (1–12 ms): 16,000 halves how often that
 * happens against 8,000, for the same throughput (docs/performance.md, step 11).
 */
export const RESTART_FRAMES = 16000
/** How long stop() waits for the thread to end after its close before ending it. */
const STOP_WAIT_MS = 5_000
/**
 * A background checkpoint starts at most this often: each one syncs both files, and copies a
 * page once however many times it was written since the last one (200 ms against 50 ms: PATCH
 * +5 %, docs/performance.md).
 */
const EVERY_MS = 200
/**
 * The thread's nice value: when the event loop and the checkpoint want the same core, the loop
 * gets about nine tenths of it, so a long checkpoint does not stall the answers behind it.
 */
export const CHECKPOINT_NICE = 10
/**
 * Before the WAL restarts, the event loop copies what the thread has not (the frames committed
 * during its last run): the restart waits for a run that copied at most this many frames, so
 * that part stays small.
 */
export const CONVERGED_FRAMES = 256
/**
 * WAL frames past which the restart waits no longer for such a run (128 MB at 4 KiB pages, the
 * journal_size_limit). While writes come faster than the thread copies (a busy core: the thread
 * runs niced; a slow disk), each of its runs has as much left to copy as the one before, the run
 * with little left never comes, and the WAL grew for as long as the load lasted (119 MB seen,
 * issue 25). Past this mark the event loop copies the frames of the thread's last run itself,
 * once (a longer checkpoint on the loop, as SQLite's own would be), and the WAL starts over: it
 * stays below this mark plus what one thread run lets pile up.
 */
export const MAX_FRAMES = 2 * RESTART_FRAMES

export interface CheckpointCounts {
  /** Checkpoints the worker ran. */
  background: number
  /** Small checkpoints on the server's own connection that let the WAL restart. */
  inline: number
}

/**
 * WAL checkpoints off the event loop (issue 6). SQLite's automatic checkpoint runs inside the
 * COMMIT that crosses the mark, on the event loop, and fsyncs the database file: 10–25 ms stalls
 * that made the writes' p99. Here a worker thread checkpoints after commits instead.
 *
 * The WAL can only start over (be overwritten from its beginning) when a write transaction
 * begins while every frame is already in the database. Under steady writes the server's own
 * connection always has a batch open on an older snapshot, so the worker can never quite catch
 * up: once the WAL passes RESTART_FRAMES and the worker has just finished a run that had little
 * left to copy (else it runs again at once), the server's connection checkpoints the few frames
 * committed since, right after a COMMIT (nothing open), with SQLite's syncs, and its next batch
 * restarts the WAL.
 */
export class Checkpointer {
  private readonly worker: Worker
  private readonly inlineCheckpoint: StatementSync
  private running = false
  /** stop() or terminate() was called: the thread is ending because we asked. */
  private stopped = false
  /** The thread ended without being asked (an error, a crash). */
  private dead = false
  /** When the last run began; none yet, so the first COMMIT is checkpointed at once, however soon after start. */
  private lastStart = Number.NEGATIVE_INFINITY
  /** Frames in the WAL and frames checkpointed, as the worker last saw them. */
  private walFrames = 0
  /** Frames in the database after the worker's last run (to tell how many its run copied). */
  private backfilled = 0
  private restartWanted = false
  /** The next run starts at once, not after EVERY_MS: the WAL is due for a restart. */
  private hurry = false
  private readonly exited: Promise<void>
  readonly counts: CheckpointCounts = { background: 0, inline: 0 }

  /** Where a failure of the thread is reported (serve's error log). */
  private readonly report: (message: string) => void

  /** `source` replaces the thread's code (tests make it fail). */
  constructor(db: DatabaseSync, file: string, onError: (message: string) => void, source = WORKER_SOURCE) {
    this.report = onError
    this.inlineCheckpoint = prepareValues(db, 'PRAGMA wal_checkpoint(PASSIVE)')
    this.worker = new Worker(source, {
      eval: true,
      workerData: { file, nice: CHECKPOINT_NICE },
      // The smallest heap that runs it: every megabyte here is resident memory of the server.
      resourceLimits: { maxOldGenerationSizeMb: 12, maxYoungGenerationSizeMb: 1, stackSizeMb: 1 },
    })
    this.worker.unref()
    this.worker.on('message', (m: { result?: [number, number, number]; error?: string }) => {
      this.running = false
      if (m.error !== undefined) {
        onError(`background checkpoint failed: ${m.error}`)
        return
      }
      const [busy, log, done] = m.result as [number, number, number]
      this.counts.background++
      // The WAL started over since the last run when its counts went down.
      const copied = done >= this.backfilled ? done - this.backfilled : done
      this.backfilled = done
      this.walFrames = log
      if (busy === 0 && log >= RESTART_FRAMES && done === log) {
        // Caught up with what it could see, and the WAL is long: restart it at the next COMMIT,
        // once the frames the event loop must copy first (those committed during this run) are
        // few, or at once when the WAL is past its bound.
        if (copied <= CONVERGED_FRAMES || log >= MAX_FRAMES) this.restartWanted = true
        else this.hurry = true
      }
    })
    this.worker.on('error', (err) => {
      this.dead = true
      onError(`the checkpoint thread stopped: ${err.message}`)
    })
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', (code) => {
        if (!this.stopped && !this.dead) {
          this.dead = true
          onError(`the checkpoint thread exited (code ${code})`)
        }
        resolve()
      }),
    )
  }

  /** Frames in the WAL at the last background checkpoint (/metrics). */
  get frames(): number {
    return this.walFrames
  }

  /** The thread died unasked: the caller falls back to SQLite's automatic checkpoints. */
  get failed(): boolean {
    return this.dead
  }

  /**
   * Called right after a COMMIT, with no transaction open on the server's connection: restarts
   * the WAL when it is due, else starts a background checkpoint unless one runs or one began
   * less than EVERY_MS ago.
   */
  afterCommit(): void {
    if (this.stopped || this.dead) return
    if (this.restartWanted && !this.running) {
      this.restartWanted = false
      const [, log, done] = this.inlineCheckpoint.get() as unknown as [number, number, number]
      this.counts.inline++
      // All in the database: the next batch's COMMIT writes from the start of the WAL.
      if (done === log) this.walFrames = 0
      return
    }
    const now = performance.now()
    if (this.running || (!this.hurry && now - this.lastStart < EVERY_MS)) return
    this.hurry = false
    this.running = true
    this.lastStart = now
    this.worker.postMessage('checkpoint')
  }

  /** Closes the thread's connection and waits for it to end (before the server's own close). */
  async stop(): Promise<void> {
    if (!this.stopped && !this.dead) {
      this.stopped = true
      // Held by the event loop until it has closed its connection and ended (it is unref'd so a
      // running thread never keeps the process alive by itself).
      this.worker.ref()
      this.worker.postMessage('close')
    }
    // Bounded: a thread that has not ended after its close (seen twice, in test processes that
    // ran serve in-process; not reproduced since) must not hold the server's shutdown for ever.
    // It is ended: its connection only checkpoints, so nothing is lost.
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_WAIT_MS)))
    const ended = await Promise.race([this.exited.then(() => 'ended' as const), late])
    clearTimeout(timer)
    if (ended === 'late') {
      this.report(`the checkpoint thread did not end within ${STOP_WAIT_MS / 1000} s of its close; it was terminated`)
      await this.worker.terminate()
    }
  }

  /** Ends the thread without waiting (a close that was not preceded by stop). */
  terminate(): void {
    this.stopped = true
    void this.worker.terminate()
  }
}
