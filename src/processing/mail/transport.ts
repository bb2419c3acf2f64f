import { readFileSync } from 'node:fs'
import { rootCertificates } from 'node:tls'
import type { Transporter } from 'nodemailer'
import { mimeMessage, type MimeMail } from './mime.ts'

/**
 * The SMTP client (C17) over nodemailer (docs/decisions.md, "E-mail: nodemailer"): a pool of
 * connections to the one server REPLENISH_SMTP_URL names. `smtp://` upgrades with STARTTLS when
 * the server offers it (and fails rather than go on in the clear when the upgrade fails);
 * `smtps://` speaks TLS from the start. AUTH PLAIN or LOGIN, whichever the server offers, with the
 * URL's user and password. Every step has a time-out. The result of a message is the server's
 * own reply, kept in the mail log; an error's text never holds the password (it is in no message
 * nodemailer writes, and the URL is never logged).
 */
export interface SmtpSettings {
  readonly url: string
  /** Accept any certificate (a test server's self-signed one). */
  readonly tlsInsecure: boolean
  /** A PEM file of certificate authorities trusted besides the system's. */
  readonly caFile?: string | undefined
  /** Connections at once, each sending one message at a time. */
  readonly connections?: number | undefined
  readonly timeouts?: Partial<SmtpTimeouts> | undefined
}

export interface SmtpTimeouts {
  /** To open the TCP connection (and TLS for smtps://). */
  readonly connectionMs: number
  /** For the server's greeting once connected. */
  readonly greetingMs: number
  /** Of silence in the middle of a conversation. */
  readonly socketMs: number
}

export const SMTP_TIMEOUTS: SmtpTimeouts = { connectionMs: 10_000, greetingMs: 10_000, socketMs: 30_000 }

export type OutgoingMail = MimeMail

export type SmtpResult =
  | { readonly sent: true; readonly reply: string }
  | {
      readonly sent: false
      /** The server's reply when one came (`451 4.3.0 Try again later`), else null. */
      readonly reply: string | null
      readonly error: string
      /** The server refused this recipient or message for good (5xx to RCPT or DATA): retrying cannot help. */
      readonly permanent: boolean
    }

export interface MailTransport {
  send(mail: OutgoingMail): Promise<SmtpResult>
  /** Closes the pool's connections; `force` also those in the middle of a message (it fails). */
  close(force: boolean): void
}

export function smtpTransport(s: SmtpSettings): MailTransport {
  const url = new URL(s.url)
  const secure = url.protocol === 'smtps:'
  const timeouts = { ...SMTP_TIMEOUTS, ...s.timeouts }
  const extraCa = s.caFile === undefined ? undefined : readFileSync(s.caFile, 'utf8')
  // Loaded on the first mail: every other command of the binary (process, migrate…) and a serve
  // without mail never evaluate nodemailer's 240 KiB (5 MB of RSS).
  let pool: Promise<Transporter> | undefined
  let closed = false
  const transporter = (): Promise<Transporter> => (pool ??= import('nodemailer').then(({ default: nodemailer }) => nodemailer.createTransport({
    pool: true,
    maxConnections: s.connections ?? 4,
    maxMessages: 500,
    // A message whose connection dropped fails back to the outbox, which retries it on its own
    // schedule (C10's), rather than being tried again at once by the pool.
    maxRequeues: 0,
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port: url.port === '' ? (secure ? 465 : 587) : Number(url.port),
    secure,
    ...(url.username === '' ? {} : { auth: { user: decodeURIComponent(url.username), pass: decodeURIComponent(url.password) } }),
    connectionTimeout: timeouts.connectionMs,
    greetingTimeout: timeouts.greetingMs,
    socketTimeout: timeouts.socketMs,
    dnsTimeout: timeouts.connectionMs,
    tls: {
      rejectUnauthorized: !s.tlsInsecure,
      // `ca` replaces Node's list: the system's roots are kept beside the file's.
      ...(extraCa === undefined ? {} : { ca: [...rootCertificates, extraCa] }),
    },
    logger: false,
    debug: false,
  })))
  return {
    async send(mail) {
      try {
        // The message as written (mime.ts); nodemailer carries it over SMTP.
        const info = await (await transporter()).sendMail({ envelope: { from: mail.from.address, to: [mail.to] }, raw: mimeMessage(mail) })
        return { sent: true, reply: String(info.response ?? '').trim() || '250' }
      } catch (err) {
        return failure(err)
      }
    },
    close(force) {
      if (closed || pool === undefined) return
      closed = force
      // Mail.close hands its arguments to the pool's close({force}).
      void pool.then((t) => (t.close as (options: { force: boolean }) => void)({ force }))
    },
  }
}

interface NodemailerError {
  readonly message?: string
  readonly code?: string
  readonly response?: string
  readonly responseCode?: number
  readonly command?: string
}

/** What went wrong, in the server's words when it said something. */
export function failure(err: unknown): SmtpResult {
  const e = (typeof err === 'object' && err !== null ? err : {}) as NodemailerError
  const reply = typeof e.response === 'string' && e.response.trim() !== '' ? e.response.trim() : null
  const code = typeof e.responseCode === 'number' ? e.responseCode : undefined
  // A 5xx to the recipient (RCPT TO) or the message (DATA) is final for this mail; a 5xx to AUTH
  // or MAIL FROM is a setting of ours that the operator can fix, so it is retried like a 4xx.
  const permanent = code !== undefined && code >= 500 && (e.command === 'RCPT TO' || e.command === 'DATA')
  const message = (e.message ?? String(err)).replace(/\s+/g, ' ').trim()
  return { sent: false, reply, error: e.command ? `${message} (${e.command})` : message, permanent }
}
