import { setTimeout as sleep } from 'node:timers/promises'
import type pg from 'pg'
import { CredentialsMoved, type CredentialCheck, type Tx, type Unit } from '../api.ts'
import { StoreUnavailable, type Outage } from '../unavailable.ts'
import { CREDENTIAL_GENERATION, RETRYABLE, sqlOn, sqlState, type Sql } from './sql.ts'
import { failureKind, unavailableOr, watched } from './connection.ts'

/** A unit that lost a deadlock or a serialization check runs again, up to this many times in all. */
const UNIT_TRIES = 5

/**
 * One unit: BEGIN, the unit through a `tx` bound to one connection, COMMIT. A deadlock or a
 * serialization failure rolls back and runs it again after a short random pause; anything else
 * rolls back and rejects. The tx refuses use after its unit ended (it would land in another's).
 * A dry unit (C18) ends with ROLLBACK instead of COMMIT, and answers what it would have.
 *
 * A connection lost before COMMIT was sent (a restart, a terminated backend) committed nothing:
 * the unit runs once more on a fresh connection before its caller hears of it, then fails as
 * StoreUnavailable (a 503). One lost during COMMIT may or may not have committed, and one that
 * did not answer in time (a frozen server) would take as long again: those are not run again.
 * A client whose connection failed is never rolled back (it cannot be) nor handed back to the pool.
 */
export async function runUnit<T>(
  pool: pg.Pool, unit: Unit<T>, repositories: (sql: Sql) => Tx, outage: Outage, dryRun = false, credentials?: CredentialCheck,
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
    try {
      if (credentials !== undefined && !credentials.verified) await beginChecked(db, credentials)
      else await db.query({ text: 'BEGIN' })
      const result = await unit(repositories(sqlOn(db, true)))
      committing = true
      await db.query({ text: dryRun ? 'ROLLBACK' : 'COMMIT' })
      return result
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        broken = err
      } else {
        try {
          await client.query('ROLLBACK')
        } catch (rollbackFailed) {
          broken = rollbackFailed as Error
        }
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
      throw err
    } finally {
      open = false
      client.release(broken)
    }
  }
}

/**
 * BEGIN, and the credentials' generation read in the same round trip (two statements of one
 * simple query): a request admitted on a cached key costs no statement of its own to check it.
 * The generation moved (a key was revoked since it was cached): CredentialsMoved, before the unit
 * has done anything; the request runs again with its key read anew (api/kit/endpoint.ts).
 */
async function beginChecked(db: { query(config: pg.QueryConfig): Promise<pg.QueryResult> }, credentials: CredentialCheck): Promise<void> {
  const results = (await db.query({ text: `BEGIN; ${CREDENTIAL_GENERATION}` })) as unknown as pg.QueryResult[]
  const generation = (results[1]?.rows[0] as { n?: unknown } | undefined)?.n
  if (generation !== credentials.generation) throw new CredentialsMoved()
  credentials.verified = true
}
