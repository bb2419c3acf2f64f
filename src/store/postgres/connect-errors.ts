import { DatabaseOpenError } from '../sqlite/open-errors.ts'
import { DatabaseTooNewError } from '../sqlite/migrations.ts'
import { sqlState } from './sql.ts'
import { TlsSettingRefused, type SslMode } from './tls.ts'

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

/** The server's commits are not durable (`synchronous_commit = off`) and REPLENISH_SYNCHRONOUS=FULL refuses that: exit 3. */
export class DurabilityRefused extends Error {
  override readonly name = 'DurabilityRefused'
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

/** Node's TLS errors: a certificate that does not verify, a handshake that fails. */
const TLS_ERROR = /CERT|SELF_SIGNED|UNABLE_TO_(GET|VERIFY)|^ERR_TLS_|^ERR_SSL_/

/**
 * What opening failed with, as the CLI reports it: the URL (masked) and the cause in one line,
 * exit 1 when it may pass (DatabaseOpenError.transient), 3 when someone must change something;
 * a TLS setting that cannot work as given is the CLI's exit 2 (TlsSettingRefused) and passes
 * through, as do bugs.
 */
export function connectError(url: string, err: unknown, sslmode: SslMode): unknown {
  if (err instanceof DatabaseOpenError || err instanceof TlsSettingRefused) return err
  const where = maskedUrl(url)
  const refuse = (reason: string): DatabaseOpenError => new DatabaseOpenError(where, reason, false, err)
  if (err instanceof DatabaseTooNewError || err instanceof DurabilityRefused) return refuse((err as Error).message)
  const message = err instanceof Error ? err.message : String(err)
  // node-postgres: a SCRAM (or cleartext) login with no password to give.
  if (/client password must be a string|password must be a string/i.test(message)) {
    return refuse('the server asks for a password and none was given: set PGPASSWORD (or put it in the URL, postgres://user:password@host/db)')
  }
  if (message === 'The server does not support SSL connections') {
    return refuse(`the server does not offer TLS, and sslmode=${sslmode} requires it: turn ssl on at the server, or lower sslmode (docs/postgresql.md)`)
  }
  const errno = (err as { code?: unknown } | null)?.code
  if (typeof errno === 'string' && TLS_ERROR.test(errno)) {
    return refuse(`the server's TLS certificate or handshake was refused under sslmode=${sslmode} (${errno}: ${message}); sslrootcert=FILE names the CA that signed it (docs/postgresql.md)`)
  }
  // A name that does not resolve here is the database URL's host (serve's own --host resolves later, at listen).
  if ((errno === 'ENOTFOUND' || errno === 'EAI_AGAIN') && (err as { syscall?: unknown }).syscall === 'getaddrinfo') {
    const host = JSON.stringify((err as { hostname?: string }).hostname ?? '?')
    return new DatabaseOpenError(where, `no address found for its host ${host} (${errno}): check the host in --db / REPLENISH_DB`, true, err)
  }
  const kind = typeof errno === 'string' && NODE_TRANSIENT.has(errno) ? 'transient' : postgresErrorKind(err)
  if (kind === undefined) return err
  return new DatabaseOpenError(where, `PostgreSQL: ${message || String(errno)}`, kind === 'transient', err)
}
