#!/usr/bin/env node
/**
 * Issue 30's experiment: a PATCH of a line item's quantity on PostgreSQL as replenish's unit does it
 * (BEGIN with the credentials' generation, the locking read, the UPDATE, the touch, the event,
 * COMMIT: six round trips) against one call of a plpgsql function doing the same statements (one
 * round trip, autocommit), and against `batch`: the same statements PREPAREd once per connection and
 * sent as two simple queries (BEGIN with the locking read; the writes with COMMIT), as
 * src/store/postgres/unit-sql.ts now does, and `inline`: the same two simple queries with the
 * statements written out unprepared (no session state, planned every time), and `chained`: a unit's
 * second round trip carrying the next unit's first (one round trip a PATCH). CPU per PATCH on both sides: node from cpuUsage, PostgreSQL from /proc
 * of the postmaster's process tree (so the server must run on this machine). No HTTP, no replenish
 * code: only the database traffic of a PATCH, to size the gain before building it.
 *
 *   npm run bench -- --db postgres://postgres@127.0.0.1:5432/postgres --scenarios get --seconds 1 --reps 1 --keep-db
 *   taskset -c 0 node bench/experiments/pg-one-trip.mjs postgres://postgres@127.0.0.1:5432/postgres SCHEMA POSTMASTER_PID multi
 *   taskset -c 0 node bench/experiments/pg-one-trip.mjs postgres://postgres@127.0.0.1:5432/postgres SCHEMA POSTMASTER_PID fn
 *   taskset -c 0 node bench/experiments/pg-one-trip.mjs postgres://postgres@127.0.0.1:5432/postgres SCHEMA POSTMASTER_PID batch
 *
 * It creates the function `onetrip_patch` in that schema and writes PATCHes and events there:
 * use a kept bench schema, never a shop's.
 */
import pg from 'pg'
import { measure } from './measure.mjs'
const [url, schema, pmArg, variant] = process.argv.slice(2)
const pm = Number(pmArg)
const pool = new pg.Pool({ connectionString: `${url}?options=-c%20search_path%3D${schema}`, max: 10 })
await pool.query(`CREATE OR REPLACE FUNCTION onetrip_patch(p_id bigint, p_user bigint, p_qty int, p_at text, p_gen bigint, p_actor text, p_actor_id bigint, p_req text)
  RETURNS text LANGUAGE plpgsql AS $$
DECLARE li record; g bigint; body text;
BEGIN
  SELECT n INTO g FROM credential_generations WHERE id = 1;
  IF g <> p_gen THEN RETURN 'moved'; END IF;
  SELECT l.id, l.subscription_id, l.subscribable_id, l.quantity, l.created_at, l.one_time, s.user_id AS owner, p.amount, c.discount_bp
    INTO li FROM line_items l JOIN subscriptions s ON s.id = l.subscription_id JOIN subscribables c ON c.id = l.subscribable_id
    LEFT JOIN subscribable_prices p ON p.subscribable_id = l.subscribable_id AND p.currency = s.currency
    WHERE l.id = p_id FOR UPDATE OF s, l;
  IF NOT FOUND THEN RETURN 'not_found'; END IF;
  IF li.owner <> p_user THEN RETURN 'not_authorized'; END IF;
  UPDATE line_items SET quantity = p_qty, updated_at = p_at WHERE id = p_id;
  UPDATE subscriptions SET updated_at = p_at WHERE id = li.subscription_id;
  body := json_build_object('id', li.id, 'subscription_id', li.subscription_id, 'subscribable_id', li.subscribable_id, 'quantity', p_qty,
    'one_time', li.one_time, 'price', null, 'discount_percent', null, 'total', null, 'created_at', li.created_at, 'updated_at', p_at)::text;
  INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
    VALUES ('line_item.updated', li.subscription_id, '{"object":' || body || '}', p_at, p_actor, p_actor_id, p_req);
  RETURN body;
END $$`)
const items = (await pool.query('SELECT li.id, s.user_id FROM line_items li JOIN subscriptions s ON s.id = li.subscription_id ORDER BY li.id LIMIT 5000')).rows
const gen = (await pool.query('SELECT n FROM credential_generations WHERE id = 1')).rows[0].n
let q = 1
async function multi(it) {
  const c = await pool.connect()
  try {
    await c.query({ text: 'BEGIN; SELECT n FROM credential_generations WHERE id = 1' })
    const r = await c.query({ name: 'lock', text: `SELECT l.id, l.subscription_id, l.subscribable_id, l.quantity, l.created_at, l.updated_at, l.one_time, s.user_id AS owner_id, p.amount, c.discount_bp
      FROM line_items l JOIN subscriptions s ON s.id = l.subscription_id JOIN subscribables c ON c.id = l.subscribable_id
      LEFT JOIN subscribable_prices p ON p.subscribable_id = l.subscribable_id AND p.currency = s.currency WHERE l.id = $1 FOR UPDATE OF s, l`, values: [it.id] })
    const li = r.rows[0]
    const at = new Date().toISOString(); const qty = (q++ % 7) + 1
    await c.query({ name: 'upd', text: 'UPDATE line_items SET quantity = $1, updated_at = $2 WHERE id = $3', values: [qty, at, li.id] })
    await c.query({ name: 'touch', text: 'UPDATE subscriptions SET updated_at = $1 WHERE id = $2', values: [at, li.subscription_id] })
    const body = JSON.stringify({ id: li.id, subscription_id: li.subscription_id, subscribable_id: li.subscribable_id, quantity: qty, one_time: li.one_time, price: null, discount_percent: null, total: null, created_at: li.created_at, updated_at: at })
    await c.query({ name: 'ev', text: `INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
      VALUES ($1, $2, $8 || $3 || $9, $4, $5, $6, $7) RETURNING id`, values: ['line_item.updated', li.subscription_id, body, at, 'api_key', 1, 'req', '{"object":', '}'] })
    await c.query({ text: 'COMMIT' })
  } finally { c.release() }
}
async function fn(it) {
  const r = await pool.query({ name: 'fn', text: 'SELECT onetrip_patch($1, $2, $3, $4, $5, $6, $7, $8) AS r', values: [it.id, it.user_id, (q++ % 7) + 1, new Date().toISOString(), gen, 'api_key', 1, 'req'] })
  if (r.rows[0].r.length < 20) throw new Error(r.rows[0].r)
}
/** PostgreSQL's own prepared statements (PREPARE), made once per connection; a unit as two simple queries. */
const LOCK = `SELECT l.id, l.subscription_id, l.subscribable_id, l.quantity, l.created_at, l.updated_at, l.one_time, s.user_id AS owner_id, p.amount, c.discount_bp
      FROM line_items l JOIN subscriptions s ON s.id = l.subscription_id JOIN subscribables c ON c.id = l.subscribable_id
      LEFT JOIN subscribable_prices p ON p.subscribable_id = l.subscribable_id AND p.currency = s.currency WHERE l.id = $1 FOR UPDATE OF s, l`
const prepared = new WeakSet()
const lit = (v) => (v === null ? 'NULL' : typeof v === 'number' ? String(v) : pg.Client.prototype.escapeLiteral(String(v)))
async function batch(it) {
  const c = await pool.connect()
  try {
    const prep = prepared.has(c) ? '' : `PREPARE lock(bigint) AS ${LOCK}; PREPARE upd(int, text, bigint) AS UPDATE line_items SET quantity = $1, updated_at = $2 WHERE id = $3;
      PREPARE touch(text, bigint) AS UPDATE subscriptions SET updated_at = $1 WHERE id = $2;
      PREPARE ev(text, bigint, text, text, text, bigint, text) AS INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
      VALUES ($1, $2, '{"object":' || $3 || '}', $4, $5, $6, $7) RETURNING id; `
    prepared.add(c)
    const results = await c.query(`${prep}BEGIN; EXECUTE lock(${it.id})`)
    const li = results[results.length - 1].rows[0]
    const at = new Date().toISOString(); const qty = (q++ % 7) + 1
    const body = JSON.stringify({ id: li.id, subscription_id: li.subscription_id, subscribable_id: li.subscribable_id, quantity: qty, one_time: li.one_time, price: null, discount_percent: null, total: null, created_at: li.created_at, updated_at: at })
    await c.query(`EXECUTE upd(${qty}, ${lit(at)}, ${li.id}); EXECUTE touch(${lit(at)}, ${li.subscription_id}); EXECUTE ev('line_item.updated', ${li.subscription_id}, ${lit(body)}, ${lit(at)}, 'api_key', 1, 'req'); COMMIT`)
  } finally { c.release() }
}
/**
 * `chained`: a unit's writes and COMMIT travel with the next unit's BEGIN and locking read, on the
 * same connection, so a PATCH is one round trip in steady state (units waiting for a connection
 * would ride on the one before). Each connection keeps the unit it began for the next call.
 */
const chains = []
async function chained(it) {
  let chain = chains.pop()
  if (chain === undefined) {
    const c = await pool.connect()
    await c.query(`PREPARE lock(bigint) AS ${LOCK}; PREPARE upd(int, text, bigint) AS UPDATE line_items SET quantity = $1, updated_at = $2 WHERE id = $3;
      PREPARE touch(text, bigint) AS UPDATE subscriptions SET updated_at = $1 WHERE id = $2;
      PREPARE ev(text, bigint, text, text, text, bigint, text) AS INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id)
      VALUES ($1, $2, '{"object":' || $3 || '}', $4, $5, $6, $7) RETURNING id`)
    const results = await c.query(`BEGIN; EXECUTE lock(${it.id})`)
    chain = { c, li: results[results.length - 1].rows[0] }
    chains.push(chain)
    return
  }
  const li = chain.li
  const at = new Date().toISOString(); const qty = (q++ % 7) + 1
  const body = JSON.stringify({ id: li.id, subscription_id: li.subscription_id, subscribable_id: li.subscribable_id, quantity: qty, one_time: li.one_time, price: null, discount_percent: null, total: null, created_at: li.created_at, updated_at: at })
  const results = await chain.c.query(`EXECUTE upd(${qty}, ${lit(at)}, ${li.id}); EXECUTE touch(${lit(at)}, ${li.subscription_id}); EXECUTE ev('line_item.updated', ${li.subscription_id}, ${lit(body)}, ${lit(at)}, 'api_key', 1, 'req'); COMMIT;
    BEGIN; EXECUTE lock(${it.id})`)
  chain.li = results[results.length - 1].rows[0]
  chains.push(chain)
}
/** The same two simple queries with the statements written out, unprepared: no session state, planned each time. */
async function inline(it) {
  const c = await pool.connect()
  try {
    const results = await c.query(`BEGIN; ${LOCK.replace('$1', lit(String(it.id)))}`)
    const li = results[results.length - 1].rows[0]
    const at = new Date().toISOString(); const qty = (q++ % 7) + 1
    const body = JSON.stringify({ id: li.id, subscription_id: li.subscription_id, subscribable_id: li.subscribable_id, quantity: qty, one_time: li.one_time, price: null, discount_percent: null, total: null, created_at: li.created_at, updated_at: at })
    await c.query(`UPDATE line_items SET quantity = ${lit(String(qty))} WHERE id = ${lit(String(li.id))}; UPDATE subscriptions SET updated_at = ${lit(at)} WHERE id = ${lit(String(li.subscription_id))};
      INSERT INTO events (type, subscription_id, data, created_at, actor_type, actor_id, request_id) VALUES ('line_item.updated', ${lit(String(li.subscription_id))}, '{"object":' || ${lit(body)} || '}', ${lit(at)}, 'api_key', '1', 'req') RETURNING id; COMMIT`)
  } finally { c.release() }
}
const f = variant === 'fn' ? fn : variant === 'batch' ? batch : variant === 'inline' ? inline : variant === 'chained' ? chained : multi
await measure({ label: variant, what: 'PATCH', each: f, items, inFlight: 10, warm: 1000, n: 8000, postmaster: pm })
for (const { c } of chains) {
  await c.query('ROLLBACK')
  c.release()
}
await pool.end()
