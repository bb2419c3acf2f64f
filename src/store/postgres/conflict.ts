import { sqlState } from './sql.ts'

/**
 * What a unit decided from changed under it: a concurrent unit committed, after this unit's check
 * read, a row that check would have found (a unique index refused ours), or removed the row being
 * changed. Its SQLSTATE is a serialization failure's, so the store rolls the unit back and runs it
 * again (store.ts); the rerun's own check then sees the committed row and the unit answers as it
 * would have had it run second (a 422 "taken", a 404), on every caller, with nothing to map here.
 */
export class ConcurrentChange extends Error {
  override readonly name = 'ConcurrentChange'
  readonly code = '40001'
}

/**
 * The write, unless the unique index `index` refused it: a 23505 is raised only once the other
 * row is committed (an insert waits for a transaction that holds the same key), so it is the
 * race above, never a value this unit could have seen taken.
 */
export async function unlessTaken<T>(write: Promise<T>, index: string): Promise<T> {
  try {
    return await write
  } catch (err) {
    if (sqlState(err) === '23505' && (err as { constraint?: unknown }).constraint === index) {
      throw new ConcurrentChange(`another unit took the value of the unique index ${index} first`, { cause: err })
    }
    throw err
  }
}

/**
 * The write, unless the foreign key `constraint` refused it: the row it refers to (a catalog item
 * validation found subscribable) was deleted and committed after the check. The rerun's
 * validation then answers the 422 the request would have had, had it come second.
 */
export async function unlessRemoved<T>(write: Promise<T>, constraint: string): Promise<T> {
  try {
    return await write
  } catch (err) {
    if (sqlState(err) === '23503' && (err as { constraint?: unknown }).constraint === constraint) {
      throw new ConcurrentChange(`another unit removed the row ${constraint} refers to`, { cause: err })
    }
    throw err
  }
}

/** The row an UPDATE … RETURNING changed; none when a concurrent unit removed it after this unit found it. */
export function changed<T>(row: T | undefined, what: string): T {
  if (row === undefined) throw new ConcurrentChange(`${what} was removed by another unit`)
  return row
}
