import { hostname } from 'node:os'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import type { Store, Tx, Unit } from '../api.ts'
import { migratePostgres } from './migrations.ts'
import { numberTypes, RETRYABLE, sqlOn, sqlState, type Sql } from './sql.ts'
import { connectError } from './connect-errors.ts'
import { accountsRepo } from './accounts.ts'
import { catalogRepo } from './catalog.ts'
import { subscriptionsRepo } from './subscriptions.ts'
import { eventsRepo } from './events.ts'
import { idempotencyRepo, newPruneClock, type PruneClock } from './idempotency.ts'
import { installmentsRepo } from './installments.ts'
import { leasesRepo } from './leases.ts'
import { webhooksRepo } from './webhooks.ts'
import { deliveriesRepo } from './deliveries.ts'
import { importsRepo } from './imports.ts'
import { portalRepo } from './portal.ts'
import { overviewRepo } from './overview.ts'
import { reportsRepo } from './reports.ts'

export interface PostgresOptions {
  /** Connections this process keeps (REPLENISH_DB_POOL). */
  readonly poolSize: number
  /** A statement running longer than this is cancelled (REPLENISH_DB_STATEMENT_TIMEOUT_MS; 0: never). */
  readonly statementTimeoutMs: number
  /** FULL: refuse a server whose commits are not durable (`synchronous_commit = off`). */
  readonly synchronous: 'FULL' | 'NORMAL'
  /** `replenish migrate` and `serve` bring the schema up to date; `copy`'s check opens without. */
  readonly migrate?: boolean
}

/** What only the PostgreSQL store has besides the interface: pool gauges, for /metrics and tests. */
export interface PostgresStore extends Store {
  readonly kind: 'postgres'
  poolStats(): { readonly size: number; readonly idle: number; readonly waiting: number; readonly max: number }
  /** The pool itself, for `copy` and tests that inspect rows. */
  readonly pool: pg.Pool
}

/** A unit that lost a deadlock or a serialization check runs again, up to this many times in all. */
const UNIT_TRIES = 5
/** /readyz fails when the database does not answer through the pool within this. */
const READY_WITHIN_MS = 2_000
/** A row lock waited on longer than this fails the unit (its request a logged 500), rather than piling requests up. */
const LOCK_TIMEOUT_MS = 5_000

/**
 * `application_name` of this process's connections: a processing lease's holder (`host:pid:…`,
 * lease.ts) is alive while a session of that name exists, whichever host asks (leases.ts).
 */
export function sessionName(host = hostname(), pid = process.pid): string {
  return `replenish ${host}:${pid}`.slice(0, 63)
}

/**
 * The PostgreSQL store: every unit of writes is its own transaction on a pooled connection,
 * READ COMMITTED with explicit row locks (`lock*` reads are FOR UPDATE), run again when it lost a
 * deadlock or a serialization check; PostgreSQL shares WAL flushes between concurrent commits
 * itself (its group commit). Reads outside a unit go to the pool. Nothing is cached in the
 * process: any instance answers from the database (C15, docs/postgresql.md).
 */
export async function openPostgresStore(url: string, options: PostgresOptions): Promise<PostgresStore> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    types: numberTypes(),
    application_name: sessionName(),
    lock_timeout: LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: 60_000,
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
    connectionTimeoutMillis: 10_000,
    // A processor's lease is alive while this process has a session (leases.ts): an idle pool
    // keeps its connections longer than the lease lives, so a pause between batches never looks
    // like a dead holder.
    idleTimeoutMillis: 90_000,
  })
  // An idle connection the server dropped must not take the process down; the next query reconnects.
  pool.on('error', () => {})
  try {
    const client = await pool.connect()
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
    } finally {
      client.release()
    }
  } catch (err) {
    await pool.end().catch(() => {})
    throw connectError(url, err)
  }
  return postgresStore(pool)
}

export class DurabilityRefused extends Error {
  override readonly name = 'DurabilityRefused'
}

function postgresStore(pool: pg.Pool): PostgresStore {
  // When this store last pruned old Idempotency-Keys (repositories are made per unit).
  const pruned = newPruneClock()
  const reads = txOn(sqlOn(pool), pruned)
  let closed = false
  return {
    kind: 'postgres',
    pool,
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
    reports: reads.reports,
    write: <T>(unit: Unit<T>) => runUnit(pool, unit, pruned),
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
      const size = (await pool.query<{ n: number }>('SELECT pg_database_size(current_database()) AS n')).rows[0]?.n ?? 0
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
 * One unit: BEGIN, the unit through a `tx` bound to one connection, COMMIT. A deadlock or a
 * serialization failure rolls back and runs it again after a short random pause; anything else
 * rolls back and rejects. The tx refuses use after its unit ended (it would land in another's).
 */
async function runUnit<T>(pool: pg.Pool, unit: Unit<T>, pruned: PruneClock): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect()
    let broken: Error | undefined
    let open = true
    const guarded = sqlOn({
      query: ((config: pg.QueryConfig) => {
        if (!open) return Promise.reject(new Error("a unit's tx was used outside its unit of writes"))
        return client.query(config)
      }) as pg.PoolClient['query'],
    }, true)
    try {
      await client.query('BEGIN')
      const result = await unit(txOn(guarded, pruned))
      await client.query('COMMIT')
      return result
    } catch (err) {
      try {
        await client.query('ROLLBACK')
      } catch (rollbackFailed) {
        broken = rollbackFailed as Error
      }
      const state = sqlState(err)
      if (state !== undefined && RETRYABLE.has(state) && attempt < UNIT_TRIES) {
        await sleep(Math.random() * 10 * attempt)
        continue
      }
      throw err
    } finally {
      open = false
      client.release(broken)
    }
  }
}

/** Every repository over one `Sql` (the pool's, or a unit's connection), each made when first used. */
function txOn(sql: Sql, pruned: PruneClock): Tx {
  const made: Partial<Record<keyof Tx, unknown>> = {}
  const lazy = <K extends keyof Tx>(key: K, make: (sql: Sql) => Tx[K]): Tx[K] => (made[key] ??= make(sql)) as Tx[K]
  return {
    get accounts() { return lazy('accounts', accountsRepo) },
    get catalog() { return lazy('catalog', catalogRepo) },
    get subscriptions() { return lazy('subscriptions', subscriptionsRepo) },
    get events() { return lazy('events', eventsRepo) },
    get idempotency() { return lazy('idempotency', (s) => idempotencyRepo(s, pruned)) },
    get installments() { return lazy('installments', installmentsRepo) },
    get leases() { return lazy('leases', leasesRepo) },
    get webhooks() { return lazy('webhooks', webhooksRepo) },
    get deliveries() { return lazy('deliveries', deliveriesRepo) },
    get imports() { return lazy('imports', importsRepo) },
    get portal() { return lazy('portal', portalRepo) },
    get overview() { return lazy('overview', overviewRepo) },
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
