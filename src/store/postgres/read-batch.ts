import type pg from 'pg'
import { StoreUnavailable, type Outage } from '../unavailable.ts'
import { unavailableOr, watched } from './connection.ts'
import { sqlOn } from './sql.ts'
import { StatementsLost, batchName, executeText, lostOr, prepare, preparedOn, type Statement } from './unit-sql.ts'
import type { UnitMode } from './unit.ts'

/** A read outside any unit that may travel with others. */
export interface ReadBatch {
  one<T>(text: string, values: readonly unknown[]): Promise<T | undefined>
}

interface Waiting {
  readonly statement: Statement
  readonly values: readonly unknown[]
  readonly execute: string
  resolve(row: unknown): void
  reject(err: unknown): void
}

/** Most statements one round trip carries: a bound on one simple query's text and answer. */
const MOST_IN_ONE_TRIP = 64

/**
 * GET's reads (issue 30), sent together: a read that finds every connection it may use busy
 * waits, and the next connection that comes free takes every read waiting then, as one simple
 * query of EXECUTEs of statements PREPAREd once per connection (unit-sql.ts's way). Under load a
 * round trip then answers several GETs: measured without HTTP (bench/experiments/pg-get-batched.mts),
 * 64 GETs in flight over 10 connections cost 11 µs of node and 37 µs of PostgreSQL CPU each,
 * against 33 and 64 one a round trip. A read that finds a connection free goes at once, alone.
 *
 * Each statement runs with its own snapshot (READ COMMITTED), taken after its request arrived: it
 * sees every commit acknowledged before (C15). A failing statement fails the rest of its round
 * trip, whose answers are then unknown: each of them runs again alone, so each gets its own answer
 * or error. Prepared statements found lost (a pooler in transaction mode) turn batching off for
 * the store, units included (UnitMode); the reads then go one a round trip, the driver's way.
 * A connection is held for one round trip at a time, so units waiting for one are not starved.
 */
export function readBatch(pool: pg.Pool, outage: Outage, mode: UnitMode, connections: number): ReadBatch {
  const pooled = sqlOn(watched(pool, outage))
  const waiting: Waiting[] = []
  let running = 0

  const alone = (statement: Statement, values: readonly unknown[]): Promise<unknown> => pooled.one(statement.text, values)
  const eachAlone = (batch: readonly Waiting[]): void => {
    for (const w of batch) alone(w.statement, w.values).then(w.resolve, w.reject)
  }

  /** One connection, one round trip of what waits; again while reads wait. */
  async function drain(): Promise<void> {
    running++
    try {
      while (waiting.length > 0) {
        if (!mode.batching) {
          eachAlone(waiting.splice(0))
          return
        }
        await trip()
      }
    } finally {
      running--
    }
  }

  async function trip(): Promise<void> {
    let client: pg.PoolClient
    try {
      client = await pool.connect()
    } catch (err) {
      const failed = unavailableOr(err, outage)
      for (const w of waiting.splice(0)) w.reject(failed)
      return
    }
    const batch = waiting.splice(0, MOST_IN_ONE_TRIP)
    let broken: Error | undefined
    try {
      if (batch.length === 0) return
      const db = watched({ query: (config) => client.query(config) }, outage)
      await prepare(db, preparedOn(client), [...new Map(batch.map((w) => [w.statement.name, w.statement])).values()])
      const answer = (await lostOr(db.query({ text: batch.map((w) => w.execute).join(';\n') }))) as pg.QueryResult | pg.QueryResult[]
      const results = Array.isArray(answer) ? answer : [answer]
      batch.forEach((w, i) => w.resolve(results[i]?.rows[0]))
    } catch (err) {
      if (err instanceof StoreUnavailable) {
        broken = err
        for (const w of batch) w.reject(err)
        return
      }
      if (err instanceof StatementsLost) mode.batching = false
      eachAlone(batch)
    } finally {
      client.release(broken)
    }
  }

  return {
    one<T>(text: string, values: readonly unknown[]): Promise<T | undefined> {
      const statement = { name: batchName(text), text }
      const execute = mode.batching ? executeText(statement.name, values) : undefined
      if (execute === undefined) return alone(statement, values) as Promise<T | undefined>
      return new Promise((resolve, reject) => {
        waiting.push({ statement, values, execute, resolve: resolve as (row: unknown) => void, reject })
        if (running < connections) void drain()
      })
    },
  }
}
