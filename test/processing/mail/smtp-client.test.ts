/**
 * The SMTP client (C17, issue 27 item 4) against a real SMTP server started here: STARTTLS when
 * offered (and required), smtps://, AUTH PLAIN and LOGIN, a refusal with 4xx, a 5xx to the
 * recipient, a dropped connection, a server that never greets, and the message it writes.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { smtpTransport, type OutgoingMail, type SmtpSettings } from '../../../src/processing/mail/transport.ts'
import { decodeWords, startDroppingServer, startSmtpSink, TEST_CA_FILE } from '../../helpers/smtp.ts'

const MAIL: OutgoingMail = {
  from: { name: 'Tea & Co', address: 'shop@tea.example' },
  to: 'ana@example.com',
  subject: 'Su próxima entrega de Tea & Co: viernes, 14 de marzo',
  text: 'Hola, Ana:\n\n  2 × Té verde  25,00 €\n',
  html: '<!DOCTYPE html><html lang="es"><body><p>Hola, Ana:</p></body></html>',
  messageId: '<replenish.upcoming.7.1773446400000@tea.example>',
  date: new Date('2026-03-11T09:30:00.000Z'),
  language: 'es',
}

function client(t: import('node:test').TestContext, settings: SmtpSettings) {
  const transport = smtpTransport(settings)
  t.after(() => transport.close(true))
  return transport
}

test('a message goes as multipart/alternative (text, then HTML) with From, To, Subject, Message-ID, Date and Content-Language; the result is the server\'s reply', async (t) => {
  const sink = await startSmtpSink(t)
  const result = await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.deepEqual(result, { sent: true, reply: '250 2.0.0 Ok: queued as test-0' })
  const [got] = await sink.waitFor(1)
  assert.ok(got)
  assert.deepEqual([got.from, got.to], ['shop@tea.example', ['ana@example.com']])
  assert.equal(got.headers.get('from'), '"Tea & Co" <shop@tea.example>')
  assert.equal(got.headers.get('to'), 'ana@example.com')
  assert.equal(got.subject, MAIL.subject)
  assert.equal(got.headers.get('message-id'), MAIL.messageId)
  assert.equal(got.headers.get('date'), 'Wed, 11 Mar 2026 09:30:00 +0000')
  assert.equal(got.headers.get('content-language'), 'es')
  assert.equal(got.headers.get('auto-submitted'), 'auto-generated')
  assert.match(got.headers.get('content-type') ?? '', /^multipart\/alternative;/)
  assert.ok(got.raw.indexOf('text/plain') < got.raw.indexOf('text/html'), 'the plain part comes first (clients show the last one they can)')
  assert.equal(got.text, MAIL.text)
  assert.equal(got.html, MAIL.html)
})

test('headers outside printable ASCII go in RFC 2047 words of at most 75 characters, split between characters', async (t) => {
  const sink = await startSmtpSink(t)
  const subject = 'Ihre nächste Lieferung von Kaffeerösterei Müller & Söhne, Düsseldorf: Donnerstag, 12. März — ☕'
  const result = await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send({ ...MAIL, subject, from: { name: 'Café Crème', address: 'shop@tea.example' } })
  assert.equal(result.sent, true)
  const [got] = await sink.waitFor(1)
  assert.equal(got?.subject, subject)
  assert.equal(decodeWords(got?.headers.get('from') ?? ''), 'Café Crème <shop@tea.example>')
  for (const word of (got?.raw ?? '').split(/\s+/).filter((w) => w.startsWith('=?'))) assert.ok(word.length <= 75, word)
})

test('STARTTLS is used when offered: a server that refuses MAIL before it, with a certificate of a private CA, takes the mail with the CA file', async (t) => {
  const sink = await startSmtpSink(t, { requireTls: true, certificate: 'ca' })
  const unchecked = await client(t, { url: sink.url(), tlsInsecure: false }).send(MAIL)
  assert.equal(unchecked.sent, false)
  assert.match(unchecked.sent ? '' : unchecked.error, /certificate/i, 'an unknown CA is refused, never downgraded to plain text')
  assert.equal(unchecked.sent ? true : unchecked.permanent, false, 'a TLS problem is retried: the operator can fix it')
  assert.deepEqual(await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL), { sent: true, reply: '250 2.0.0 Ok: queued as test-0' })
  assert.equal(sink.messages.length, 1)
})

test('a self-signed certificate (smtp-server\'s own) is taken with REPLENISH_SMTP_TLS_INSECURE=1 only', async (t) => {
  const sink = await startSmtpSink(t, { requireTls: true, certificate: 'self' })
  const checked = await client(t, { url: sink.url(), tlsInsecure: false }).send(MAIL)
  assert.equal(checked.sent, false)
  assert.match(checked.sent ? '' : checked.error, /self-signed|certificate/i)
  assert.equal((await client(t, { url: sink.url(), tlsInsecure: true }).send(MAIL)).sent, true)
  assert.equal(sink.messages.length, 1)
})

test('smtps:// speaks TLS from the first byte', async (t) => {
  const sink = await startSmtpSink(t, { secure: true, certificate: 'ca' })
  assert.match(sink.url(), /^smtps:\/\//)
  assert.deepEqual(await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL), { sent: true, reply: '250 2.0.0 Ok: queued as test-0' })
})

for (const method of ['PLAIN', 'LOGIN']) {
  test(`AUTH ${method} with the URL's user and password (percent-encoded characters decoded)`, async (t) => {
    const credentials = { user: 'shop@tea.example', pass: 'p@ss:w/rd%' }
    const sink = await startSmtpSink(t, { auth: credentials, authMethods: [method], requireTls: true })
    const result = await client(t, { url: sink.url(credentials), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
    assert.equal(result.sent, true)
    assert.deepEqual(sink.logins, [{ method, user: 'shop@tea.example', ok: true }])
  })
}

test('a wrong password: not sent, the server\'s 535 kept, retried (a setting the operator fixes), and the password in no text', async (t) => {
  const sink = await startSmtpSink(t, { auth: { user: 'shop', pass: 'right-password' } })
  const result = await client(t, { url: sink.url({ user: 'shop', pass: 'wrong-password-9f3a' }), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.equal(result.sent, false)
  if (result.sent) return
  assert.match(result.reply ?? '', /^535 5\.7\.8 Authentication credentials invalid/)
  assert.equal(result.permanent, false)
  assert.ok(!JSON.stringify(result).includes('wrong-password-9f3a'), JSON.stringify(result))
})

test('a 4xx at the end of DATA: not sent, retried later, with the server\'s reply', async (t) => {
  const sink = await startSmtpSink(t, { refuseData: () => ({ code: 451, message: '4.3.0 Try again later' }) })
  const result = await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.deepEqual(result.sent ? undefined : [result.reply, result.permanent], ['451 4.3.0 Try again later', false])
})

test('a 5xx to the recipient fails the mail for good (trying again cannot change the answer)', async (t) => {
  const sink = await startSmtpSink(t, { refuseRecipient: () => ({ code: 550, message: '5.1.1 No such user here' }) })
  const result = await client(t, { url: sink.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.equal(result.sent, false)
  if (result.sent) return
  assert.equal(result.permanent, true)
  assert.match(result.reply ?? '', /^550 5\.1\.1 No such user here/)
  assert.match(result.error, /RCPT TO|Recipient/i)
})

test('a 5xx to MAIL FROM (a sender the provider refuses) is retried: a setting to fix, not this mail\'s fault; a 5xx at the end of DATA is final', async (t) => {
  const refusesSender = await startSmtpSink(t, { refuseSender: { code: 553, message: '5.7.1 Sender address rejected: not owned by user' } })
  const sender = await client(t, { url: refusesSender.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.deepEqual(sender.sent ? undefined : [sender.reply, sender.permanent], ['553 5.7.1 Sender address rejected: not owned by user', false])
  const refusesMessage = await startSmtpSink(t, { refuseData: () => ({ code: 554, message: '5.6.0 Message content rejected' }) })
  const message = await client(t, { url: refusesMessage.url(), tlsInsecure: false, caFile: TEST_CA_FILE }).send(MAIL)
  assert.deepEqual(message.sent ? undefined : [message.reply, message.permanent], ['554 5.6.0 Message content rejected', true])
})

test('a server that drops the connection mid-conversation: not sent, no reply, retried', async (t) => {
  const dropping = await startDroppingServer(t)
  const result = await client(t, { url: `smtp://127.0.0.1:${dropping.port}`, tlsInsecure: false }).send(MAIL)
  assert.equal(result.sent, false)
  if (result.sent) return
  assert.deepEqual([result.reply, result.permanent], [null, false])
  assert.match(result.error, /clos|ended|reset/i)
  assert.equal(dropping.connections(), 1, 'the pool does not retry by itself: the outbox does, on its schedule')
})

test('a server that never greets: the greeting time-out ends the attempt', async (t) => {
  const silent = await startDroppingServer(t, true)
  const result = await client(t, { url: `smtp://127.0.0.1:${silent.port}`, tlsInsecure: false, timeouts: { greetingMs: 300 } }).send(MAIL)
  assert.equal(result.sent, false)
  if (result.sent) return
  assert.deepEqual([result.reply, result.permanent], [null, false])
  assert.match(result.error, /greeting|time/i)
})
