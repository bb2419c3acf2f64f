import pg from 'pg'

/**
 * How the PostgreSQL repositories talk to the database, on whatever `Queryable` they were given:
 * the pool for reads outside a unit, one statement a round trip; inside a unit its own client,
 * through unit-sql.ts, which sends several in one round trip where no answer is awaited between
 * them. Every statement is prepared once per connection under a name derived from its text, so
 * the server parses and plans a hot statement once, not per request.
 */
export interface Sql {
  /** The rows as objects. */
  rows<T>(text: string, values?: readonly unknown[]): Promise<T[]>
  /** The first row, or undefined. */
  one<T>(text: string, values?: readonly unknown[]): Promise<T | undefined>
  /** How many rows the statement touched. */
  run(text: string, values?: readonly unknown[]): Promise<number>
  /**
   * A write whose answer nobody reads. Inside a unit it waits, and is sent with the unit's next
   * statement or its COMMIT (unit-sql.ts): its failure surfaces there. Elsewhere it runs now.
   */
  later(text: string, values?: readonly unknown[]): Promise<void>
  /** Inside a unit's transaction (a lock taken now holds until it commits), not the pool's autocommit. */
  readonly inUnit: boolean
  /**
   * How many statements went through this Sql so far, sent or waiting: a repository that keeps
   * what it read (subscriptions.ts) knows by it that nothing else wrote since.
   */
  readonly sent: number
}

/**
 * ` FOR UPDATE` (or another locking clause) inside a unit, nothing on the pool: the row a unit
 * reads and then changes stays as it read it until it commits, whichever instance writes
 * meanwhile (the other waits). Outside a unit the lock would end with the statement anyway.
 */
export function lockedInUnit(sql: Sql, clause = 'FOR UPDATE'): string {
  return sql.inUnit ? ` ${clause}` : ''
}

/**
 * The customers' credentials' generation (migration 16), as a scalar subquery: read in the same
 * statement (so the same snapshot) as a request's data, it tells whether a key cached at that
 * generation still holds (api/kit/auth.ts).
 */
export const CREDENTIAL_GENERATION = 'SELECT n FROM credential_generations WHERE id = 1'

/**
 * A value no statement's text may carry (a webhook secret, a CSRF token): a unit sends it as a
 * parameter, never as a literal (unit-sql.ts), so it shows in no `pg_stat_activity.query` and no
 * server log of a failed statement. node-postgres unwraps it itself (`toPostgres`).
 */
export class Secret {
  readonly #value: string
  constructor(value: string) {
    this.#value = value
  }
  toPostgres(): string {
    return this.#value
  }
}

/** What statements are sent through: the pool, a unit's client, or either watched (connection.ts). */
export interface Queryable {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>
}

const names = new Map<string, string>()
/** The name a statement is prepared under on every connection, from its text. */
export const nameOf = (text: string): string => {
  let name = names.get(text)
  if (name === undefined) {
    name = `r${names.size + 1}`
    names.set(text, name)
  }
  return name
}

export function sqlOn(db: Queryable, inUnit = false): Sql {
  let sent = 0
  const query = async (text: string, values: readonly unknown[] | undefined): Promise<pg.QueryResult> => {
    sent++
    return db.query({ name: nameOf(text), text, values: values as unknown[] | undefined })
  }
  return {
    rows: async <T>(text: string, values?: readonly unknown[]) => (await query(text, values)).rows as T[],
    one: async <T>(text: string, values?: readonly unknown[]) => (await query(text, values)).rows[0] as T | undefined,
    run: async (text, values) => (await query(text, values)).rowCount ?? 0,
    later: async (text, values) => {
      await query(text, values)
    },
    inUnit,
    get sent() {
      return sent
    },
  }
}

/**
 * Integers come back as numbers: int8 (ids, counts) is text in pg by default, and numeric (a sum
 * of bigints) too. Every id and count of ours fits a double exactly; one that would not is an
 * error, never a rounded number.
 */
export function numberTypes(): pg.CustomTypesConfig {
  const toNumber = (text: string): number => {
    const n = Number(text)
    if (!Number.isSafeInteger(n) && !(Number.isFinite(n) && text.includes('.'))) throw new Error(`integer out of JavaScript's safe range: ${text}`)
    return n
  }
  return {
    getTypeParser: ((oid: number, format?: string) => {
      if (oid === 20 || oid === 1700) return toNumber
      return pg.types.getTypeParser(oid, format as 'text')
    }) as pg.CustomTypesConfig['getTypeParser'],
  }
}

/** SQLSTATEs a unit is run again for: a serialization failure and a deadlock (the other side won). */
export const RETRYABLE = new Set(['40001', '40P01'])

/** The SQLSTATE of an error PostgreSQL raised, or undefined. */
export function sqlState(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
}
