import { backup as sqliteBackup, type DatabaseSync } from 'node:sqlite'
import { WAL_AUTOCHECKPOINT_PAGES, openDatabase } from './db.ts'
import { Writer } from './writer.ts'
import { LOCKED_ELSEWHERE, describeWriteFailure, isDiskFull } from './write-failure.ts'
import { Outage, StoreUnavailable } from '../unavailable.ts'
import { startHeartbeat, type Heartbeat } from '../heartbeat.ts'
import { WalSync } from './wal-sync.ts'
import { CacheTurn } from './cache-turn.ts'
import { BodyCache } from './body-cache.ts'
import { DEFAULT_READ_CACHE_BYTES } from '../budgeted.ts'
import { Checkpointer } from './checkpointer.ts'
import { accountsStore } from './accounts-store.ts'
import { catalogStore } from './catalog-store.ts'
import { subscriptionsStore } from './subscriptions-store.ts'
import { eventsStore } from './events-store.ts'
import { idempotencyStore } from './idempotency-store.ts'
import { installmentsStore } from './installments-store.ts'
import { leaseStore } from './lease-store.ts'
import { webhooksStore } from './webhooks-store.ts'
import { deliveriesStore } from './deliveries-store.ts'
import { importStore } from './import-store.ts'
import { portalStore } from './portal-store.ts'
import { overviewStore } from './overview-store.ts'
import { emailsStore } from './emails-store.ts'
import { upcomingStore } from './upcoming-store.ts'
import { reportsStore } from './reports-store.ts'
import { readFacade, unitFacade } from './facade.ts'
import type { Store, Tx, Unit, UnitContext } from '../api.ts'

export { DEFAULT_READ_CACHE_BYTES }

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
  /** How long a write waits for a lock another process holds before it fails (writer.ts; 5 s). */
  readonly lockTimeoutMs?: number
}

/**
 * A write that has waited this long for a lock held elsewhere makes /readyz not ready, before
 * it fails (at 5 s): every write waits as long, and a `process` run beside `serve` holds the lock
 * for milliseconds at a time.
 */
export const LOCK_WAIT_NOT_READY_MS = 1_000

/** What a 503 asks a client to wait while the disk is full: someone has to make room first. */
const DISK_FULL_RETRY_AFTER_SECONDS = 10

/** What only the SQLite store has besides the interface: for tests, `/metrics` and the CLI. */
export interface SqliteStore extends Store {
  readonly kind: 'sqlite'
  /** Subscriptions whose GET body is cached now (tests). */
  readCacheSize(): number
  /** Subscriptions whose line items are kept rendered for the next write (tests). */
  keptLineItemsSize(): number
  /** Background checkpoints so far, and the WAL's length at the last one. */
  checkpoints(): { background: number; inline: number; walFrames: number } | undefined
  /** For tests and the migration command: the raw connection. */
  readonly db: DatabaseSync
}

/**
 * The SQLite store: today's synchronous repositories behind the asynchronous interface
 * (facade.ts), one connection, units of writes in the group-committing Writer.
 */
export function openSqliteStore(file: string, options: StoreOptions): SqliteStore {
  const db = openDatabase(file, options)
  // From here on SQLite never waits for a lock (its busy handler would sleep on the event loop):
  // the writer waits for the write lock on a timer instead (writer.ts), and WAL readers do not wait.
  db.exec('PRAGMA busy_timeout = 0')
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
    onDryRun: (running) => {
      bodies.suspended = running
    },
    ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}),
    ...(walSync ? { walSync } : {}),
    ...(options.lockTimeoutMs !== undefined ? { lockTimeoutMs: options.lockTimeoutMs } : {}),
  })
  const repos = {
    accounts: accountsStore(db),
    catalog: catalogStore(db),
    subscriptions: subscriptionsStore(db, bodies),
    // Events are stamped with the running unit's actor and request id (C18).
    events: eventsStore(db, () => writer.unitContext),
    idempotency: idempotencyStore(db),
    installments: installmentsStore(db, () => writer.unitContext),
    leases: leaseStore(db),
    webhooks: webhooksStore(db),
    deliveries: deliveriesStore(db),
    portal: portalStore(db),
    overview: overviewStore(db),
    emails: emailsStore(db),
    reports: reportsStore(db),
  }
  const tx: Tx = {
    accounts: unitFacade(repos.accounts, writer),
    catalog: unitFacade(repos.catalog, writer),
    subscriptions: unitFacade(repos.subscriptions, writer),
    events: unitFacade(repos.events, writer),
    idempotency: unitFacade(repos.idempotency, writer),
    installments: unitFacade(repos.installments, writer),
    leases: unitFacade(repos.leases, writer),
    webhooks: unitFacade(repos.webhooks, writer),
    deliveries: unitFacade(repos.deliveries, writer),
    // Writes only: nothing outside a unit reads through it.
    imports: unitFacade(importStore(db), writer),
    portal: unitFacade(repos.portal, writer),
    overview: unitFacade(repos.overview, writer),
    emails: unitFacade(repos.emails, writer),
    upcoming: unitFacade(upcomingStore(db), writer),
    reports: unitFacade(repos.reports, writer),
  }
  const turn = new CacheTurn(db, bodies, writer)
  const ping = db.prepare('SELECT 1 AS ok')
  const dataVersion = db.prepare('PRAGMA data_version')
  const autocheckpoint = db.prepare('PRAGMA wal_autocheckpoint')
  const pageBytes = db.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()')
  // One row in `leases` (no migration needed; no lease is called that), rewritten in place.
  const beat = db.prepare(`INSERT INTO leases (name, holder, expires_at) VALUES ('heartbeat', ?, ?)
    ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at`)
  const beatHolder = `${process.pid}`
  let heartbeat: Heartbeat | undefined
  /**
   * Why writes fail now, in words for /readyz (C12), or undefined: a failed WAL sync (until a
   * restart), a write waiting for a lock held elsewhere, or the last attempt's failure (a full
   * disk, a read-only file…) until a write succeeds again.
   */
  const writeProblem = (): string | undefined => {
    if (writer.failure) return `writes are stopped until a restart: ${writer.failure.message}`
    const since = writer.waitingSince
    if (since !== undefined && performance.now() - since >= LOCK_WAIT_NOT_READY_MS) return LOCKED_ELSEWHERE
    const last = writer.lastOutcome.error
    return last === undefined ? undefined : describeWriteFailure(last)
  }
  // A write refused for want of space is StoreUnavailable (a 503), its outage lasting until a write lands.
  const diskFull = new Outage()
  const checkpoints = (): { background: number; inline: number; walFrames: number } | undefined =>
    checkpointer ? { ...checkpointer.counts, walFrames: checkpointer.frames } : undefined
  return {
    kind: 'sqlite',
    accounts: readFacade(repos.accounts, writer),
    catalog: readFacade(repos.catalog, writer),
    // A GET's body, from the cache where it can: a turn's GETs share one look at other processes'
    // commits (cache-turn.ts). A customer's page reads at once: many pages answered together
    // outgrew V8's young generation (docs/decisions.md).
    subscriptions: Object.freeze({ ...readFacade(repos.subscriptions, writer), findJson: (id: number) => turn.run(() => repos.subscriptions.findJson(id)) }),
    events: readFacade(repos.events, writer),
    idempotency: readFacade(repos.idempotency, writer),
    installments: readFacade(repos.installments, writer),
    leases: readFacade(repos.leases, writer),
    webhooks: readFacade(repos.webhooks, writer),
    deliveries: readFacade(repos.deliveries, writer),
    portal: readFacade(repos.portal, writer),
    overview: readFacade(repos.overview, writer),
    emails: readFacade(repos.emails, writer),
    reports: readFacade(repos.reports, writer),
    write<T>(unit: Unit<T>, context?: UnitContext): Promise<T> {
      const asked = performance.now()
      return writer.write(() => unit(tx), context).then(
        (value) => {
          diskFull.succeeded(asked)
          return value
        },
        (err: unknown) => {
          throw isDiskFull(err) ? new StoreUnavailable('the disk is full (SQLite: database or disk is full)', diskFull.failed(), DISK_FULL_RETRY_AFTER_SECONDS, err) : err
        },
      )
    },
    writesInOrder: true,
    async bulk<T>(job: () => Promise<T>): Promise<T> {
      const before = (autocheckpoint.get() as { wal_autocheckpoint: number }).wal_autocheckpoint
      db.exec(`PRAGMA wal_autocheckpoint = ${BULK_CHECKPOINT_PAGES}`)
      try {
        return await job()
      } finally {
        // The connection may be gone (the job failed on a closed store): the setting went with it.
        if (db.isOpen) db.exec(`PRAGMA wal_autocheckpoint = ${before}`)
      }
    },
    async problem(): Promise<string | undefined> {
      const stopped = writeProblem()
      if (stopped) return stopped
      try {
        return (ping.get() as { ok: number } | undefined)?.ok === 1 ? undefined : 'database did not answer'
      } catch {
        return 'database did not answer'
      }
    },
    async metricsText(): Promise<string> {
      return sqliteMetrics((pageBytes.get() as { n: number }).n, checkpoints())
    },
    externalChanges(): number {
      return (dataVersion.get() as { data_version: number }).data_version
    },
    startHeartbeat(idleMs: number): void {
      heartbeat ??= startHeartbeat(idleMs, {
        idleFor: () => (writer.idle ? performance.now() - writer.lastOutcome.at : 0),
        beat: () => writer.write(async () => void beat.run(beatHolder, Date.now())),
      })
    },
    readCacheSize: () => bodies.size,
    keptLineItemsSize: () => bodies.lineItemsSize,
    checkpoints,
    /** A consistent online copy (SQLite's backup API), safe while the server is writing. */
    async backup(target: string): Promise<void> {
      await writer.commitNow()
      await sqliteBackup(db, target)
    },
    /** Ends the checkpoint thread (its connection closed) so that close() is the last connection. */
    async stopBackground(): Promise<void> {
      await checkpointer?.stop()
    },
    async close(): Promise<void> {
      heartbeat?.stop()
      writer.abandonQueued(new Error('the database was closed before this write could run'))
      await writer.commitNow()
      checkpointer?.terminate()
      if (db.isOpen) db.close()
      walSync?.close()
    },
    db,
  }
}

/**
 * WAL pages between checkpoints during a bulk job (128 MB): each page goes to the database once,
 * not once per batch (a processor run of a million subscriptions).
 */
const BULK_CHECKPOINT_PAGES = 32_000

/** The SQLite gauges of /metrics: the file's size and, in serve, the checkpoint thread's work. */
function sqliteMetrics(sizeBytes: number, c: { background: number; inline: number; walFrames: number } | undefined): string {
  const lines = [
    '# HELP replenish_database_size_bytes Size of the SQLite database.',
    '# TYPE replenish_database_size_bytes gauge',
    `replenish_database_size_bytes ${sizeBytes}`,
  ]
  if (c) {
    lines.push(
      '# HELP replenish_wal_checkpoints_total WAL checkpoints: in the background thread, or inline to let the WAL restart.',
      '# TYPE replenish_wal_checkpoints_total counter',
      `replenish_wal_checkpoints_total{where="background"} ${c.background}`,
      `replenish_wal_checkpoints_total{where="inline"} ${c.inline}`,
      '# HELP replenish_wal_frames WAL frames (pages) at the last background checkpoint.',
      '# TYPE replenish_wal_frames gauge',
      `replenish_wal_frames ${c.walFrames}`,
    )
  }
  return lines.join('\n') + '\n'
}


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
