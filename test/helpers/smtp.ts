import type { TestContext } from 'node:test'
import { readFileSync } from 'node:fs'
import net from 'node:net'
import { SMTPServer, type SMTPServerOptions } from 'smtp-server'

/**
 * A real SMTP server on 127.0.0.1 for the mail tests (smtp-server, by nodemailer's author), with
 * the behaviours the sender must cope with: authentication, STARTTLS required, TLS from the start,
 * a refusal with a given reply, and a server that drops the connection. Messages are kept raw and
 * parsed into headers and their text and HTML parts.
 */
export interface ReceivedMail {
  readonly from: string
  readonly to: readonly string[]
  readonly raw: string
  /** Lower-case names, unfolded values (encoded words left as they are). */
  readonly headers: ReadonlyMap<string, string>
  /** The Subject, decoded. */
  readonly subject: string
  readonly text: string
  readonly html: string
}

export interface SinkOptions {
  /** AUTH with these is required before MAIL FROM. */
  readonly auth?: { readonly user: string; readonly pass: string }
  /** The AUTH methods offered (PLAIN and LOGIN by default). */
  readonly authMethods?: readonly string[]
  /** MAIL FROM is refused (530) until the client has issued STARTTLS. */
  readonly requireTls?: boolean
  /** TLS from the first byte (smtps://). */
  readonly secure?: boolean
  /**
   * The certificate: `ca` the one test/fixtures/smtp-tls's CA signed for localhost; `self` the
   * self-signed one smtp-server ships.
   */
  readonly certificate?: 'ca' | 'self'
  /** The reply to the n-th message (0 first) at the end of DATA, instead of 250. */
  readonly refuseData?: (n: number) => { readonly code: number; readonly message: string } | undefined
  /** DATA's answer waits for this (a server that keeps the client waiting). */
  readonly holdData?: Promise<unknown>
  /**
   * Decides each message's answer at the end of DATA (after `holdData`): a reply instead of 250, or
   * undefined to take it; a promise that never settles keeps the client waiting. Taken messages
   * are kept in `messages`; every message, taken or not, is seen here first.
   */
  readonly answer?: (mail: ReceivedMail) => Promise<{ readonly code: number; readonly message: string } | undefined>
  /** The reply to MAIL FROM, instead of 250. */
  readonly refuseSender?: { readonly code: number; readonly message: string }
  /** The reply to RCPT TO for this address, instead of 250. */
  readonly refuseRecipient?: (address: string) => { readonly code: number; readonly message: string } | undefined
}

export interface SmtpSink {
  readonly port: number
  readonly messages: ReceivedMail[]
  /** Logins tried, as the server saw them. */
  readonly logins: { readonly method: string; readonly user: string; readonly ok: boolean }[]
  /** smtp://… or smtps://… on this server, with credentials when given. */
  url(credentials?: { user: string; pass: string }): string
  waitFor(count: number, timeoutMs?: number): Promise<ReceivedMail[]>
  close(): Promise<void>
}

const FIXTURES = new URL('../fixtures/smtp-tls/', import.meta.url)
export const TEST_CA_FILE = new URL('ca.pem', FIXTURES).pathname

export async function startSmtpSink(t: TestContext | undefined, o: SinkOptions = {}): Promise<SmtpSink> {
  const messages: ReceivedMail[] = []
  const logins: { method: string; user: string; ok: boolean }[] = []
  const waiters = new Set<() => void>()
  let dataCount = 0
  const cert = o.certificate === 'self' ? {} : { key: readFileSync(new URL('server.key', FIXTURES)), cert: readFileSync(new URL('server.pem', FIXTURES)) }
  const reply = (r: { code: number; message: string }): Error => Object.assign(new Error(r.message), { responseCode: r.code })
  const options: SMTPServerOptions = {
    ...cert,
    secure: o.secure ?? false,
    logger: false,
    disableReverseLookup: true,
    // close() ends the clients' idle pooled connections at once instead of after 30 s.
    closeTimeout: 50,
    authOptional: o.auth === undefined,
    authMethods: [...(o.authMethods ?? ['PLAIN', 'LOGIN'])],
    allowInsecureAuth: true,
    size: 10 * 1024 * 1024,
    onAuth(auth, _session, callback) {
      const ok = o.auth !== undefined && auth.username === o.auth.user && auth.password === o.auth.pass
      logins.push({ method: auth.method, user: auth.username ?? '', ok })
      if (ok) callback(null, { user: auth.username })
      else callback(reply({ code: 535, message: '5.7.8 Authentication credentials invalid' }))
    },
    onMailFrom(_address, session, callback) {
      if (o.requireTls && !session.secure) callback(reply({ code: 530, message: '5.7.0 Must issue a STARTTLS command first' }))
      else callback(o.refuseSender ? reply(o.refuseSender) : undefined)
    },
    onRcptTo(address, _session, callback) {
      const refusal = o.refuseRecipient?.(address.address)
      callback(refusal ? reply(refusal) : undefined)
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = []
      stream.on('data', (c: Buffer) => chunks.push(c))
      stream.on('end', async () => {
        await o.holdData
        const n = dataCount++
        const raw = Buffer.concat(chunks).toString('utf8')
        const mail = parseMail(raw, session.envelope.mailFrom ? session.envelope.mailFrom.address : '', session.envelope.rcptTo.map((r) => r.address))
        const refusal = o.refuseData?.(n) ?? (await o.answer?.(mail))
        if (refusal) return callback(reply(refusal))
        messages.push(mail)
        for (const w of waiters) w()
        callback(null, `2.0.0 Ok: queued as test-${n}`)
      })
    },
  }
  const server = new SMTPServer(options)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.server.address() as net.AddressInfo).port
  const close = async (): Promise<void> => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  t?.after(close)
  return {
    port,
    messages,
    logins,
    url(credentials) {
      const auth = credentials ? `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.pass)}@` : ''
      return `${o.secure ? 'smtps' : 'smtp'}://${auth}localhost:${port}`
    },
    waitFor: (count, timeoutMs = 20_000) => waitUntil(() => messages.length >= count, waiters, timeoutMs, () => `${messages.length} of ${count} mails arrived`).then(() => messages),
    close,
  }
}

/**
 * A server that greets like SMTP and drops the connection when the client speaks: the sender sees
 * its connection close in the middle of a conversation. `silent`: it never greets at all.
 */
export async function startDroppingServer(t: TestContext | undefined, silent = false): Promise<{ port: number; connections: () => number }> {
  let connections = 0
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    connections++
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
    if (silent) return
    socket.write('220 localhost ESMTP ready\r\n')
    socket.once('data', () => socket.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t?.after(() => new Promise<void>((resolve) => {
    for (const s of sockets) s.destroy()
    server.close(() => resolve())
  }))
  return { port: (server.address() as net.AddressInfo).port, connections: () => connections }
}

function waitUntil(done: () => boolean, waiters: Set<() => void>, timeoutMs: number, what: () => string): Promise<void> {
  if (done()) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      waiters.delete(check)
      reject(new Error(`timed out: ${what()}`))
    }, timeoutMs)
    const check = (): void => {
      if (!done()) return
      clearTimeout(timer)
      waiters.delete(check)
      resolve()
    }
    waiters.add(check)
  })
}

// ---- just enough MIME to read what nodemailer writes ---------------------------------------------

export function parseMail(raw: string, from: string, to: readonly string[]): ReceivedMail {
  const { headers, body } = splitHeaders(raw)
  const parts = new Map<string, string>()
  collectParts(headers, body, parts)
  return { from, to, raw, headers, subject: decodeWords(headers.get('subject') ?? ''), text: parts.get('text/plain') ?? '', html: parts.get('text/html') ?? '' }
}

function splitHeaders(entity: string): { headers: Map<string, string>; body: string } {
  const end = entity.indexOf('\r\n\r\n')
  const head = end < 0 ? entity : entity.slice(0, end)
  const body = end < 0 ? '' : entity.slice(end + 4)
  const headers = new Map<string, string>()
  for (const line of head.replace(/\r\n[ \t]+/g, ' ').split('\r\n')) {
    const colon = line.indexOf(':')
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim())
  }
  return { headers, body }
}

function collectParts(headers: ReadonlyMap<string, string>, body: string, out: Map<string, string>): void {
  const type = headers.get('content-type') ?? 'text/plain'
  const boundary = /boundary="?([^";]+)"?/i.exec(type)?.[1]
  if (/^multipart\//i.test(type) && boundary) {
    for (const chunk of body.split(`--${boundary}`).slice(1)) {
      if (chunk.startsWith('--')) break
      // The CRLF before a boundary belongs to the boundary (RFC 2046).
      const part = splitHeaders(chunk.replace(/^\r\n/, '').replace(/\r\n$/, ''))
      collectParts(part.headers, part.body, out)
    }
    return
  }
  const encoding = (headers.get('content-transfer-encoding') ?? '7bit').toLowerCase()
  const bytes = encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64')
    : encoding === 'quoted-printable' ? quotedPrintable(body)
    : Buffer.from(body, 'utf8')
  out.set(type.split(';')[0]!.trim().toLowerCase(), bytes.toString('utf8').replace(/\r\n/g, '\n'))
}

function quotedPrintable(s: string): Buffer {
  const soft = s.replace(/=\r\n/g, '')
  const bytes: number[] = []
  for (let i = 0; i < soft.length; i++) {
    const c = soft[i] as string
    if (c === '=' && /^[0-9A-F]{2}$/i.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16))
      i += 2
    } else {
      bytes.push(...Buffer.from(c, 'utf8'))
    }
  }
  return Buffer.from(bytes)
}

/** RFC 2047 encoded words (`=?UTF-8?Q?…?=`, `=?UTF-8?B?…?=`), decoded; the space between two of them dropped. */
export function decodeWords(value: string): string {
  return value.replace(/\?=\s+=\?/g, '?==?').replace(/=\?([^?]+)\?([QB])\?([^?]*)\?=/gi, (_m, _charset: string, kind: string, text: string) =>
    kind.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : quotedPrintable(text.replace(/_/g, ' ')).toString('utf8'))
}
