import { DatabaseOpenError } from '../sqlite/open-errors.ts'
import { DatabaseTooNewError } from '../sqlite/migrations.ts'
import { sqlState } from './sql.ts'

/** The URL as logs and messages show it: the password never (it is a secret), the rest as given. */
export function maskedUrl(url: string): string {
  try {
    const u = new URL(url)
    if (u.password) u.password = '*****'
    return u.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:*****@')
  }
}

const NODE_TRANSIENT = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPIPE'])

/**
 * Whether a PostgreSQL failure may pass by itself (the server is starting, restarting, full of
 * connections, unreachable for now: exit 1, so a supervisor tries again) or needs a person
 * (a wrong password, no such database, a newer schema: exit 3); undefined when it is not the
 * database's at all (a bug of ours: a syntax error, a constraint we should have checked).
 */
export function postgresErrorKind(err: unknown): 'transient' | 'permanent' | undefined {
  if (err instanceof Error && /Connection terminated|connection timeout|timeout exceeded when trying to connect/i.test(err.message)) return 'transient'
  const state = sqlState(err)
  if (state === undefined) return undefined
  const cls = state.slice(0, 2)
  if (cls === '08' || cls === '53' || cls === '57' || cls === '58' || state === '55P03') return 'transient'
  if (cls === '28' || cls === '3D' || cls === '42' && state === '42501') return 'permanent'
  return undefined
}

/** What opening failed with, as the CLI reports it: the URL (masked) and the cause in words. */
export function connectError(url: string, err: unknown): unknown {
  if (err instanceof DatabaseOpenError) return err
  const where = maskedUrl(url)
  if (err instanceof DatabaseTooNewError || err?.constructor?.name === 'DurabilityRefused') return new DatabaseOpenError(where, (err as Error).message, false, err)
  // At open, a socket error can only be the database's (a DNS failure of the listen address comes later).
  const errno = (err as { code?: unknown } | null)?.code
  const kind = typeof errno === 'string' && NODE_TRANSIENT.has(errno) ? 'transient' : postgresErrorKind(err)
  if (kind === undefined) return err
  const message = (err as Error).message || String((err as { code?: unknown }).code)
  return new DatabaseOpenError(where, `PostgreSQL: ${message}`, kind === 'transient', err)
}
