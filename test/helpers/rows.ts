import type { Store } from '../../src/store/api.ts'
import { openStoreAt, postgresOf, sqliteOf } from './store.ts'

/**
 * Rows as stored, on whichever backend the suite runs, for the few checks and set-ups the store
 * interface has no word for: "this request changed nothing at all", a secret blanked in its row, a
 * row made long ago. Statements are written once in the SQL both dialects share, with `?`
 * placeholders (numbered `$1…` for PostgreSQL here); boolean columns are written `true`/`false`
 * (SQLite answers them as 1/0). A test of a SQLite mechanism uses `sqliteOf` instead.
 */
export interface TestSql {
  all(text: string, ...args: unknown[]): Promise<Record<string, unknown>[]>
  get(text: string, ...args: unknown[]): Promise<Record<string, unknown> | undefined>
  /** How many rows the statement changed. */
  run(text: string, ...args: unknown[]): Promise<number>
  /** Several statements, no arguments, as one transaction. */
  exec(text: string): Promise<void>
}

export function testSql(store: Store): TestSql {
  if (store.kind === 'postgres') {
    const { pool } = postgresOf(store)
    const all = async (text: string, args: unknown[]) => (await pool.query(numbered(text), args)).rows as Record<string, unknown>[]
    return {
      all: (text, ...args) => all(text, args),
      get: async (text, ...args) => (await all(text, args))[0],
      run: async (text, ...args) => (await pool.query(numbered(text), args)).rowCount ?? 0,
      // One query message of several statements is one transaction on PostgreSQL.
      exec: async (text) => void (await pool.query(text)),
    }
  }
  const { db } = sqliteOf(store)
  type Arg = null | number | bigint | string
  return {
    all: async (text, ...args) => db.prepare(text).all(...(args as Arg[])).map((r) => ({ ...r })),
    get: async (text, ...args) => {
      const r = db.prepare(text).get(...(args as Arg[]))
      return r === undefined ? undefined : { ...r }
    },
    run: async (text, ...args) => Number(db.prepare(text).run(...(args as Arg[])).changes),
    exec: async (text) => db.exec(`BEGIN; ${text}; COMMIT`),
  }
}

/** `?` placeholders as PostgreSQL's `$1`, `$2`…, leaving quoted text alone. */
function numbered(text: string): string {
  let n = 0
  return text.replace(/'(?:[^']|'')*'|\?/g, (m) => (m === '?' ? `$${++n}` : m))
}

/** The tables of the store's schema, by name (SQLite's own `sqlite_*` bookkeeping left out). */
export async function tableNames(store: Store): Promise<string[]> {
  const rows = store.kind === 'postgres'
    ? await testSql(store).all("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
    : await testSql(store).all("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'")
  return rows.map((r) => String(r['name'])).sort()
}

/** The count of rows in a table (for "a 422 creates nothing"). */
export async function countRows(store: Store, table: string): Promise<number> {
  return Number((await testSql(store).get(`SELECT count(*) AS n FROM ${table}`))?.['n'])
}

/**
 * Every row of every table: compare before and after to prove a request changed nothing. A
 * credential's `last_used_at` is left out: authenticating records it (at most once a minute,
 * whatever the request then does), and that is not a change the request makes. `lastUsed` keeps
 * it, where nothing authenticates.
 */
export async function snapshot(store: Store, { lastUsed = false } = {}): Promise<string> {
  const left = lastUsed ? '' : 'last_used_at'
  return store.kind === 'postgres' ? postgresSnapshot(store, left) : sqliteSnapshot(store, left)
}

/** `snapshot` of the database a CLI run was given (REPLENISH_DB), through a store opened for it. */
export async function snapshotAt(location: string, options: { lastUsed?: boolean } = {}): Promise<string> {
  const store = await openStoreAt(location)
  try {
    return await snapshot(store, options)
  } finally {
    await store.close()
  }
}

function sqliteSnapshot(store: Store, left: string): string {
  const { db } = sqliteOf(store)
  const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map((r) => r.name)
  // WITHOUT ROWID tables (idempotency_keys) have no rowid to order by: they scan in primary key order.
  const withoutRowid = new Set((db.prepare('SELECT name FROM pragma_table_list WHERE wr = 1').all() as { name: string }[]).map((r) => r.name))
  const rows = (t: string) => db.prepare(`SELECT * FROM ${t}${withoutRowid.has(t) ? '' : ' ORDER BY rowid'}`).all().map(({ [left]: _, ...row }) => row)
  return JSON.stringify(tables.map((t) => [t, rows(t)]))
}

/**
 * The tables of the test's schema (its search_path), each row as JSON text in text order (there
 * is no rowid), all read in one snapshot of the database.
 */
async function postgresSnapshot(store: Store, left: string): Promise<string> {
  const client = await postgresOf(store).pool.connect()
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    const tables = (await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name COLLATE \"C\"",
    )).rows.map((r) => r.name)
    const out: [string, string[]][] = []
    for (const t of tables) {
      const rows = await client.query<{ row: string }>(`SELECT row FROM (SELECT (to_jsonb(r) - $1::text)::text AS row FROM ${t} r) s ORDER BY row COLLATE "C"`, [left])
      out.push([t, rows.rows.map((r) => r.row)])
    }
    await client.query('COMMIT')
    return JSON.stringify(out)
  } finally {
    client.release()
  }
}

/** `n` users `<prefix><i>@<domain>` with external ids `<prefix>-<i>`, ids in that order, in one statement. */
export async function bulkUsers(store: Store, n: number, prefix: string, domain: string): Promise<void> {
  const at = '2026-01-01T00:00:00.000Z'
  const select = `'${prefix}' || i || '@${domain}', '${prefix}-' || i, '${at}', '${at}'`
  await testSql(store).exec(store.kind === 'postgres'
    ? `INSERT INTO users (email, external_id, created_at, updated_at) SELECT ${select} FROM generate_series(1, ${n}) AS i ORDER BY i`
    : `WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < ${n})
       INSERT INTO users (email, external_id, created_at, updated_at) SELECT ${select} FROM k ORDER BY i`)
}
