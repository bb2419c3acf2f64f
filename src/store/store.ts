import { backup as sqliteBackup, type DatabaseSync } from 'node:sqlite'
import { WAL_AUTOCHECKPOINT_PAGES, openDatabase } from './db.ts'
import { Writer } from './writer.ts'
import { WalSync } from './wal-sync.ts'
import { BodyCache } from './body-cache.ts'
import { Checkpointer } from './checkpointer.ts'
import { accountsStore } from './accounts-store.ts'
import { catalogStore } from './catalog-store.ts'
import { subscriptionsStore } from './subscriptions-store.ts'
import { eventsStore } from './events-store.ts'
import { idempotencyStore } from './idempotency-store.ts'
import { installmentsStore } from './installments-store.ts'
import { leaseStore } from './lease-store.ts'

export const DEFAULT_READ_CACHE_BYTES = 16 * 1024 * 1024

export interface StoreOptions {
  readonly synchronous: 'FULL' | 'NORMAL'
  readonly createDirectory: boolean
  readonly maxBatch?: number
  /** Bytes of rendered subscription bodies kept for GET (body-cache.ts); 0 turns the cache off. */
  readonly readCacheBytes?: number
  readonly beforeCommit?: () => void
  /**
   * WAL checkpoints in a worker thread instead of inside COMMITs on the event loop
   * (checkpointer.ts): for `serve`. Needs a WAL file database with synchronous=FULL.
   */
  readonly backgroundCheckpoints?: boolean
  /** Where a failing background checkpoint is reported (serve's error log). */
  readonly onBackgroundError?: (message: string) => void
  /** Test hook: replaces the checkpoint thread's code (to make it die). */
  readonly checkpointThreadSource?: string
  /** Test hook: replaces the fdatasync of the WAL (to hold it, or to fail it). */
  readonly syncWal?: (fd: number, done: (err: Error | null) => void) => void
}

/**
 * Everything the handlers and the processor know of storage. Reads are direct; every change
 * goes through `write`, one unit per request, so it commits (or rolls back) whole.
 */
export function openStore(file: string, options: StoreOptions) {
  const db = openDatabase(file, options)
  const walSync = durableOffLoop(db, file, options)
  const bodies = new BodyCache(db, options.readCacheBytes ?? DEFAULT_READ_CACHE_BYTES)
  const checkpointer = walSync && options.backgroundCheckpoints
    ? new Checkpointer(db, file, options.onBackgroundError ?? (() => {}), options.checkpointThreadSource)
    : undefined
  if (checkpointer) db.exec('PRAGMA wal_autocheckpoint = 0')
  let fellBack = false
  const afterCommit = (): void => {
    if (!checkpointer) return
    if (checkpointer.failed) {
      // The thread is gone: SQLite's own checkpoints take over again.
      if (!fellBack) db.exec(`PRAGMA wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`)
      fellBack = true
      return
    }
    checkpointer.afterCommit()
  }
  const writer = new Writer(db, {
    afterCommit,
    maxBatch: options.maxBatch ?? 256,
    onRollback: () => bodies.invalidateAll(),
    ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    ...(walSync ? { walSync } : {}),
  })
  const ping = db.prepare('SELECT 1 AS ok')
  return {
    accounts: accountsStore(db),
    catalog: catalogStore(db),
    subscriptions: subscriptionsStore(db, bodies),
    events: eventsStore(db),
    idempotency: idempotencyStore(db),
    installments: installmentsStore(db),
    leases: leaseStore(db),
    /** Runs `fn` as one unit of writes; resolves after the COMMIT that holds them (group commit). */
    write<T>(fn: () => T): Promise<T> {
      return writer.write(fn)
    },
    /** Subscriptions whose GET body is cached now (tests, metrics). */
    readCacheSize(): number {
      return bodies.size
    },
    /** Subscriptions whose line items are kept rendered for the next write (tests). */
    keptLineItemsSize(): number {
      return bodies.lineItemsSize
    },
    /** The failed WAL sync that stopped every write until a restart (wal-sync.ts), if any. */
    writeFailure(): Error | undefined {
      return writer.failure
    },
    /** The database answers, and no failed WAL sync has stopped the writes. */
    ping(): boolean {
      return writer.failure === undefined && (ping.get() as { ok: number } | undefined)?.ok === 1
    },
    /** A consistent online copy (SQLite's backup API), safe while the server is writing. */
    async backup(target: string): Promise<void> {
      writer.flush(true)
      await sqliteBackup(db, target)
    },
    /** Size of the database file in bytes. */
    sizeBytes(): number {
      const r = db.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get() as { n: number }
      return r.n
    },
    /** Background checkpoints so far, and the WAL's length at the last one (/metrics). */
    checkpoints(): { background: number; inline: number; walFrames: number } | undefined {
      return checkpointer ? { ...checkpointer.counts, walFrames: checkpointer.frames } : undefined
    },
    /** Ends the checkpoint thread (its connection closed) so that close() is the last connection. */
    async stopBackground(): Promise<void> {
      await checkpointer?.stop()
    },
    close(): void {
      writer.flush(true)
      checkpointer?.terminate()
      if (db.isOpen) db.close()
      walSync?.close()
    },
    /** For tests and the migration command: the raw connection. */
    db: db as DatabaseSync,
  }
}
export type Store = ReturnType<typeof openStore>

/**
 * synchronous=FULL on a WAL file database is kept as a guarantee, not as the pragma: the
 * connection switches to NORMAL and a WalSync fsyncs the WAL after each COMMIT off the event loop
 * (see wal-sync.ts). Migrations above ran under FULL itself. A database that is not in WAL mode
 * (in memory, or a file system without shared memory) keeps the pragma.
 */
function durableOffLoop(db: DatabaseSync, file: string, options: StoreOptions): WalSync | undefined {
  if (options.synchronous !== 'FULL' || file === ':memory:' || file === '') return undefined
  const mode = (db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode
  if (mode !== 'wal') return undefined
  db.exec('PRAGMA synchronous = NORMAL')
  return new WalSync(`${file}-wal`, options.syncWal)
}
