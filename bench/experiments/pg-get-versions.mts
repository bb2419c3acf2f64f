#!/usr/bin/env node
/**
 * Issue 30's GET experiment on PostgreSQL: what a GET's database traffic costs when the body is
 * read and rendered every time (`full`, today's statement: the subscription, its priced line items
 * as JSON, the credentials' generation; then parsed and rendered as the store does) against reading
 * only the versions of the rows the body is made of (`versions`: the subscription's xmin and its
 * line items', catalog items' and prices' xmins, with the generation) and answering a kept body.
 * CPU per GET on both sides: node from cpuUsage, PostgreSQL from /proc of the postmaster's tree.
 *
 *   taskset -c 0 node --import tsx bench/experiments/pg-get-versions.mts URL SCHEMA POSTMASTER_PID full|versions
 */
import pg from 'pg'
import { LINE_ITEM_COLUMNS, SUBSCRIPTION_COLUMNS, columns, pricedLineItemOf, subscriptionOf } from '../../src/store/postgres/rows.ts'
import { priceJoin } from '../../src/store/money-sql.ts'
import { renderSubscription } from '../../src/domain/representation.ts'

// The measurement is plain JavaScript, without declarations.
const { measure } = await import('./measure.mjs' as string) as { measure: (o: object) => Promise<void> }
const [url, schema, pmArg, variant] = process.argv.slice(2) as [string, string, string, string]
const pm = Number(pmArg)
const pool = new pg.Pool({ connectionString: `${url}?options=-c%20search_path%3D${schema}`, max: 10 })
const GEN = 'SELECT n FROM credential_generations WHERE id = 1'
const FULL = `SELECT ${columns(SUBSCRIPTION_COLUMNS, 'o')},
  (SELECT coalesce(json_agg(x ORDER BY x.id), '[]') FROM (
    SELECT ${columns(LINE_ITEM_COLUMNS, 'li')}, o.currency AS currency, p.amount AS unit_price, c.discount_bp AS discount_bp
    FROM line_items li ${priceJoin('o.currency')} WHERE li.subscription_id = o.id) x) AS line_items, (${GEN}) AS generation
  FROM subscriptions o WHERE o.id = $1`
const VERSIONS = `SELECT o.user_id, (${GEN}) AS generation, o.xmin::text || coalesce((SELECT string_agg(li.id || '.' || li.xmin || '.' || c.xmin || '.' || coalesce(p.xmin::text, ''), ',' ORDER BY li.id)
    FROM line_items li ${priceJoin('o.currency')} WHERE li.subscription_id = o.id), '') AS v
  FROM subscriptions o WHERE o.id = $1`
const ids = (await pool.query('SELECT id FROM subscriptions ORDER BY id LIMIT 5000')).rows.map((r) => r.id as number)
const kept = new Map<number, { v: string; body: string }>()
async function full(id: number): Promise<string> {
  const r = await pool.query({ name: 'full', text: FULL, values: [id] })
  const row = r.rows[0]
  return JSON.stringify(renderSubscription(subscriptionOf(row), row.line_items.map(pricedLineItemOf)))
}
async function versions(id: number): Promise<string> {
  const k = kept.get(id)
  if (k !== undefined) {
    const r = await pool.query({ name: 'versions', text: VERSIONS, values: [id] })
    if (r.rows[0].v === k.v) return k.body
  }
  const r = await pool.query({ name: 'fullv', text: `${FULL.replace('AS generation', 'AS generation, o.xmin::text AS v')}`, values: [id] })
  const body = JSON.stringify(renderSubscription(subscriptionOf(r.rows[0]), r.rows[0].line_items.map(pricedLineItemOf)))
  kept.set(id, { v: (await pool.query({ name: 'versions', text: VERSIONS, values: [id] })).rows[0].v, body })
  return body
}
const f = variant === 'versions' ? versions : full
await measure({ label: variant, what: 'GET', each: f, items: ids, inFlight: 10, warm: 10000, n: 20000, postmaster: pm })
await pool.end()
