import pg from 'pg'
import { SYSTEM_UNIT, type Store, type Tx, type Unit, type UnitContext } from '../api.ts'
import { Outage } from '../unavailable.ts'
import { migratePostgres } from './migrations.ts'
import { sqlOn, sqlState, type Sql } from './sql.ts'
import { connectError, DurabilityRefused } from './connect-errors.ts'
import { newPool, watched, type ConnectionOptions } from './connection.ts'
import { tlsSettings, type Tls } from './tls.ts'
import { runUnit, type UnitMode } from './unit.ts'
import { accountsRepo } from './accounts.ts'
import { catalogRepo } from './catalog.ts'
import { subscriptionsRepo, type GetReads } from './subscriptions.ts'
import { readBatch } from './read-batch.ts'
import { KeptBodies } from './kept-bodies.ts'
import { DEFAULT_READ_CACHE_BYTES } from '../budgeted.ts'
import { eventsRepo } from './events.ts'
import { idempotencyRepo, newPruneClock, type PruneClock } from './idempotency.ts'
import { installmentsRepo } from './installments.ts'
import { leasesRepo } from './leases.ts'
import { webhooksRepo } from './webhooks.ts'
import { deliveriesRepo } from './deliveries.ts'
import { importsRepo } from './imports.ts'
import { portalRepo } from './portal.ts'
import { overviewRepo } from './overview.ts'
import { emailsRepo } from './emails.ts'
import { upcomingRepo } from './upcoming.ts'
import { reportsRepo } from './reports.ts'

export { sessionName } from './connection.ts'

export interface PostgresOptions extends ConnectionOptions {
  /** FULL: refuse a server whose commits are not durable (`synchronous_commit = off`). */
  readonly synchronous: 'FULL' | 'NORMAL'
  /** `replenish migrate` and `serve` bring the schema up to date; `copy`'s check opens without. */
  readonly migrate?: boolean
  /** Bytes of rendered GET bodies kept, each answered only while its rows are unchanged (KeptBodies; 0: none). */
  readonly readCacheBytes?: number
}

/** What only the PostgreSQL store has besides the interface: pool gauges, for /metrics and tests. */
export interface PostgresStore extends Store {
  readonly kind: 'postgres'
  poolStats(): { readonly size: number; readonly idle: number; readonly waiting: number; readonly max: number }
  /** The pool itself, for `copy` and tests that inspect rows. */
  readonly pool: pg.Pool
  /** The GET bodies this instance keeps (tests). */
  readonly keptBodies: KeptBodies
}

/** /readyz fails when the database does not answer through the pool within this. */
const READY_WITHIN_MS = 2_000

/**
 * The PostgreSQL store: every unit of writes is its own transaction on a pooled connection,
 * READ COMMITTED with explicit row locks (`lock*` reads are FOR UPDATE), run again when it lost a
 * deadlock or a serialization check (unit.ts); PostgreSQL shares WAL flushes between concurrent
 * commits itself (its group commit). Reads outside a unit go to the pool. Any instance answers
 * from the database (C15, docs/postgresql.md): a GET's kept body only once the database confirms
 * its rows are unchanged (kept-bodies.ts). A server that
 * cannot serve a query (down, restarting, frozen) fails it as StoreUnavailable (connection.ts).
 */
export async function openPostgresStore(url: string, options: PostgresOptions): Promise<PostgresStore> {
  const tls = tlsSettings(url, process.env)
  const [pool, client] = await firstConnection(url, tls, options)
  try {
    if (options.synchronous === 'FULL') {
      const { rows } = await client.query<{ synchronous_commit: string }>('SHOW synchronous_commit')
      if (rows[0]?.synchronous_commit === 'off') {
        throw new DurabilityRefused(
          `synchronous_commit is off on the server, so an acknowledged write could be lost in a crash; ` +
            `set it to on (ALTER DATABASE … SET synchronous_commit = on), or start with REPLENISH_SYNCHRONOUS=NORMAL to accept that`,
        )
      }
    }
    if (options.migrate !== false) await migratePostgres(client)
    client.release()
  } catch (err) {
    client.release(err as Error)
    await pool.end().catch(() => {})
    throw connectError(url, err, tls.mode)
  }
  return postgresStore(pool, options.readCacheBytes ?? DEFAULT_READ_CACHE_BYTES)
}

/**
 * The pool and its first connection, encrypted as `sslmode` says. `prefer` tries TLS first and
 * goes without when the server does not offer it; `allow` goes without first and tries TLS when
 * the server refuses that. The choice holds for the pool's life (docs/decisions.md).
 */
async function firstConnection(url: string, tls: Tls, options: ConnectionOptions): Promise<[pg.Pool, pg.PoolClient]> {
  const tries = tls.mode === 'prefer' ? [true, false] : tls.mode === 'allow' ? [false, true] : [tls.mode !== 'disable']
  for (let i = 0; ; i++) {
    const encrypted = tries[i] === true
    const pool = newPool(tls, encrypted, options)
    try {
      return [pool, await pool.connect()]
    } catch (err) {
      await pool.end().catch(() => {})
      const another = i + 1 < tries.length && (encrypted ? (err as Error).message === NO_TLS_ON_SERVER : sqlState(err) === REFUSED_BY_HBA)
      if (!another) throw connectError(url, err, tls.mode)
    }
  }
}

/** node-postgres's words for a server that answers "no" to TLS. */
const NO_TLS_ON_SERVER = 'The server does not support SSL connections'
/** invalid_authorization_specification: pg_hba.conf has no entry for this connection (one without TLS, under `allow`). */
const REFUSED_BY_HBA = '28000'

function postgresStore(pool: pg.Pool, readCacheBytes: number): PostgresStore {
  // When this store last pruned old Idempotency-Keys (repositories are made per unit).
  const pruned = newPruneClock()
  const outage = new Outage()
  const pooled = watched(pool, outage)
  const mode: UnitMode = { batching: true }
  const keptBodies = new KeptBodies(readCacheBytes)
  const gets: GetReads = { bodies: keptBodies, reads: readBatch(pool, outage, mode, pool.options.max ?? 10) }
  const reads = txOn(sqlOn(pooled), pruned, SYSTEM_UNIT, gets)
  let closed = false
  return {
    kind: 'postgres',
    pool,
    keptBodies,
    accounts: reads.accounts,
    catalog: reads.catalog,
    subscriptions: reads.subscriptions,
    events: reads.events,
    idempotency: reads.idempotency,
    installments: reads.installments,
    leases: reads.leases,
    webhooks: reads.webhooks,
    deliveries: reads.deliveries,
    portal: reads.portal,
    overview: reads.overview,
    emails: reads.emails,
    reports: reads.reports,
    write: <T>(unit: Unit<T>, context: UnitContext = SYSTEM_UNIT) => runUnit(pool, unit, (sql) => txOn(sql, pruned, context), outage, mode, context.dryRun, context.credentials),
    bulk: <T>(job: () => Promise<T>) => job(),
    /**
     * /readyz: the server answers through this instance's pool within 2 s. A pool whose every
     * connection stays busy fails it too (requests would queue), named with its counts.
     */
    async problem(): Promise<string | undefined> {
      if (closed) return 'the database connection pool is closed'
      let timer: NodeJS.Timeout | undefined
      const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), READY_WITHIN_MS)))
      try {
        const answer = await Promise.race([pool.query('SELECT 1'), late])
        if (answer !== 'late') return undefined
        const p = this.poolStats()
        return `no connection of the PostgreSQL pool answered within ${READY_WITHIN_MS / 1000} s (${p.size - p.idle} of ${p.max} in use, ${p.waiting} waiting)`
      } catch (err) {
        // /readyz is public: the reason names no host, address, user or database.
        const code = (err as { code?: unknown }).code
        if (typeof code === 'string' && sqlState(err) === undefined) return `PostgreSQL cannot be reached (${code})`
        return `PostgreSQL did not answer: ${(err as Error).message}`
      } finally {
        clearTimeout(timer)
      }
    },
    async metricsText(): Promise<string> {
      const size = (await pooled.query({ text: 'SELECT pg_database_size(current_database()) AS n' })).rows[0]?.n ?? 0
      return postgresMetrics(size, this.poolStats())
    },
    poolStats: () => ({ size: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 }),
    async backup(): Promise<void> {
      throw new BackupRefused('replenish backup copies a SQLite file; a PostgreSQL database is backed up with its own tools: pg_dump, or your provider\'s snapshots and point-in-time recovery (docs/operations.md)')
    },
    // Writers do not wait for one another here: nothing for a long job to make room for.
    externalChanges: () => 0,
    // problem() asks the server itself; no write is needed to learn that it fails.
    startHeartbeat: () => {},
    stopBackground: async () => {},
    async close(): Promise<void> {
      if (closed) return
      closed = true
      await pool.end()
    },
  }
}

export class BackupRefused extends Error {
  override readonly name = 'BackupRefused'
}

/**
 * Every repository over one `Sql` (the pool's, or a unit's connection), each made when first used;
 * the events a unit writes are stamped with its `context` (C18).
 */
function txOn(sql: Sql, pruned: PruneClock, context: UnitContext, gets?: GetReads): Tx {
  const made: Partial<Record<keyof Tx, unknown>> = {}
  const lazy = <K extends keyof Tx>(key: K, make: (sql: Sql) => Tx[K]): Tx[K] => (made[key] ??= make(sql)) as Tx[K]
  return {
    get accounts() { return lazy('accounts', accountsRepo) },
    get catalog() { return lazy('catalog', catalogRepo) },
    get subscriptions() { return lazy('subscriptions', (s) => subscriptionsRepo(s, gets)) },
    get events() { return lazy('events', (s) => eventsRepo(s, context, async (id) => (await this.subscriptions.renderJson(id, false))?.body)) },
    get idempotency() { return lazy('idempotency', (s) => idempotencyRepo(s, pruned)) },
    get installments() { return lazy('installments', (s) => installmentsRepo(s, context)) },
    get leases() { return lazy('leases', leasesRepo) },
    get webhooks() { return lazy('webhooks', webhooksRepo) },
    get deliveries() { return lazy('deliveries', deliveriesRepo) },
    get imports() { return lazy('imports', importsRepo) },
    get portal() { return lazy('portal', portalRepo) },
    get overview() { return lazy('overview', overviewRepo) },
    get emails() { return lazy('emails', emailsRepo) },
    get upcoming() { return lazy('upcoming', upcomingRepo) },
    get reports() { return lazy('reports', reportsRepo) },
  }
}

function postgresMetrics(sizeBytes: number, p: { size: number; idle: number; waiting: number; max: number }): string {
  return [
    '# HELP replenish_database_size_bytes Size of the PostgreSQL database.',
    '# TYPE replenish_database_size_bytes gauge',
    `replenish_database_size_bytes ${sizeBytes}`,
    '# HELP replenish_db_pool_connections Connections of this instance\'s pool, by state.',
    '# TYPE replenish_db_pool_connections gauge',
    `replenish_db_pool_connections{state="idle"} ${p.idle}`,
    `replenish_db_pool_connections{state="in_use"} ${p.size - p.idle}`,
    '# HELP replenish_db_pool_max Most connections this instance\'s pool opens (REPLENISH_DB_POOL).',
    '# TYPE replenish_db_pool_max gauge',
    `replenish_db_pool_max ${p.max}`,
    '# HELP replenish_db_pool_waiting Requests of this instance waiting for a free connection.',
    '# TYPE replenish_db_pool_waiting gauge',
    `replenish_db_pool_waiting ${p.waiting}`,
  ].join('\n') + '\n'
}
