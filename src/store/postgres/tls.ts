import { readFileSync } from 'node:fs'
import type { ConnectionOptions } from 'node:tls'

/**
 * TLS to PostgreSQL as libpq means it (https://www.postgresql.org/docs/current/libpq-ssl.html),
 * from the URL's `sslmode`, `sslrootcert`, `sslcert` and `sslkey`, else the PGSSLMODE,
 * PGSSLROOTCERT, PGSSLCERT and PGSSLKEY variables, else `prefer`. node-postgres reads these
 * parameters its own way (`require` verifies like `verify-full`, and it prints a warning about
 * it), so they are taken out of the URL here and node-postgres is given its `ssl` option instead
 * (docs/decisions.md, "PostgreSQL TLS").
 */
export const SSL_MODES = ['disable', 'allow', 'prefer', 'require', 'verify-ca', 'verify-full'] as const
export type SslMode = (typeof SSL_MODES)[number]

export interface Tls {
  /** The URL without its TLS parameters: what node-postgres is given. */
  readonly url: string
  readonly mode: SslMode
  /** node-postgres's `ssl` (tls.connect's options) for an encrypted connection in this mode. */
  readonly options: ConnectionOptions
}

/** A TLS setting that cannot work as given (an unknown sslmode, a CA file that cannot be read): exit 2. */
export class TlsSettingRefused extends Error {
  override readonly name = 'TlsSettingRefused'
}

/** URL parameters taken out: libpq's, and node-postgres's own `ssl` and `uselibpqcompat`. */
const TLS_PARAMETERS = ['sslmode', 'sslrootcert', 'sslcert', 'sslkey', 'ssl', 'uselibpqcompat']

/** node-postgres's `ssl=` parameter, as it meant it, for URLs written for it. */
const NODE_PG_SSL: Readonly<Record<string, SslMode>> = { true: 'verify-full', 1: 'verify-full', false: 'disable', 0: 'disable', 'no-verify': 'require' }

export function tlsSettings(url: string, env: Readonly<Record<string, string | undefined>>, read: (file: string) => string = (f) => readFileSync(f, 'utf8')): Tls {
  const u = new URL(url)
  const param = (name: string, variable: string): string | undefined => u.searchParams.get(name) ?? env[variable]
  const legacy = u.searchParams.get('ssl')
  const [given, from] = u.searchParams.has('sslmode') ? [u.searchParams.get('sslmode') as string, 'the URL\'s sslmode']
    : legacy !== null ? [NODE_PG_SSL[legacy] ?? legacy, 'the URL\'s ssl']
    : env['PGSSLMODE'] !== undefined ? [env['PGSSLMODE'], 'PGSSLMODE']
    : ['prefer', 'the default']
  if (!(SSL_MODES as readonly string[]).includes(given)) {
    throw new TlsSettingRefused(`${from} ${JSON.stringify(given)} is not one of libpq's sslmodes: ${SSL_MODES.join(', ')}`)
  }
  const mode = given as SslMode
  const file = (name: string, variable: string): string | undefined => {
    const path = param(name, variable)
    if (path === undefined || path === '' || (name === 'sslrootcert' && path === 'system')) return undefined
    try {
      return read(path)
    } catch (err) {
      throw new TlsSettingRefused(`${name}=${path}: the file cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`)
    }
  }
  const ca = file('sslrootcert', 'PGSSLROOTCERT')
  const client: ConnectionOptions = {}
  const cert = file('sslcert', 'PGSSLCERT')
  const key = file('sslkey', 'PGSSLKEY')
  if (cert !== undefined) client.cert = cert
  if (key !== undefined) client.key = key
  const stripped = TLS_PARAMETERS.some((name) => u.searchParams.has(name))
  for (const name of TLS_PARAMETERS) u.searchParams.delete(name)
  return { url: stripped ? u.toString() : url, mode, options: { ...client, ...verification(mode, ca, param('sslrootcert', 'PGSSLROOTCERT') === 'system') } }
}

/** How the server's certificate is checked in each mode. */
function verification(mode: SslMode, ca: string | undefined, system: boolean): ConnectionOptions {
  const chainOnly = (authority: string): ConnectionOptions => ({ ca: authority, checkServerIdentity: () => undefined })
  switch (mode) {
    case 'disable':
    case 'allow':
    case 'prefer':
      // Encrypted when the server offers it, nothing verified (libpq verifies nothing below require).
      return { rejectUnauthorized: false }
    case 'require':
      // libpq: with a root certificate given, require verifies the chain as verify-ca does.
      return ca === undefined ? { rejectUnauthorized: false } : chainOnly(ca)
    case 'verify-ca':
      if (ca === undefined) {
        throw new TlsSettingRefused(
          `sslmode=verify-ca needs the CA that signed the server's certificate: sslrootcert=/path/to/ca.pem${system ? ' (a public CA would accept anyone\'s certificate: use verify-full with sslrootcert=system)' : ''}`,
        )
      }
      return chainOnly(ca)
    case 'verify-full':
      // No sslrootcert, or `system`: Node's list of public CAs, as a browser checks a site.
      return ca === undefined ? {} : { ca }
  }
}
