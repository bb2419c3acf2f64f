import { backup as sqliteBackup, type DatabaseSync } from 'node:sqlite'
import { openDatabase } from './db.ts'
import { Writer } from './writer.ts'
import { accountsStore } from './accounts-store.ts'
import { catalogStore } from './catalog-store.ts'
import { subscriptionsStore } from './subscriptions-store.ts'
import { eventsStore } from './events-store.ts'
import { idempotencyStore } from './idempotency-store.ts'
import { installmentsStore } from './installments-store.ts'
import { leaseStore } from './lease-store.ts'

export interface StoreOptions {
  readonly synchronous: 'FULL' | 'NORMAL'
  readonly createDirectory: boolean
  readonly maxBatch?: number
  readonly beforeCommit?: () => void
}

/**
 * Everything the handlers and the processor know of storage. Reads are direct; every change
 * goes through `write`, one unit per request, so it commits (or rolls back) whole.
 */
export function openStore(file: string, options: StoreOptions) {
  const db = openDatabase(file, options)
  const writer = new Writer(db, { maxBatch: options.maxBatch ?? 256, ...(options.beforeCommit ? { beforeCommit: options.beforeCommit } : {}) })
  const ping = db.prepare('SELECT 1 AS ok')
  return {
    accounts: accountsStore(db),
    catalog: catalogStore(db),
    subscriptions: subscriptionsStore(db),
    events: eventsStore(db),
    idempotency: idempotencyStore(db),
    installments: installmentsStore(db),
    leases: leaseStore(db),
    /** Runs `fn` as one unit of writes; resolves after the COMMIT that holds them (group commit). */
    write<T>(fn: () => T): Promise<T> {
      return writer.write(fn)
    },
    ping(): boolean {
      return (ping.get() as { ok: number } | undefined)?.ok === 1
    },
    /** A consistent online copy (SQLite's backup API), safe while the server is writing. */
    async backup(target: string): Promise<void> {
      writer.flush()
      await sqliteBackup(db, target)
    },
    /** Size of the database file in bytes. */
    sizeBytes(): number {
      const r = db.prepare('SELECT page_count * page_size AS n FROM pragma_page_count(), pragma_page_size()').get() as { n: number }
      return r.n
    },
    close(): void {
      writer.flush()
      if (db.isOpen) db.close()
    },
    /** For tests and the migration command: the raw connection. */
    db: db as DatabaseSync,
  }
}
export type Store = ReturnType<typeof openStore>
