import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { BodyCache } from './body-cache.ts'
import type { Writer } from './writer.ts'

interface Waiting {
  readonly read: () => unknown
  readonly resolve: (value: unknown) => void
  readonly reject: (err: unknown) => void
}

/**
 * Reads that answer from the body cache, gathered for one turn of the event loop. Before a cached
 * body is answered, the cache must have seen every commit another process made before the request
 * came in (`PRAGMA data_version`), and that read opens and closes a read transaction: two fcntl
 * locks on the -shm file. So the reads asked for during one poll phase wait for its end (a
 * setImmediate) and run there, one after the other in one synchronous call, behind a single look
 * at `data_version` taken after all of them were asked for: each still sees every commit that came
 * before its request, pipelined or not, and a commit made while they run is concurrent with them.
 * Their answers then leave in one burst, which is most of what this saves: on the bench's
 * virtualised host a GET's CPU halved, the shared look and locks a few per cent of it
 * (docs/performance.md, issue 30).
 *
 * They run in one read transaction, so the SQL of those not cached (a body to render) takes no read
 * lock of its own either; inside the writer's open batch they run in its transaction, which holds
 * the locks already. Only bodies wait for the turn: what a turn answers stays alive until all of it
 * is sent, and customers' pages (about 60 KB each with their answer) answered together outgrew V8's
 * young generation (+20 MB of peak RSS), while at most a few a turn cost more than reading each at
 * once (docs/performance.md).
 *
 * A unit of writes running at that moment (one that awaited something else and has not yet been
 * refused, writer.ts) would show its unfinished writes: the turn waits for it, as reads do.
 */
export class CacheTurn {
  private waiting: Waiting[] = []
  private readonly bodies: BodyCache
  private readonly writer: Writer
  private readonly db: DatabaseSync
  private readonly begin: StatementSync
  private readonly commit: StatementSync

  constructor(db: DatabaseSync, bodies: BodyCache, writer: Writer) {
    this.db = db
    this.bodies = bodies
    this.writer = writer
    this.begin = db.prepare('BEGIN')
    this.commit = db.prepare('COMMIT')
  }

  /** `read` (synchronous, looking in the cache) run at the end of this turn's poll phase. */
  run<T>(read: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.end)
      this.waiting.push({ read, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  private readonly end = (): void => {
    if (this.writer.busy) {
      void this.writer.settled().then(() => setImmediate(this.end))
      return
    }
    const waiting = this.waiting
    this.waiting = []
    let own = false
    try {
      own = !this.db.isTransaction
      if (own) this.begin.run()
      this.bodies.confirmFor(() => {
        for (const w of waiting) {
          try {
            w.resolve(w.read())
          } catch (err) {
            w.reject(err)
          }
        }
      })
    } catch (err) {
      // The database is closed, or BEGIN or the look at data_version failed: each read fails alike.
      for (const w of waiting) w.reject(err)
    } finally {
      if (own) this.endRead()
    }
  }

  /** A read transaction wrote nothing: if even its COMMIT fails, rolling it back loses nothing. */
  private endRead(): void {
    try {
      if (this.db.isTransaction) this.commit.run()
    } catch {
      try {
        this.db.exec('ROLLBACK')
      } catch {
        // The connection is gone: so is its transaction.
      }
    }
  }
}
