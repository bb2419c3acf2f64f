import { setTimeout as sleep } from 'node:timers/promises'
import type pg from 'pg'
import type { CredentialCheck, Tx, Unit } from '../api.ts'
import { StoreUnavailable, type Outage } from '../unavailable.ts'
import { RETRYABLE, sqlState, type Sql } from './sql.ts'
import { failureKind, lockTimedOutOr, unavailableOr, watched } from './connection.ts'
import { StatementsLost, preparedOn, unitSql } from './unit-sql.ts'

/** A unit that lost a deadlock or a serialization check runs again, up to this many times in all. */
const UNIT_TRIES = 5

/**
 * How a store's units send their statements: together (unit-sql.ts) until the server is found not
 * to keep a connection's prepared statements between transactions (a pooler), then one a round
 * trip for good.
 */
export interface UnitMode {
  batching: boolean
}

/**
 * One unit: BEGIN, the unit through a `tx` bound to one connection, COMMIT, its statements sent
 * in as few round trips as their answers allow (unit-sql.ts). A deadlock or a serialization
 * failure rolls back and runs it again after a short random pause; prepared statements found lost
 * (a pooler) run it again one statement a round trip; anything else rolls back and rejects. The
 * tx refuses use after its unit ended (it would land in another's). A dry unit (C18) ends with
 * ROLLBACK instead of COMMIT, and answers what it would have.
 *
 * A connection lost before COMMIT was sent (a restart, a terminated backend) committed nothing:
 * the unit runs once more on a fresh connection before its caller hears of it, then fails as
 * StoreUnavailable (a 503). One lost in the round trip that carries COMMIT (with the writes that
 * waited for it) may or may not have committed, and one that did not answer in time (a frozen
 * server) would take as long again: those are not run again. A client whose connection failed is
 * never rolled back (it cannot be) nor handed back to the pool.
 */
export async function runUnit<T>(
  pool: pg.Pool, unit: Unit<T>, repositories: (sql: Sql) => Tx, outage: Outage, mode: UnitMode, dryRun = false, credentials?: CredentialCheck,
): Promise<T> {
  let rerunAfterLoss = true
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient
    try {
      client = await pool.connect()
    } catch (err) {
      throw unavailableOr(err, outage)
    }
    let broken: Error | undefined
    let open = true
    let committing = false
    const db = watched({
      query: (config) => (open ? client.query(config) : Promise.reject(new Error("a unit's tx was used outside its unit of writes"))),
    }, outage)
    const prepared = mode.batching ? preparedOn(client) : undefined
    // A cached key not yet confirmed: its generation is read with BEGIN, and a moved one rejects
    // with CredentialsMoved before the unit's first answer (the request runs again, auth.ts).
    const sql = unitSql(db, prepared, credentials !== undefined && !credentials.verified ? credentials : undefined)
    try {
      const result = await unit(repositories(sql))
      committing = true
      await sql.end(dryRun ? 'ROLLBACK' : 'COMMIT')
      return result
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        broken = err
      } else if (sql.begun) {
        try {
          await client.query('ROLLBACK')
        } catch (rollbackFailed) {
          broken = rollbackFailed as Error
        }
      }
      if (err instanceof StatementsLost && mode.batching) {
        mode.batching = false
        continue
      }
      const state = sqlState(err)
      if (state !== undefined && RETRYABLE.has(state) && attempt < UNIT_TRIES) {
        await sleep(Math.random() * 10 * attempt)
        continue
      }
      if (err instanceof StoreUnavailable && !committing && rerunAfterLoss && failureKind(err.cause) === 'lost') {
        rerunAfterLoss = false
        continue
      }
      throw lockTimedOutOr(err)
    } finally {
      open = false
      client.release(broken)
    }
  }
}
