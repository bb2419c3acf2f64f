import type pg from 'pg'
import { COPIED_TABLES, KEYS_OF_UNNUMBERED, type CopiedTable, type CopySource, type SourceTable } from '../copy-source.ts'
export { COPIED_TABLES, type CopiedTable, type SourceTable }

/**
 * The PostgreSQL side of `replenish copy` (C15): a SQLite database's rows loaded into an empty
 * PostgreSQL one, ids kept, in one transaction, in batches of multi-row INSERTs (`unnest` of one
 * array per column; `pg` has no COPY without another package). The source hands rows over in
 * each table's column order; this side knows the target's columns and types from its catalog.
 */

/** Tables whose rows must not be in the target: the copied ones, and a lease some process took. */
const MUST_BE_EMPTY: readonly string[] = [...COPIED_TABLES, 'leases']

/**
 * Tables whose triggers would rewrite what is copied: events_chain sets prev_id and moves the
 * subscription's last_event_id and event_count, events_outbox makes deliveries, the due floor
 * trigger lowers due_floor. The copied values are already what those triggers made on SQLite.
 */
const TRIGGERED_TABLES = ['events', 'subscriptions'] as const

/** Rows per INSERT: large enough that a statement's overhead vanishes, small enough to hold a batch. */
export const BATCH_ROWS = 5000

/** Rows loaded so far of the table being copied (called after every batch). */
export type CopyProgress = (table: CopiedTable, done: number, total: number) => void

/** The target has rows already: a copy only goes into an empty database. */
export class TargetNotEmpty extends Error {
  override readonly name = 'TargetNotEmpty'
  readonly tables: readonly string[]
  constructor(tables: readonly string[]) {
    super(`the target database is not empty (rows in ${tables.join(', ')}); copy only into an empty database`)
    this.tables = tables
  }
}

interface Column {
  readonly name: string
  /** An array type for `unnest`: `bigint[]`, `integer[]`, `text[]`, `boolean[]`. */
  readonly arrayType: string
  readonly boolean: boolean
}

/**
 * Loads every table of `source` into the target behind `client` (migrated, and empty: checked
 * under the transaction's locks, so nothing can write meanwhile), with the triggers of the
 * tables that have them off for the load, then moves every identity sequence past the largest
 * id. The foreign keys are dropped for the load and added back after it, which checks every row
 * in one pass (a check per row inserted was half of the server's time). All in one transaction:
 * a copy that fails, or rows that break a foreign key, leave the target as it was.
 */
export async function bulkLoad(client: pg.PoolClient, source: CopySource, progress: CopyProgress): Promise<void> {
  const sources = new Map(COPIED_TABLES.map((t) => [t, source(t)] as const))
  await client.query('BEGIN')
  try {
    await client.query(`LOCK TABLE ${MUST_BE_EMPTY.join(', ')} IN ACCESS EXCLUSIVE MODE`)
    await refuseRows(client)
    const columns = await columnsOf(client)
    const keys = await foreignKeys(client)
    for (const k of keys) await client.query(`ALTER TABLE ${k.table} DROP CONSTRAINT ${k.name}`)
    for (const t of TRIGGERED_TABLES) await client.query(`ALTER TABLE ${t} DISABLE TRIGGER USER`)
    for (const [table, from] of sources) await loadTable(client, table, columns.get(table) ?? [], from, progress)
    for (const t of TRIGGERED_TABLES) await client.query(`ALTER TABLE ${t} ENABLE TRIGGER USER`)
    for (const k of keys) await client.query(`ALTER TABLE ${k.table} ADD CONSTRAINT ${k.name} ${k.definition}`)
    for (const [table, from] of sources) await moveSequence(client, table, from.lastId)
    await client.query('COMMIT')
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {})
    throw err
  }
}

/** Rows of every copied table in the target, as `count(*)` answers now. */
export async function countRows(client: pg.PoolClient): Promise<Map<CopiedTable, number>> {
  const union = COPIED_TABLES.map((t) => `SELECT '${t}' AS name, count(*) AS n FROM ${t}`).join(' UNION ALL ')
  const { rows } = await client.query<{ name: CopiedTable; n: number }>(union)
  return new Map(rows.map((r) => [r.name, Number(r.n)]))
}

async function refuseRows(client: pg.PoolClient): Promise<void> {
  const union = MUST_BE_EMPTY.map((t) => `SELECT '${t}' AS name WHERE EXISTS (SELECT 1 FROM ${t})`).join(' UNION ALL ')
  const { rows } = await client.query<{ name: string }>(union)
  if (rows.length > 0) throw new TargetNotEmpty(rows.map((r) => r.name))
}

/** Each copied table's columns in the target's schema (the one `search_path` names), in their order. */
async function columnsOf(client: pg.PoolClient): Promise<Map<string, Column[]>> {
  const { rows } = await client.query<{ table_name: string; column_name: string; data_type: string }>(
    `SELECT table_name, column_name, data_type FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ANY($1::text[]) ORDER BY table_name, ordinal_position`, [COPIED_TABLES])
  const out = new Map<string, Column[]>()
  for (const r of rows) {
    const list = out.get(r.table_name) ?? []
    list.push({ name: r.column_name, arrayType: `${r.data_type}[]`, boolean: r.data_type === 'boolean' })
    out.set(r.table_name, list)
  }
  return out
}

interface ForeignKey {
  readonly table: string
  readonly name: string
  /** As the catalog gives it back: `FOREIGN KEY (user_id) REFERENCES users(id)`. */
  readonly definition: string
}

/** The foreign keys of the target's schema, as they stand after migrating it. */
async function foreignKeys(client: pg.PoolClient): Promise<ForeignKey[]> {
  const { rows } = await client.query<ForeignKey>(
    `SELECT conrelid::regclass::text AS table, quote_ident(conname) AS name, pg_get_constraintdef(oid) AS definition
      FROM pg_constraint WHERE contype = 'f' AND connamespace = current_schema()::regnamespace ORDER BY conrelid, conname`)
  return rows
}

/**
 * One table, batch after batch. The next batch is read from the source while the server inserts
 * the one before, so neither side waits for the other.
 */
async function loadTable(client: pg.PoolClient, table: CopiedTable, columns: readonly Column[], source: SourceTable, progress: CopyProgress): Promise<void> {
  const names = columns.map((c) => c.name)
  const unnest = columns.map((c, i) => `$${i + 1}::${c.arrayType}`).join(', ')
  const text = `INSERT INTO ${table} (${names.join(', ')}) SELECT * FROM unnest(${unnest})`
  let done = 0
  let inserting: Promise<unknown> = Promise.resolve()
  try {
    for (const batch of source.batches(names, BATCH_ROWS)) {
      const values = columnArrays(columns, batch)
      await inserting
      progress(table, done, source.rows)
      inserting = client.query(text, values)
      done += batch.length
    }
  } catch (err) {
    // The source failed while a batch was on its way: that one's end is awaited, not left unheard.
    await inserting.catch(() => {})
    throw err
  }
  await inserting
  progress(table, done, source.rows)
}

/** Rows turned into one array per column, as `unnest` takes them; SQLite's 0/1 become booleans. */
function columnArrays(columns: readonly Column[], batch: readonly (readonly unknown[])[]): unknown[][] {
  return columns.map((c, i) => batch.map((row) => (c.boolean && row[i] !== null ? row[i] === 1 || row[i] === true : row[i])))
}

/** The identity sequence moved so the next id is above every copied one and every one the source ever handed out. */
async function moveSequence(client: pg.PoolClient, table: CopiedTable, sourceLastId: number): Promise<void> {
  if (KEYS_OF_UNNUMBERED[table] !== undefined) return
  await client.query(`SELECT setval(pg_get_serial_sequence($1, 'id'), m) FROM (SELECT GREATEST(max(id), $2::bigint) AS m FROM ${table}) x WHERE m > 0`,
    [table, sourceLastId])
}
