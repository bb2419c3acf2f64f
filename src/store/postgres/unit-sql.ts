import { createHash } from 'node:crypto'
import pg from 'pg'
import pgUtils from 'pg/lib/utils.js'
import { CredentialsMoved, type CredentialCheck } from '../api.ts'
import { CREDENTIAL_GENERATION, Secret, nameOf, sqlState, type Queryable, type Sql } from './sql.ts'

/**
 * A unit's statements on its one connection, in as few round trips as their answers allow
 * (issue 30: a round trip costs both sides about 50 µs of CPU, more than most of our statements).
 * Nothing is sent until the unit needs an answer. BEGIN (with the credentials' generation when a
 * cached key is to be confirmed) and the writes whose answer nobody reads (`later`) wait, and go
 * out in front of the next statement that answers something, or in front of COMMIT: a line item's
 * PATCH is two round trips (BEGIN and the locking read; the UPDATE, the touch, the event and
 * COMMIT) where it was six.
 *
 * Several statements travel as one simple query, which takes no parameters: each statement is a
 * prepared statement of the connection's (PREPARE, the first time the connection meets it, in a
 * round trip of its own), executed with its values written as literals. The literals are the text
 * the driver would have sent as parameters (`prepareValue`), quoted (`escapeLiteral`), so the
 * server reads the same values into the same inferred types, and keeps the plan as it does for
 * the driver's named statements. A statement with a value that must not or cannot be written
 * into the text (a `Secret`, a Buffer) is sent as a parameterized query after what waits.
 *
 * A failure of a write that waited surfaces from the statement or COMMIT it travelled with: the
 * unit rolls back as it would have, and a deadlock runs it again (unit.ts).
 *
 * PREPARE is the connection's session state. A pooler in transaction mode (PgBouncer) hands each
 * transaction whichever server connection is free, so a statement prepared on one is missing on
 * the next (or another instance prepared it there). The names are therefore the text's hash, so
 * a name found anywhere is the same statement. A statement found missing, or a name found taken,
 * throws StatementsLost: the unit rolls back, and the store runs it again and every unit after it
 * one statement a round trip (`prepared` undefined), the driver's way, as before issue 30.
 */
export interface UnitSql extends Sql {
  /** Ends the unit's transaction with what still waits; sends nothing if nothing was ever asked. */
  end(verb: 'COMMIT' | 'ROLLBACK'): Promise<void>
  /** Something reached the server: a failed unit must send ROLLBACK. */
  readonly begun: boolean
}

/** The statements a connection has prepared (or is preparing), by name. */
export type Prepared = Map<string, Promise<void>>

/** Each connection's prepared statements: a client dropped by the pool takes its own along. */
const preparedOf = new WeakMap<pg.PoolClient, Prepared>()
export function preparedOn(client: pg.PoolClient): Prepared {
  let prepared = preparedOf.get(client)
  if (prepared === undefined) preparedOf.set(client, (prepared = new Map()))
  return prepared
}

/** The server does not keep this connection's prepared statements between transactions: a pooler is in between. */
export class StatementsLost extends Error {
  constructor(cause: unknown) {
    super('PostgreSQL did not keep prepared statements between transactions (a pooler in transaction mode?)', { cause })
  }
}

/** SQLSTATEs of a prepared statement missing (26000) or a name already taken (42P05). */
const LOST = new Set(['26000', '42P05'])

const hashed = new Map<string, string>()
/** A statement's PREPARE name: its text's hash, the same in every process. */
export function batchName(text: string): string {
  let name = hashed.get(text)
  if (name === undefined) hashed.set(text, (name = `b${createHash('sha256').update(text).digest('hex').slice(0, 32)}`))
  return name
}

/** A statement and the name it is PREPAREd under (`batchName`). */
export interface Statement {
  readonly name: string
  readonly text: string
}

/** `prepared` undefined: one statement a round trip, as parameters (a pooler keeps no PREPARE). */
export function unitSql(db: Queryable, prepared: Prepared | undefined, credentials?: CredentialCheck): UnitSql {
  let waiting: string[] = credentials === undefined ? ['BEGIN'] : ['BEGIN', CREDENTIAL_GENERATION]
  let checkAt = credentials === undefined ? -1 : 1
  // The statements of what waits: each is PREPAREd (or its PREPARE awaited) before they are sent.
  let fresh: Statement[] = []
  let begun = false
  let sent = 0

  /** Sends what waits with `last` (if any), and answers each statement's result. */
  async function send(last?: string, statement?: Statement): Promise<pg.QueryResult[]> {
    const statements = waiting
    const toPrepare = statement === undefined ? fresh : [...fresh, statement]
    const check = checkAt
    waiting = []
    fresh = []
    checkAt = -1
    if (last !== undefined) statements.push(last)
    if (statements.length === 0) return []
    begun = true
    if (prepared !== undefined) await prepare(db, prepared, toPrepare)
    const answer = (await lostOr(db.query({ text: statements.join(';\n') }))) as pg.QueryResult | pg.QueryResult[]
    const results = Array.isArray(answer) ? answer : [answer]
    if (check >= 0 && credentials !== undefined) {
      if ((results[check]?.rows[0] as { n?: unknown } | undefined)?.n !== credentials.generation) throw new CredentialsMoved()
      credentials.verified = true
    }
    return results
  }

  async function query(text: string, values: readonly unknown[] = []): Promise<pg.QueryResult> {
    sent++
    const statement = { name: batchName(text), text }
    const execute = prepared === undefined ? undefined : executeText(statement.name, values)
    if (execute !== undefined) return (await send(execute, statement)).at(-1) as pg.QueryResult
    await send()
    return db.query({ name: nameOf(text), text, values: values as unknown[] })
  }

  return {
    rows: async <T>(text: string, values?: readonly unknown[]) => (await query(text, values)).rows as T[],
    one: async <T>(text: string, values?: readonly unknown[]) => (await query(text, values)).rows[0] as T | undefined,
    run: async (text, values) => (await query(text, values)).rowCount ?? 0,
    async later(text, values = []) {
      const statement = { name: batchName(text), text }
      const execute = prepared === undefined ? undefined : executeText(statement.name, values)
      if (execute === undefined) {
        await query(text, values)
        return
      }
      sent++
      waiting.push(execute)
      fresh.push(statement)
    },
    async end(verb) {
      // A unit that asked nothing and has no key to confirm needs no transaction at all.
      if (!begun && waiting.length === 1) return
      await send(verb)
    },
    get begun() {
      return begun
    },
    get sent() {
      return sent
    },
    inUnit: true,
  }
}

/** PREPAREs the statements this connection has not met yet, in one round trip; waits for those another call is preparing. */
export async function prepare(db: Queryable, prepared: Prepared, statements: readonly Statement[]): Promise<void> {
  if (statements.length === 0) return
  const fresh = new Map<string, string>()
  for (const { name, text } of statements) if (!prepared.has(name)) fresh.set(name, text)
  if (fresh.size > 0) {
    const made = lostOr(db.query({ text: [...fresh].map(([name, text]) => `PREPARE ${name} AS ${text}`).join(';\n') })).then(() => undefined)
    for (const name of fresh.keys()) prepared.set(name, made)
    made.catch(() => {
      for (const name of fresh.keys()) prepared.delete(name)
    })
  }
  await Promise.all(statements.map(({ name }) => prepared.get(name)))
}

/** The answer, or StatementsLost for a prepared statement missing or a name taken. */
export function lostOr<T>(answer: Promise<T>): Promise<T> {
  return answer.catch((err: unknown) => {
    throw LOST.has(sqlState(err) ?? '') ? new StatementsLost(err) : err
  })
}

/**
 * `EXECUTE name(literal, …)`, or undefined when a value must go as a parameter: a Secret, a
 * Buffer (no text form), or text with a NUL (it would end a simple query's text, where a
 * parameter is refused whole).
 */
export function executeText(name: string, values: readonly unknown[]): string | undefined {
  const literals: string[] = []
  for (const value of values) {
    if (value instanceof Secret) return undefined
    const text = pgUtils.prepareValue(value)
    if (text === null) literals.push('NULL')
    else if (typeof text === 'string' && !text.includes('\0')) literals.push(pg.escapeLiteral(text))
    else return undefined
  }
  return literals.length === 0 ? `EXECUTE ${name}` : `EXECUTE ${name}(${literals.join(', ')})`
}
