/**
 * A customer's mail as the RFC 5322 / MIME text the SMTP server receives: headers, then a
 * multipart/alternative of the plain text and the HTML, each UTF-8 in base64. Written here rather
 * than by nodemailer's composer, which builds every message through a chain of streams: a third of
 * its CPU for the same bytes (docs/decisions.md, "Customer e-mail"). nodemailer still speaks SMTP.
 */
export interface MimeMail {
  readonly from: { readonly name: string | null; readonly address: string }
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly html: string
  readonly messageId: string
  readonly date: Date
  readonly language: string
}

const CRLF = '\r\n'
/**
 * Both parts are base64, whose alphabet has no `-` nor `_`: no line of a body can be this
 * boundary, so it needs no randomness (RFC 2046 §5.1.1 asks only that it not occur in the parts).
 */
const BOUNDARY = '--_replenish-alternative_--'

export function mimeMessage(m: MimeMail): string {
  const boundary = BOUNDARY
  const part = (type: string, body: string): string =>
    `--${boundary}${CRLF}Content-Type: ${type}; charset=utf-8${CRLF}Content-Transfer-Encoding: base64${CRLF}${CRLF}${base64Lines(body)}${CRLF}`
  return [
    header('From', m.from.name === null ? m.from.address : `${displayName(m.from.name)} <${m.from.address}>`),
    header('To', m.to),
    header('Subject', encodedText(m.subject)),
    header('Date', rfc5322Date(m.date)),
    header('Message-ID', m.messageId),
    header('Content-Language', m.language),
    header('Auto-Submitted', 'auto-generated'),
    header('MIME-Version', '1.0'),
    header('Content-Type', `multipart/alternative; boundary="${boundary}"`),
    '',
    part('text/plain', m.text.replace(/\r?\n/g, CRLF)) + part('text/html', m.html.replace(/\r?\n/g, CRLF)) + `--${boundary}--${CRLF}`,
  ].join(CRLF)
}

function header(name: string, value: string): string {
  return `${name}: ${value}`
}

/** Printable ASCII that needs no quoting in a display name (RFC 5322 atext and spaces). */
const ATEXT = /^[A-Za-z0-9!#$%'*+\-/=?^_`{|}~ ]*$/

/** A display name as a phrase: as it is, quoted (`"Tea & Co"`), or in encoded words when it is not ASCII. */
export function displayName(name: string): string {
  if (ATEXT.test(name)) return name
  if (/^[\x20-\x7e]*$/.test(name)) return `"${name.replace(/["\\]/g, '\\$&')}"`
  return encodedWords(name)
}

/** Header text: as it is when printable ASCII, else RFC 2047 encoded words. */
export function encodedText(text: string): string {
  return /^[\x20-\x7e]*$/.test(text) ? text : encodedWords(text)
}

/**
 * RFC 2047 `=?UTF-8?B?…?=` words of at most 75 characters, split between characters (never inside
 * one), separated by a folding line break.
 */
function encodedWords(text: string): string {
  const words: string[] = []
  let chunk = ''
  // 45 bytes of UTF-8 make 60 characters of base64: with `=?UTF-8?B?` and `?=`, 72.
  for (const char of text) {
    if (Buffer.byteLength(chunk + char) > 45) {
      words.push(chunk)
      chunk = ''
    }
    chunk += char
  }
  if (chunk !== '') words.push(chunk)
  return words.map((w) => `=?UTF-8?B?${Buffer.from(w, 'utf8').toString('base64')}?=`).join(`${CRLF} `)
}

function base64Lines(text: string): string {
  const all = Buffer.from(text, 'utf8').toString('base64')
  const lines: string[] = []
  for (let i = 0; i < all.length; i += 76) lines.push(all.slice(i, i + 76))
  return lines.join(CRLF)
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat']
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']

/** `Wed, 11 Mar 2026 09:30:00 +0000` (RFC 5322 §3.3, in UTC). */
export function rfc5322Date(d: Date): string {
  const two = (n: number): string => String(n).padStart(2, '0')
  return `${DAYS[d.getUTCDay()]}, ${two(d.getUTCDate())} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} ` +
    `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())} +0000`
}
