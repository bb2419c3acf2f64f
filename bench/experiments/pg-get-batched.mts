#!/usr/bin/env node
/**
 * Issue 30's second GET experiment on PostgreSQL: does sending the GETs that wait for a connection
 * together pay? 64 GETs in flight over 10 connections, each GET the versions statement of a kept
 * body (kept-bodies.ts). `single`: one statement a round trip, as the pool sends them today.
 * `batched`: a connection that comes free takes every GET waiting and sends them as one simple
 * query of EXECUTEs of a statement PREPAREd once per connection. CPU per GET on both sides.
 *
 *   taskset -c 0 node --import tsx bench/experiments/pg-get-batched.mts URL SCHEMA POSTMASTER_PID single|batched
 */
import pg from 'pg'
import { versionsOf } from '../../src/store/postgres/kept-bodies.ts'

// The measurement is plain JavaScript, without declarations.
const { measure } = await import('./measure.mjs' as string) as { measure: (o: object) => Promise<void> }
const [url, schema, pmArg, variant] = process.argv.slice(2) as [string, string, string, string]
const pm = Number(pmArg)
const pool = new pg.Pool({ connectionString: `${url}?options=-c%20search_path%3D${schema}`, max: 10 })
const VERSIONS = `SELECT o.user_id, ${versionsOf('o')} AS versions, (SELECT n FROM credential_generations WHERE id = 1) AS generation FROM subscriptions o WHERE o.id = $1`
const ids = (await pool.query('SELECT id FROM subscriptions ORDER BY id LIMIT 5000')).rows.map((r) => r.id as number)

async function single(id: number): Promise<string> {
  return (await pool.query({ name: 'v', text: VERSIONS, values: [id] })).rows[0].versions
}
const waiting: { id: number; done: (v: string) => void }[] = []
const prepared = new WeakSet<object>()
let free = 10
async function batched(id: number): Promise<string> {
  return new Promise((done) => {
    waiting.push({ id, done })
    if (free > 0) void drain()
  })
}
async function drain(): Promise<void> {
  free--
  const c = await pool.connect()
  try {
    while (waiting.length > 0) {
      const batch = waiting.splice(0, waiting.length)
      const prep = prepared.has(c) ? '' : `PREPARE v(bigint) AS ${VERSIONS}; `
      prepared.add(c)
      const results = await c.query(prep + batch.map((w) => `EXECUTE v(${w.id})`).join('; ')) as unknown as pg.QueryResult | pg.QueryResult[]
      const list = Array.isArray(results) ? results : [results]
      const rows = list.slice(list.length - batch.length)
      batch.forEach((w, i) => w.done(rows[i]!.rows[0].versions))
    }
  } finally {
    c.release()
    free++
  }
}
const f = variant === 'batched' ? batched : single
await measure({ label: variant, what: 'GET', each: f, items: ids, inFlight: 64, warm: 10000, n: 30000, postmaster: pm })
await pool.end()
