import { hostname } from 'node:os'
import pg from 'pg'
import { numberTypes, sqlState, type Queryable } from './sql.ts'
import { Outage, StoreContended, StoreUnavailable } from '../unavailable.ts'
import type { Tls } from './tls.ts'

/**
 * The connections of one store: how the pool is made, and how a server that cannot serve a
 * query is told from a query that failed (the first is StoreUnavailable, a 503; the second is
 * the unit's own error).
 */

export interface ConnectionOptions {
  /** Connections this process keeps (REPLENISH_DB_POOL). */
  readonly poolSize: number
  /** A statement running longer than this is cancelled (REPLENISH_DB_STATEMENT_TIMEOUT_MS; 0: never). */
  readonly statementTimeoutMs: number
}

/** A row lock waited on longer than this fails the unit (its request a logged 503: lockTimedOutOr), rather than piling requests up. */
const LOCK_TIMEOUT_MS = 5_000
/** SQLSTATE lock_not_available: what a statement that waited LOCK_TIMEOUT_MS fails with. */
const LOCK_NOT_AVAILABLE = '55P03'
/** What a 503 for a lock waited on in vain asks a client to wait: the holder's transaction is usually over by then. */
const LOCK_RETRY_AFTER_SECONDS = 1
/** Most a new connection may take, TLS and login included, when no statement time-out bounds it lower. */
const CONNECT_WITHIN_MS = 10_000
/** What a 503 asks a client to wait while PostgreSQL cannot serve: about a restart's length. */
const RETRY_AFTER_SECONDS = 2

/**
 * `application_name` of this process's connections: a processing lease's holder (`host:pid:…`,
 * lease.ts) is alive while a session of that name exists, whichever host asks (leases.ts).
 */
export function sessionName(host = hostname(), pid = process.pid): string {
  return `replenish ${host}:${pid}`.slice(0, 63)
}

/**
 * How long the client waits for any one answer of the server: the statement time-out, which the
 * server enforces itself, and as long again (at most a second more), after which the server is
 * taken for frozen or cut off. A slow statement thus fails on the server first, with its own
 * error; only a server that does not answer at all hits this. 0: no bound, as the setting says.
 */
export function answerWithinMs(statementTimeoutMs: number): number {
  return statementTimeoutMs > 0 ? statementTimeoutMs + Math.min(statementTimeoutMs, 1_000) : 0
}

/**
 * The pool. Every client it makes gets an 'error' listener for its whole life: node-postgres
 * emits 'error' on a client whose connection ends (a server restarting, a network cut), and the
 * pool listens only while the client is idle, so one checked out (a unit, `copy`'s loader) would
 * otherwise take the process down. A client that failed so is unusable (its queries reject) and
 * the pool drops it once it is released.
 */
export function newPool(tls: Tls, encrypted: boolean, options: ConnectionOptions): pg.Pool {
  const answerWithin = answerWithinMs(options.statementTimeoutMs)
  const pool = new pg.Pool({
    connectionString: tls.url,
    ssl: encrypted ? tls.options : false,
    max: options.poolSize,
    types: numberTypes(),
    application_name: sessionName(),
    lock_timeout: LOCK_TIMEOUT_MS,
    idle_in_transaction_session_timeout: 60_000,
    ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs, query_timeout: answerWithin } : {}),
    // Also bounds the wait for a free connection of the pool.
    connectionTimeoutMillis: answerWithin > 0 ? Math.min(CONNECT_WITHIN_MS, answerWithin) : CONNECT_WITHIN_MS,
    // A processor's lease is alive while this process has a session (leases.ts): an idle pool
    // keeps its connections longer than the lease lives, so a pause between batches never looks
    // like a dead holder.
    idleTimeoutMillis: 90_000,
  })
  // An idle client's connection ended: the pool has dropped it, the next query connects anew.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  return pool
}

/**
 * Why the server cannot serve, when that is why `err` happened: `lost` (the connection ended
 * under a query: a restart, a terminated backend, a network cut), `unreachable` (no connection
 * could be made, or the server refuses new ones for now), `silent` (no answer within the client's
 * bound: a frozen server) or `resources` (out of disk or memory); undefined for anything else.
 * A statement the server cancelled (statement or lock time-out) is not one: the server answered.
 */
export function failureKind(err: unknown): 'lost' | 'unreachable' | 'silent' | 'resources' | undefined {
  const state = sqlState(err)
  if (state !== undefined) {
    if (state === '57P01' || state === '57P02' || state === '57P05' || state === '08003' || state === '08006' || state === '08000') return 'lost'
    if (state === '57P03' || state === '08001' || state === '08004' || state === '53300') return 'unreachable'
    if (state.startsWith('53') || state.startsWith('58')) return 'resources'
    return undefined
  }
  if (!(err instanceof Error)) return undefined
  const code = (err as NodeJS.ErrnoException).code
  if (code === 'ECONNRESET' || code === 'EPIPE') return 'lost'
  if (code === 'ECONNREFUSED' || code === 'EHOSTUNREACH' || code === 'ENETUNREACH' || code === 'ETIMEDOUT' || code === 'EAI_AGAIN' || code === 'ENOTFOUND') return 'unreachable'
  if (err.message === 'Query read timeout') return 'silent'
  if (/timeout exceeded when trying to connect|connection timeout/i.test(err.message)) return 'unreachable'
  if (/^Connection terminated|not queryable/.test(err.message)) return 'lost'
  return undefined
}

const REASONS = {
  lost: 'the connection to PostgreSQL was lost',
  unreachable: 'PostgreSQL cannot be reached',
  silent: 'PostgreSQL did not answer in time',
  resources: 'PostgreSQL is out of resources',
} as const

/** `err` as StoreUnavailable when the server could not serve (failureKind), else `err` itself. */
export function unavailableOr(err: unknown, outage: Outage): unknown {
  const kind = failureKind(err)
  if (kind === undefined) return err
  const detail = (err as Error).message || String((err as { code?: unknown }).code)
  return new StoreUnavailable(`${REASONS[kind]} (${detail})`, outage.failed(), RETRY_AFTER_SECONDS, err)
}

/**
 * `err` as StoreContended (a 503 with Retry-After) when it is a lock waited on for
 * LOCK_TIMEOUT_MS, else `err` itself. Rows another transaction held that long (a large import,
 * a processing batch on a slow server) are contention that passes by itself: the client may try
 * again, as after an outage. It is no outage: the server answered, the connection is sound, and
 * each one is logged.
 */
export function lockTimedOutOr(err: unknown): unknown {
  if (sqlState(err) !== LOCK_NOT_AVAILABLE) return err
  return new StoreContended(`a lock another transaction held was waited on for ${LOCK_TIMEOUT_MS / 1000} s (lock_timeout)`, Date.now(), LOCK_RETRY_AFTER_SECONDS, err)
}

/** `db` whose failures to serve reject as StoreUnavailable; an answer to a statement sent during an outage ends it. */
export function watched(db: Queryable, outage: Outage): Queryable {
  return {
    query: (config) => {
      const sent = performance.now()
      return db.query(config).then(
        (result) => {
          outage.succeeded(sent)
          return result
        },
        (err: unknown) => {
          // A statement the server refused (a constraint, a time-out) is an answer too.
          if (sqlState(err) !== undefined && failureKind(err) === undefined) outage.succeeded(sent)
          throw unavailableOr(err, outage)
        },
      )
    },
  }
}
