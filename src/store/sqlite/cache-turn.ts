import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { BodyCache } from './body-cache.ts'
import type { Writer } from './writer.ts'

interface Waiting {
  readonly read: () => unknown
  /** A customer's page (many bodies), not one subscription's body. */
  readonly page: boolean
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
 * They run in one read transaction, so the SQL of those not cached (a body to render, a customer's
 * page) takes no read lock of its own either; inside the writer's open batch they run in its
 * transaction, which holds the locks already.
 *
 * A unit of writes running at that moment (one that awaited something else and has not yet been
 * refused, writer.ts) would show its unfinished writes: the turn waits for it, as reads do.
 */
/**
 * Customers' pages answered in one go at most; the rest wait for the next turn (GETs of one
 * subscription never do). What a turn answers is alive until all of it is sent: many pages at
 * once (about 60 KB each, rendered and answered) outlived V8's young generation and grew the
 * binary's peak RSS by 20 MB; 8 pages a turn kept it at the build before the turn's.
 */
const MOST_PAGES_IN_ONE_TURN = 8

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

  /** `read` (synchronous, looking in the cache) run at the end of this turn's poll phase; `page`: a customer's page. */
  run<T>(read: () => T, page = false): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(this.end)
      this.waiting.push({ read, page, resolve: resolve as (value: unknown) => void, reject })
    })
  }

  private readonly end = (): void => {
    if (this.waiting.length === 0) return
    if (this.writer.busy) {
      void this.writer.settled().then(() => setImmediate(this.end))
      return
    }
    const waiting = this.take()
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

  /** This turn's reads, oldest first: every body, and pages up to the limit; the pages left wait for the next turn. */
  private take(): Waiting[] {
    const taken: Waiting[] = []
    const left: Waiting[] = []
    let pages = 0
    for (const w of this.waiting) {
      if (w.page && pages === MOST_PAGES_IN_ONE_TURN) left.push(w)
      else {
        if (w.page) pages++
        taken.push(w)
      }
    }
    this.waiting = left
    if (left.length > 0) setImmediate(this.end)
    return taken
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
