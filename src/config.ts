/**
 * Configuration: flags > REPLENISH_* environment > defaults (C12), validated once and frozen.
 * A bad value throws ConfigError naming the flag or variable it came from; main.ts turns that
 * into exit status 2.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs'
import { isIP } from 'node:net'
import { dirname } from 'node:path'

/** Made (with its directory) on first start; any other location's directory must already exist. */
export const DEFAULT_DB = 'data/replenish.db'

export class ConfigError extends Error {
  override readonly name = 'ConfigError'
}

type Kind = 'db' | 'string' | 'host' | 'port' | 'count' | 'positive' | 'optional_count' | 'bool' | 'date' | 'zone' | 'currency' | 'sync' | 'log' | 'origins'
  | 'shop_name' | 'logo_url' | 'accent' | 'public_url' | 'web_url' | 'smtp_url' | 'mail_from' | 'locale' | 'file'

interface OptionSpec {
  readonly key: keyof Config
  readonly flag: string
  readonly env: string
  readonly kind: Kind
  readonly fallback: string | undefined
  readonly help: string
  /** Secrets are read from the environment only: argv shows in `ps`. */
  readonly envOnly?: boolean
}

export interface Config {
  readonly host: string
  readonly port: number
  /** A SQLite file, or a `postgres://` / `postgresql://` URL (C15). */
  readonly db: string
  /** PostgreSQL: connections this instance keeps open at most. */
  readonly dbPool: number
  /** PostgreSQL: a statement running longer is cancelled (0: never). */
  readonly dbStatementTimeoutMs: number
  readonly adminToken: string | undefined
  readonly timeZone: string
  readonly today: string | undefined
  readonly currency: string
  readonly maxSuccessiveSkips: number | undefined
  readonly maxTotalSkips: number | undefined
  readonly cancellationNoticeDays: number
  readonly reprocessingIntervalHours: number
  readonly maxReprocessingDays: number | undefined
  readonly processEvery: number
  readonly maxBodyBytes: number
  readonly metricsPublic: boolean
  readonly rateLimit: number
  readonly rateBurst: number
  readonly authFailureLimit: number
  readonly headersTimeoutMs: number
  readonly requestTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  readonly synchronous: 'FULL' | 'NORMAL'
  readonly readCacheMb: number
  readonly webhookRetryBaseSeconds: number
  /** Days events are kept (C13); 0 keeps them all. */
  readonly eventRetentionDays: number
  readonly log: 'json' | 'off'
  readonly trustProxy: boolean
  /** Browser origins allowed to call the customer API (C13), normalised; empty: none. */
  readonly corsOrigins: readonly string[]
  /** The web console's branding (C14): shown on every page, passed to the pages as data attributes. */
  readonly shopName: string
  readonly shopLogoUrl: string | undefined
  /** `#rrggbb`, dark enough for white text on it and for it on white (WCAG AA, 4.5:1). */
  readonly shopAccent: string
  /** The origin customers reach this server at (`https://portal.shop.example`): portal links start with it. */
  readonly publicUrl: string | undefined
  /** The shop's site (`https://shop.example/account`): where the portal's 410 page leads when its link has no return_url (C18). */
  readonly shopUrl: string | undefined
  /** Days before a delivery its `subscription.upcoming` event is written (C17); 0: never. */
  readonly upcomingDays: number
  /** `smtp://[user:pass@]host:port` or `smtps://…`: customers get e-mail when set (C17). Holds a password: never shown. */
  readonly smtpUrl: string | undefined
  /** Accept an SMTP server's certificate without checking it (a test server's self-signed one). */
  readonly smtpTlsInsecure: boolean
  /** PEM file of the certificate authority the SMTP server's certificate is checked against, besides the system's. */
  readonly smtpCaFile: string | undefined
  /** The sender of customers' mails: `shop@example.com` or `Shop <shop@example.com>`. */
  readonly mailFrom: string | undefined
  /** Hours an upcoming mail's portal link works. */
  readonly mailLinkHours: number
  readonly mailRetryBaseSeconds: number
  /** The language of a user's mails while they have none of their own (C17). */
  readonly defaultLocale: Locale
}

/** C17's languages (the domain's LANGUAGES; config imports nothing of ours). */
const LOCALES = ['en', 'es', 'fr', 'de'] as const
type Locale = (typeof LOCALES)[number]

export const OPTIONS: readonly OptionSpec[] = [
  { key: 'host', flag: 'host', env: 'REPLENISH_HOST', kind: 'host', fallback: '127.0.0.1', help: 'address to listen on: an IP address or a host name' },
  { key: 'port', flag: 'port', env: 'REPLENISH_PORT', kind: 'port', fallback: '8080', help: 'port to listen on (0 picks a free one)' },
  { key: 'db', flag: 'db', env: 'REPLENISH_DB', kind: 'db', fallback: DEFAULT_DB, help: 'SQLite database file (its directory must exist, except for the default data/), or postgres://user@host:port/db (C15; the password is better given as PGPASSWORD)' },
  { key: 'dbPool', flag: 'db-pool', env: 'REPLENISH_DB_POOL', kind: 'positive', fallback: '10', help: 'PostgreSQL: connections each instance keeps at most (instances × pool must stay under the server\'s max_connections)' },
  { key: 'dbStatementTimeoutMs', flag: 'db-statement-timeout-ms', env: 'REPLENISH_DB_STATEMENT_TIMEOUT_MS', kind: 'count', fallback: '30000', help: 'PostgreSQL: a statement running longer than this is cancelled (0: never), and a server silent for it and at most 1 s more answers 503; TLS is the URL\'s sslmode (libpq\'s: disable … verify-full, default prefer)' },
  { key: 'adminToken', flag: 'admin-token', env: 'REPLENISH_ADMIN_TOKEN', kind: 'string', fallback: undefined, help: 'admin API token; environment only, as a flag would show in `ps` (or use `admin-tokens create`)', envOnly: true },
  { key: 'timeZone', flag: 'time-zone', env: 'REPLENISH_TIME_ZONE', kind: 'zone', fallback: 'UTC', help: 'IANA time zone that decides what "today" is' },
  { key: 'today', flag: 'today', env: 'REPLENISH_TODAY', kind: 'date', fallback: undefined, help: 'YYYY-MM-DD: pretend today is this date (tests and drills; never in production)' },
  { key: 'currency', flag: 'currency', env: 'REPLENISH_CURRENCY', kind: 'currency', fallback: 'USD', help: 'default currency of new subscriptions and of the reports (ISO 4217)' },
  { key: 'maxSuccessiveSkips', flag: 'max-successive-skips', env: 'REPLENISH_MAX_SUCCESSIVE_SKIPS', kind: 'optional_count', fallback: undefined, help: 'successive skips allowed (unset: unlimited)' },
  { key: 'maxTotalSkips', flag: 'max-total-skips', env: 'REPLENISH_MAX_TOTAL_SKIPS', kind: 'optional_count', fallback: undefined, help: 'total skips allowed (unset: unlimited)' },
  { key: 'cancellationNoticeDays', flag: 'cancellation-notice-days', env: 'REPLENISH_CANCELLATION_NOTICE_DAYS', kind: 'count', fallback: '0', help: 'days of notice a cancel needs before the next date' },
  { key: 'reprocessingIntervalHours', flag: 'reprocessing-interval-hours', env: 'REPLENISH_REPROCESSING_INTERVAL_HOURS', kind: 'positive', fallback: '24', help: 'hours between retries of a failed installment' },
  { key: 'maxReprocessingDays', flag: 'max-reprocessing-days', env: 'REPLENISH_MAX_REPROCESSING_DAYS', kind: 'optional_count', fallback: undefined, help: 'days of failures before a subscription is canceled (unset: never)' },
  { key: 'processEvery', flag: 'process-every', env: 'REPLENISH_PROCESS_EVERY', kind: 'count', fallback: '10', help: 'minutes between processor runs inside serve (0: off)' },
  { key: 'maxBodyBytes', flag: 'max-body-bytes', env: 'REPLENISH_MAX_BODY_BYTES', kind: 'positive', fallback: '65536', help: 'largest request body accepted (413 above)' },
  { key: 'metricsPublic', flag: 'metrics-public', env: 'REPLENISH_METRICS_PUBLIC', kind: 'bool', fallback: '0', help: '1: /metrics needs no admin token' },
  { key: 'rateLimit', flag: 'rate-limit', env: 'REPLENISH_RATE_LIMIT', kind: 'count', fallback: '50', help: 'requests per second per API key (0: off)' },
  { key: 'rateBurst', flag: 'rate-burst', env: 'REPLENISH_RATE_BURST', kind: 'positive', fallback: '100', help: 'burst size of the per-key rate limit' },
  { key: 'authFailureLimit', flag: 'auth-failure-limit', env: 'REPLENISH_AUTH_FAILURE_LIMIT', kind: 'count', fallback: '20', help: 'bad keys per minute from one address before it is slowed down (0: off)' },
  { key: 'headersTimeoutMs', flag: 'headers-timeout-ms', env: 'REPLENISH_HEADERS_TIMEOUT_MS', kind: 'positive', fallback: '10000', help: 'time a client has to send its headers' },
  { key: 'requestTimeoutMs', flag: 'request-timeout-ms', env: 'REPLENISH_REQUEST_TIMEOUT_MS', kind: 'positive', fallback: '30000', help: 'time a client has to send its whole request' },
  { key: 'keepAliveTimeoutMs', flag: 'keep-alive-timeout-ms', env: 'REPLENISH_KEEP_ALIVE_TIMEOUT_MS', kind: 'positive', fallback: '5000', help: 'idle keep-alive connections are closed after this' },
  { key: 'synchronous', flag: 'synchronous', env: 'REPLENISH_SYNCHRONOUS', kind: 'sync', fallback: 'FULL', help: 'SQLite synchronous: FULL (survives power loss) or NORMAL' },
  { key: 'readCacheMb', flag: 'read-cache-mb', env: 'REPLENISH_READ_CACHE_MB', kind: 'count', fallback: '16', help: 'MB of rendered subscriptions kept in memory for GET, and half again for the line items writes render (never stale: on PostgreSQL each is answered once the database confirms it; 0: off)' },
  { key: 'webhookRetryBaseSeconds', flag: 'webhook-retry-base-seconds', env: 'REPLENISH_WEBHOOK_RETRY_BASE_SECONDS', kind: 'positive', fallback: '10', help: 'seconds before the first retry of a failed webhook delivery; each next one waits 6 times longer (±20 %, at most 24 h), for 3 days' },
  { key: 'eventRetentionDays', flag: 'event-retention-days', env: 'REPLENISH_EVENT_RETENTION_DAYS', kind: 'count', fallback: '400', help: 'days events are kept; older ones are deleted in the background, unless a webhook delivery of theirs is pending (0: keep all)' },
  { key: 'log', flag: 'log', env: 'REPLENISH_LOG', kind: 'log', fallback: 'json', help: 'access log: json (one line per request on stdout) or off' },
  { key: 'trustProxy', flag: 'trust-proxy', env: 'REPLENISH_TRUST_PROXY', kind: 'bool', fallback: '0', help: '1: behind a reverse proxy, the client address is the last X-Forwarded-For entry' },
  { key: 'corsOrigins', flag: 'cors-origins', env: 'REPLENISH_CORS_ORIGINS', kind: 'origins', fallback: undefined, help: 'comma-separated origins (https://shop.example) whose pages may call the customer API /api/v1 from a browser (unset: none)' },
  { key: 'shopName', flag: 'shop-name', env: 'REPLENISH_SHOP_NAME', kind: 'shop_name', fallback: 'replenish', help: 'shop name shown by the staff console and the customer portal' },
  { key: 'shopLogoUrl', flag: 'shop-logo-url', env: 'REPLENISH_SHOP_LOGO_URL', kind: 'logo_url', fallback: undefined, help: 'logo shown beside the shop name: an https:// URL or a path on this server (unset: none)' },
  { key: 'shopAccent', flag: 'shop-accent', env: 'REPLENISH_SHOP_ACCENT', kind: 'accent', fallback: '#1d4ed8', help: 'accent colour of the console and portal, #rrggbb with a contrast of at least 4.5:1 on white' },
  { key: 'publicUrl', flag: 'public-url', env: 'REPLENISH_PUBLIC_URL', kind: 'public_url', fallback: undefined, help: 'origin customers use to reach this server (https://portal.shop.example); portal links start with it (unset: the host the request was sent to; required with REPLENISH_SMTP_URL)' },
  { key: 'shopUrl', flag: 'shop-url', env: 'REPLENISH_SHOP_URL', kind: 'web_url', fallback: undefined, help: 'the shop\'s site (https://shop.example/account): a used or expired portal link\'s page leads there when the link has no return_url (unset: no link)' },
  { key: 'upcomingDays', flag: 'upcoming-days', env: 'REPLENISH_UPCOMING_DAYS', kind: 'count', fallback: '3', help: 'days before a delivery the processor writes its subscription.upcoming event (and the upcoming mail goes out); 0: never' },
  { key: 'smtpUrl', flag: 'smtp-url', env: 'REPLENISH_SMTP_URL', kind: 'smtp_url', fallback: undefined, help: 'smtp://user:password@host:587 (STARTTLS when offered) or smtps://…:465: customers get e-mail (docs/email.md); environment only, it holds a password (unset: no e-mail)', envOnly: true },
  { key: 'smtpTlsInsecure', flag: 'smtp-tls-insecure', env: 'REPLENISH_SMTP_TLS_INSECURE', kind: 'bool', fallback: '0', help: '1: accept the SMTP server\'s certificate unchecked (a test server\'s self-signed one; never in production)' },
  { key: 'smtpCaFile', flag: 'smtp-ca-file', env: 'REPLENISH_SMTP_CA_FILE', kind: 'file', fallback: undefined, help: 'PEM file of a certificate authority the SMTP server\'s certificate may chain to, besides the system\'s (a private CA)' },
  { key: 'mailFrom', flag: 'mail-from', env: 'REPLENISH_MAIL_FROM', kind: 'mail_from', fallback: undefined, help: 'sender of customers\' mails: shop@example.com or "Shop <shop@example.com>" (required with REPLENISH_SMTP_URL)' },
  { key: 'mailLinkHours', flag: 'mail-link-hours', env: 'REPLENISH_MAIL_LINK_HOURS', kind: 'positive', fallback: '72', help: 'hours the one-time portal link in an upcoming-delivery mail works' },
  { key: 'mailRetryBaseSeconds', flag: 'mail-retry-base-seconds', env: 'REPLENISH_MAIL_RETRY_BASE_SECONDS', kind: 'positive', fallback: '10', help: 'seconds before the first retry of a mail the SMTP server did not take; each next one waits 6 times longer (±20 %, at most 24 h), for 3 days' },
  { key: 'defaultLocale', flag: 'default-locale', env: 'REPLENISH_DEFAULT_LOCALE', kind: 'locale', fallback: 'en', help: 'language of customers\' mails (en, es, fr or de) unless the user has a locale of their own' },
]

/** The flags every command understands, for node:util parseArgs. */
export function parseArgsOptions(): Record<string, { type: 'string' }> {
  const out: Record<string, { type: 'string' }> = {}
  for (const o of OPTIONS) if (!o.envOnly) out[o.flag] = { type: 'string' }
  return out
}

export function loadConfig(flags: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): Config {
  const out: Record<string, unknown> = {}
  for (const o of OPTIONS) {
    const fromFlag = o.envOnly ? undefined : flags[o.flag]
    const source = typeof fromFlag === 'string' ? `--${o.flag}` : o.env
    const raw = typeof fromFlag === 'string' ? fromFlag : nonEmpty(env[o.env]) ?? o.fallback
    out[o.key] = raw === undefined ? (o.kind === 'origins' ? NO_ORIGINS : undefined) : convert(o.kind, raw.trim(), source)
  }
  const config = out as unknown as Config
  // node:http refuses a headers timeout longer than the request timeout; say so in our words.
  if (config.headersTimeoutMs > config.requestTimeoutMs) {
    const name = (key: keyof Config): string => {
      const o = OPTIONS.find((x) => x.key === key) as OptionSpec
      return typeof flags[o.flag] === 'string' ? `--${o.flag}` : o.env
    }
    throw new ConfigError(`${name('headersTimeoutMs')}: must not be longer than ${name('requestTimeoutMs')} (${config.headersTimeoutMs} > ${config.requestTimeoutMs})`)
  }
  // C17: a mail needs a sender, and its links a base.
  if (config.smtpUrl !== undefined) {
    for (const key of ['mailFrom', 'publicUrl'] as const) {
      if (config[key] !== undefined) continue
      const o = OPTIONS.find((x) => x.key === key) as OptionSpec
      throw new ConfigError(`${o.env}: required when REPLENISH_SMTP_URL is set (${o.help.split(' (')[0]})`)
    }
  }
  return Object.freeze(config)
}

/** REPLENISH_* names the service reads; main.ts warns about others (a typo is otherwise silent). */
export const KNOWN_VARIABLES: ReadonlySet<string> = new Set(OPTIONS.map((o) => o.env))

const NO_ORIGINS: readonly string[] = Object.freeze([])

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v
}

function convert(kind: Kind, raw: string, source: string): unknown {
  const fail = (what: string): never => {
    throw new ConfigError(`${source}: ${what}, got ${JSON.stringify(raw)}`)
  }
  const int = (min: number): number => {
    if (!/^\d+$/.test(raw)) fail('expected a whole number')
    const n = Number(raw)
    if (!Number.isSafeInteger(n) || n < min) fail(`expected a whole number of at least ${min}`)
    return n
  }
  switch (kind) {
    case 'string':
      return raw.length === 0 ? fail('expected a value') : raw
    case 'host':
      return isHost(raw) ? raw : fail('expected an IP address (such as 127.0.0.1 or ::1) or a host name')
    case 'db':
      // The default data/ directory is made on first start; any other must already exist.
      if (raw === ':memory:' || raw === DEFAULT_DB) return raw
      // Never echoed: the URL may hold a password.
      if (isPostgresUrl(raw)) {
        if (validPostgresUrl(raw)) return raw
        throw new ConfigError(`${source}: expected postgres://user:password@host:port/database, got a URL that does not parse (not shown: it may hold a password)`)
      }
      if (!existsSync(dirname(raw))) fail(`the directory ${dirname(raw)} does not exist`)
      if (existsSync(raw) && statSync(raw).isDirectory()) fail('expected a file, not a directory')
      return raw
    case 'port': {
      const n = /^\d+$/.test(raw) ? Number(raw) : -1
      return n >= 0 && n <= 65535 ? n : fail('expected a port number from 0 to 65535')
    }
    case 'count':
    case 'optional_count':
      return int(0)
    case 'positive':
      return int(1)
    case 'bool':
      if (/^(1|true|yes|on)$/i.test(raw)) return true
      if (/^(0|false|no|off)$/i.test(raw)) return false
      return fail('expected 1, true, yes or on to turn it on, or 0, false, no or off to turn it off (any case)')
    case 'date':
      return isCalendarDate(raw) ? raw : fail('expected a real date as YYYY-MM-DD')
    case 'zone':
      return isTimeZone(raw) ? raw : fail('expected an IANA time zone such as UTC or Europe/Paris')
    case 'currency':
      return Intl.supportedValuesOf('currency').includes(raw.toUpperCase()) ? raw.toUpperCase() : fail('expected an ISO 4217 currency code')
    case 'sync':
      return /^(FULL|NORMAL)$/i.test(raw) ? raw.toUpperCase() : fail('expected FULL or NORMAL')
    case 'log':
      return /^(json|off)$/.test(raw) ? raw : fail('expected json or off')
    case 'origins':
      return Object.freeze(raw.split(',').map((entry) => {
        const origin = toOrigin(entry.trim())
        return origin ?? fail(`${JSON.stringify(entry.trim())} is not an origin: expected http:// or https://, a host and an optional port, with no path, no trailing slash and no *`)
      }))
    case 'shop_name':
      // Shown as text (never as markup), so any printable text is safe; a bound keeps headers tidy.
      return raw.length > 0 && raw.length <= 100 && !/[\u0000-\u001f\u007f]/.test(raw) ? raw : fail('expected a name of 1 to 100 printable characters')
    case 'logo_url':
      return isLogoUrl(raw) ? raw : fail('expected an https:// URL or a path on this server beginning with /')
    case 'accent':
      return accentColour(raw) ?? fail(accentProblem(raw))
    case 'public_url':
      return publicBase(raw) ?? fail('expected an origin such as https://shop.example: http:// or https://, a host and an optional port, with no path')
    case 'web_url':
      return isWebUrl(raw) ? raw : fail('expected an http:// or https:// URL such as https://shop.example/account, without a user or password')
    case 'smtp_url':
      // Never echoed: the URL holds the password.
      if (validSmtpUrl(raw)) return raw
      throw new ConfigError(`${source}: expected smtp://user:password@host:port or smtps://user:password@host:port, got a value that is not one (not shown: it may hold a password)`)
    case 'mail_from':
      return MAIL_FROM.test(raw) ? raw : fail('expected an address such as shop@example.com, or "Shop name <shop@example.com>"')
    case 'locale':
      return (LOCALES as readonly string[]).includes(raw) ? raw : fail(`expected one of ${LOCALES.join(', ')}`)
    case 'file':
      try {
        accessSync(raw, constants.R_OK)
        if (!statSync(raw).isFile()) fail('expected a file')
        return raw
      } catch (err) {
        if (err instanceof ConfigError) throw err
        return fail('expected a file this user can read')
      }
  }
}

/** A link the pages may offer: http(s) only, never `javascript:`, no credentials (a portal session's return_url, REPLENISH_SHOP_URL). */
export function isWebUrl(s: string): boolean {
  try {
    const url = new URL(s)
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.username === '' && url.password === ''
  } catch {
    return false
  }
}

/** The pages' Content-Security-Policy allows images from this server and https: only (docs/console.md). */
function isLogoUrl(s: string): boolean {
  if (/^\/(?!\/)[^\s"'<>\\]*$/.test(s)) return true
  try {
    const url = new URL(s)
    return url.protocol === 'https:' && url.username === '' && url.password === '' && !/[\s"'<>]/.test(s)
  } catch {
    return false
  }
}

/** `#rgb` or `#rrggbb`, normalised to lower-case `#rrggbb`, when white text on it reads at WCAG AA. */
function accentColour(s: string): string | undefined {
  const hex = normalHex(s)
  return hex !== undefined && contrastOnWhite(hex) >= 4.5 ? hex : undefined
}

function accentProblem(s: string): string {
  const hex = normalHex(s)
  if (hex === undefined) return 'expected a colour as #rrggbb'
  return `expected a colour with a contrast of at least 4.5:1 on white (WCAG AA), this one has ${contrastOnWhite(hex).toFixed(2)}:1: choose a darker one`
}

function normalHex(s: string): string | undefined {
  const m = /^#([0-9a-f]{3}|[0-9a-f]{6})$/i.exec(s)
  if (!m) return undefined
  const digits = (m[1] as string).toLowerCase()
  return `#${digits.length === 3 ? [...digits].map((d) => d + d).join('') : digits}`
}

/** WCAG 2.x contrast ratio of a `#rrggbb` colour against white. */
function contrastOnWhite(hex: string): number {
  const channel = (i: number): number => {
    const c = parseInt(hex.slice(i, i + 2), 16) / 255
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4
  }
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5)
  return 1.05 / (luminance + 0.05)
}

/**
 * The base of portal links: an origin only. The pages link their scripts and styles by absolute
 * path (`/assets/…`), so the console is served at the root of its host, never under a prefix.
 */
function publicBase(s: string): string | undefined {
  return toOrigin(s.endsWith('/') ? s.slice(0, -1) : s)
}

/**
 * An IP literal must be a valid one (v4 or v6); anything else must be a host name as RFC 1123
 * spells them. Whether the name resolves is I/O, left to serve's listen: an unknown name exits 2
 * there (cli/main.ts), so config stays synchronous.
 */
function isHost(s: string): boolean {
  if (isIP(s) !== 0) return true
  if (s.includes(':')) return false // an IPv6 literal that is not a valid one (or a bracketed one)
  const name = s.endsWith('.') ? s.slice(0, -1) : s
  if (name.length === 0 || name.length > 253) return false
  const labels = name.split('.')
  // An all-digit last label makes it a (bad) IPv4 literal such as 300.1.1.1, not a name.
  if (/^\d+$/.test(labels[labels.length - 1] as string)) return false
  return labels.every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label))
}

/**
 * An origin as a browser sends it in `Origin`: scheme, host and port only. The URL parser
 * normalises it (lowercase scheme and host, punycode, no default port) so that the server compares
 * exact strings. `*` is refused: an allow-list of pages, never a wildcard.
 */
function toOrigin(entry: string): string | undefined {
  if (!/^https?:\/\/[^/?#@*\s]+$/i.test(entry)) return undefined
  try {
    const url = new URL(entry)
    return url.username === '' && url.password === '' && url.pathname === '/' ? url.origin : undefined
  } catch {
    return undefined
  }
}

function isCalendarDate(s: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s)
  if (!m) return false
  const d = new Date(`${s}T00:00:00Z`)
  return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s)
}

function isTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/** An address, or a display name and the address in angle brackets; no line breaks (a header). */
const MAIL_FROM = /^(?:[^\s@<>]+@[^\s@<>]+\.[^\s@<>.]+|[^<>\u0000-\u001f]*<[^\s@<>]+@[^\s@<>]+\.[^\s@<>.]+>)$/

/** C17: `smtp://` or `smtps://`, a host, an optional port and credentials, nothing else. */
function validSmtpUrl(raw: string): boolean {
  try {
    const u = new URL(raw)
    return (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname.length > 0 && (u.pathname === '' || u.pathname === '/') &&
      u.search === '' && u.hash === ''
  } catch {
    return false
  }
}

/** C15: a PostgreSQL URL selects PostgreSQL; any other value of REPLENISH_DB is a SQLite path. */
export function isPostgresUrl(db: string): boolean {
  return /^postgres(ql)?:\/\//i.test(db)
}

/** A URL with a host, or a socket directory as `?host=` (libpq's form). */
export function validPostgresUrl(raw: string): boolean {
  try {
    const u = new URL(raw)
    return u.hostname.length > 0 || u.searchParams.has('host')
  } catch {
    return false
  }
}
