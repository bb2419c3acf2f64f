/**
 * Customers' mails end to end (C17): events queue mails in their own unit, serve's sender sends
 * them to a real SMTP server, and the admin API and /metrics show the log. Both backends.
 */
import { test, type TestContext } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../../helpers/wait.ts'
import { ADMIN_TOKEN, seedSubscribable, startTestServer, type TestServer } from '../../helpers/server.ts'
import { startSmtpSink, TEST_CA_FILE, type SinkOptions, type SmtpSink } from '../../helpers/smtp.ts'
import { testSql } from '../../helpers/rows.ts'
import { processAsOf } from '../helpers.ts'
import { mailForServe } from '../../../src/processing/mail/in-serve.ts'
import { mailMetricsText } from '../../../src/processing/mail/metrics.ts'
import { createPortalLink, prunePortalLinks } from '../../../src/admin/portal-sessions.ts'
import { noPacing } from '../../../src/processing/pacer.ts'
import { sha256 } from '../../../src/api/kit/auth.ts'
import { addDays } from '../../../src/domain/dates.ts'
import type { Sender } from '../../../src/processing/mail/sender.ts'

const TODAY = '2026-03-10'
const ADDRESS = { firstname: 'Ana', lastname: 'García', address1: 'Calle Mayor 1', city: 'Madrid', zipcode: '28013', country_iso: 'ES' }

interface Setup {
  readonly server: TestServer
  readonly sink: SmtpSink
  readonly logs: object[]
  /** Starts serve's sender (once). */
  send(): Sender
  admin(method: string, path: string, json?: unknown): Promise<any>
  /** A customer with a weekly subscription of two items due on `due`. */
  customer(options?: { locale?: string; email_notifications?: boolean; due?: string }): Promise<{ user: any; subscription: any }>
  /** The log, waiting until no mail is pending. */
  settled(): Promise<any[]>
}

async function setup(t: TestContext, sinkOptions: SinkOptions = {}, env: Record<string, string> = {}, credentials?: { user: string; pass: string }): Promise<Setup> {
  const sink = await startSmtpSink(t, sinkOptions)
  const server = await startTestServer(t, {
    REPLENISH_TODAY: TODAY,
    REPLENISH_SMTP_URL: sink.url(credentials),
    REPLENISH_SMTP_CA_FILE: TEST_CA_FILE,
    REPLENISH_MAIL_FROM: 'Tea & Co <shop@tea.example>',
    REPLENISH_PUBLIC_URL: 'https://shop.example',
    REPLENISH_SHOP_NAME: 'Tea & Co',
    REPLENISH_MAIL_RETRY_BASE_SECONDS: '1',
    ...env,
  })
  const logs: object[] = []
  let sender: Sender | undefined
  const admin = async (method: string, path: string, json?: unknown): Promise<any> => {
    const res = await server.request(method, `/admin/api/v1${path}`, { key: ADMIN_TOKEN, ...(json === undefined ? {} : { json }) })
    assert.ok(res.status < 300, `${method} ${path} → ${res.status} ${res.text}`)
    return res.body
  }
  const tea = await seedSubscribable(server.store)
  const pot = await seedSubscribable(server.store)
  await admin('PATCH', `/subscribables/${tea}`, { subscribable: { name: 'Té verde' } })
  let n = 0
  return {
    server, sink, logs, admin,
    send() {
      if (!sender) {
        sender = mailForServe(server.config, server.store, { create: createPortalLink, prune: prunePortalLinks }, (e) => logs.push(e), noPacing, { pollMs: 20, random: () => 0.5 })
        assert.ok(sender, 'e-mail is configured')
        sender.start()
        t.after(() => sender?.stop())
      }
      return sender
    },
    async customer(o = {}) {
      const user = await admin('POST', '/users', { user: { email: `ana${++n}@example.com`, ...(o.locale ? { locale: o.locale } : {}), ...(o.email_notifications === false ? { email_notifications: false } : {}) } })
      const subscription = await admin('POST', '/subscriptions', { subscription: {
        user_id: user.id, interval_length: 1, interval_units: 'week', actionable_date: o.due ?? addDays(TODAY, 2), shipping_address_attributes: ADDRESS,
        line_items_attributes: [{ subscribable_id: tea, quantity: 2 }, { subscribable_id: pot, quantity: 1 }],
      } })
      return { user, subscription }
    },
    async settled() {
      let emails: any[] = []
      await until('no mail pending', async () => {
        emails = (await admin('GET', '/emails?limit=100')).emails
        return emails.length > 0 && emails.every((e: any) => e.state !== 'pending')
      })
      return emails
    },
  }
}

test('upcoming: queued by the processor, sent in the customer\'s language with a one-time link; the log keeps the subject and the reply, never the link', async (t) => {
  const s = await setup(t)
  const { user, subscription } = await s.customer({ locale: 'es' })
  await processAsOf(s.server, TODAY)
  const [queued] = (await s.admin('GET', '/emails')).emails
  const event = (await s.admin('GET', '/events?type=subscription.upcoming')).events[0]
  assert.deepEqual(queued, {
    id: queued.id, user_id: user.id, kind: 'upcoming', event_id: event.id, to: user.email, subject: null, state: 'pending', attempts: [],
    created_at: queued.created_at, updated_at: queued.created_at,
  })
  // The customer changes language before it goes: it is rendered when sent.
  await s.admin('PATCH', `/users/${user.id}`, { user: { locale: 'fr' } })
  s.send()
  const [mail] = await s.sink.waitFor(1)
  assert.ok(mail)
  assert.deepEqual(mail.to, [user.email])
  assert.equal(mail.headers.get('from'), '"Tea & Co" <shop@tea.example>')
  assert.equal(mail.subject, 'Votre prochaine livraison Tea & Co\u00a0: jeudi 12 mars')
  assert.match(mail.headers.get('message-id') ?? '', new RegExp(`^<replenish\\.upcoming\\.${queued.id}\\.\\d+@tea\\.example>$`))
  assert.ok(mail.headers.get('date'))
  assert.equal(mail.headers.get('content-language'), 'fr')
  assert.match(mail.text, /^Bonjour Ana,\n\nVotre prochaine livraison Tea & Co est prévue le jeudi 12 mars 2026\.\n\n {2}2 × Té verde\n {2}1 × Coffee\n/)
  const url = /https:\/\/shop\.example\/portal\/sessions\/(rplp_[A-Za-z0-9_-]{43})/.exec(mail.text)?.[0]
  assert.ok(url, mail.text)
  assert.ok(mail.html.includes(`href="${url}"`))
  const [sent] = await s.settled()
  assert.deepEqual(sent, {
    ...queued, subject: mail.subject, state: 'sent', attempts: [{ smtp_reply: '250 2.0.0 Ok: queued as test-0', error: null, created_at: sent.attempts[0].created_at }],
    updated_at: sent.updated_at,
  })

  // The link: valid 72 hours (REPLENISH_MAIL_LINK_HOURS), its hash stored, the token nowhere but in the mail.
  const token = url.slice(url.lastIndexOf('/') + 1)
  const link = await testSql(s.server.store).get(`SELECT user_id, expires_at, created_at, return_url FROM portal_links WHERE token_hash = '${sha256(token)}'`)
  assert.equal(Number(link?.['user_id']), user.id)
  assert.equal(Date.parse(String(link?.['expires_at'])) - Date.parse(String(link?.['created_at'])), 72 * 3_600_000)
  const everything = JSON.stringify([await s.admin('GET', '/emails'), await testSql(s.server.store).all('SELECT * FROM emails'), s.logs, s.server.errors, s.server.log])
  assert.ok(!everything.includes(token), 'the token is in no stored row, answer or log')
  // Opened: the customer's portal, once.
  const opened = await fetch(`${s.server.url}/portal/sessions/${token}`, { redirect: 'manual' })
  assert.deepEqual([opened.status, opened.headers.get('location')], [303, '/portal/'])
  assert.equal((await fetch(`${s.server.url}/portal/sessions/${token}`, { redirect: 'manual' })).status, 410)
  assert.equal(subscription.user_id, user.id)
})

test('a 4xx is retried on C10\'s schedule from REPLENISH_MAIL_RETRY_BASE_SECONDS, then sent; a 5xx to the recipient fails the mail at once', async (t) => {
  const s = await setup(t, {
    refuseData: (n) => (n === 0 ? { code: 451, message: '4.3.0 Try again later' } : undefined),
    refuseRecipient: (address) => (address.startsWith('gone') ? { code: 550, message: '5.1.1 No such user here' } : undefined),
  })
  const { user } = await s.customer()
  await processAsOf(s.server, TODAY)
  s.send()
  // The first attempt's result: pending, due again one base delay (a draw of 0.5 gives the nominal delay) after it.
  let retrying: any
  await until('the first attempt recorded', async () => (retrying = (await s.admin('GET', '/emails')).emails.find((e: any) => e.attempts.length === 1)) !== undefined)
  assert.equal(retrying.state, 'pending')
  assert.deepEqual(retrying.attempts[0], { smtp_reply: '451 4.3.0 Try again later', error: retrying.attempts[0].error, created_at: retrying.attempts[0].created_at })
  assert.match(retrying.attempts[0].error, /451|Try again/)
  const row = await testSql(s.server.store).get(`SELECT due_ms, updated_ms, retries FROM emails WHERE id = ${retrying.id}`)
  if (retrying.attempts.length === 1 && Number(row?.['retries']) === 1) assert.equal(Number(row?.['due_ms']) - Number(row?.['updated_ms']), 1000)
  const [sent] = await s.settled()
  assert.equal(sent.state, 'sent')
  assert.deepEqual(sent.attempts.map((a: any) => a.smtp_reply), ['451 4.3.0 Try again later', '250 2.0.0 Ok: queued as test-1'])
  assert.equal(s.sink.messages.length, 1)

  await s.admin('PATCH', `/users/${user.id}`, { user: { email: 'gone@example.com' } })
  await s.admin('POST', `/subscriptions/${(await s.admin('GET', `/subscriptions?user_id=${user.id}`)).subscriptions[0].id}/cancel`)
  const emails = await s.settled()
  const refused = emails.find((e: any) => e.kind === 'canceled')
  assert.equal(refused.state, 'failed')
  assert.equal(refused.attempts.length, 1)
  assert.match(refused.attempts[0].smtp_reply, /^550 5\.1\.1 No such user here/)
})

test('payment_failed on a payment_failed outcome, canceled on a cancellation; an out-of-stock failure makes none', async (t) => {
  const s = await setup(t)
  const { user, subscription } = await s.customer({ locale: 'de', due: TODAY })
  const other = await s.customer({ due: TODAY })
  await processAsOf(s.server, TODAY)
  const installmentOf = async (id: number) => (await s.admin('GET', `/installments?subscription_id=${id}`)).installments[0]
  await s.admin('POST', `/installments/${(await installmentOf(subscription.id)).id}/outcome`, { outcome: { result: 'payment_failed', message: 'Card declined' } })
  await s.admin('POST', `/installments/${(await installmentOf(other.subscription.id)).id}/outcome`, { outcome: { result: 'out_of_stock' } })
  await s.admin('POST', `/subscriptions/${subscription.id}/cancel`)
  s.send()
  const emails = await s.settled()
  assert.deepEqual(emails.map((e: any) => [e.user_id, e.kind, e.state]), [[user.id, 'payment_failed', 'sent'], [user.id, 'canceled', 'sent']])
  const mails = await s.sink.waitFor(2)
  const failed = mails.find((m) => m.subject.startsWith('Zahlung'))
  assert.equal(failed?.subject, 'Zahlung für Ihre Lieferung von Tea & Co fehlgeschlagen')
  assert.match(failed?.text ?? '', /^Hallo Ana,\n\nLeider konnten wir die Zahlung für Ihre Lieferung vom Dienstag, 10\. März 2026 nicht einziehen\.\n\n {2}2 × Té verde\n {2}1 × Coffee\n\nWir versuchen es am 11\. März 2026 um \d\d:\d\d UTC erneut\./)
  assert.ok(mails.some((m) => m.subject === 'Ihr Abonnement bei Tea & Co wurde gekündigt'))
})

test('nothing for a customer who turned e-mail off, or was erased; a mail queued before either is not sent, and the erased address leaves the log', async (t) => {
  const s = await setup(t)
  const quiet = await s.customer({ email_notifications: false })
  const later = await s.customer()
  const erased = await s.customer()
  await processAsOf(s.server, TODAY)
  assert.deepEqual((await s.admin('GET', '/emails')).emails.map((e: any) => e.user_id), [later.user.id, erased.user.id])
  await s.admin('PATCH', `/users/${later.user.id}`, { user: { email_notifications: false } })
  await s.admin('POST', `/users/${erased.user.id}/erase`)
  s.send()
  const emails = await s.settled()
  assert.deepEqual(emails.map((e: any) => [e.user_id, e.state, e.to, e.attempts.map((a: any) => [a.smtp_reply, a.error])]), [
    [later.user.id, 'failed', later.user.email, [[null, 'not sent: the customer turned e-mail notifications off']]],
    [erased.user.id, 'failed', null, [[null, 'not sent: the customer was erased']]],
  ], 'the erasure canceled their subscription: no canceled mail for them either')
  assert.equal(s.sink.messages.length, 0)
  assert.equal(quiet.user.email_notifications, false)
})

test('a unit that rolls back queues nothing; without REPLENISH_SMTP_URL no mail is ever queued', async (t) => {
  const s = await setup(t)
  const { subscription } = await s.customer()
  await assert.rejects(s.server.store.write(async (tx) => {
    await tx.events.recordJson('subscription.canceled', subscription.id, '{}')
    assert.equal((await tx.emails.list({ after: 0, limit: 10 })).length, 1, 'queued inside the unit')
    throw new Error('rolled back')
  }), /rolled back/)
  assert.deepEqual((await s.admin('GET', '/emails')).emails, [])

  const plain = await startTestServer(t, { REPLENISH_TODAY: TODAY })
  const res = await plain.request('POST', '/admin/api/v1/users', { key: ADMIN_TOKEN, json: { user: { email: 'x@example.com' } } })
  const item = await seedSubscribable(plain.store)
  const sub = await plain.request('POST', '/admin/api/v1/subscriptions', { key: ADMIN_TOKEN, json: { subscription: {
    user_id: res.body.id, interval_length: 1, actionable_date: addDays(TODAY, 1), line_items_attributes: [{ subscribable_id: item, quantity: 1 }],
  } } })
  await processAsOf(plain, TODAY)
  await plain.request('POST', `/admin/api/v1/subscriptions/${sub.body.id}/cancel`, { key: ADMIN_TOKEN })
  assert.equal((await plain.store.events.feed(0, 100, 'subscription.upcoming')).length, 1, 'the event is written without e-mail too')
  assert.deepEqual((await plain.request('GET', '/admin/api/v1/emails', { key: ADMIN_TOKEN })).body, { emails: [], next_after: null })
})

test('a request never waits for the SMTP server: a cancel answers while the server holds the sender\'s message', async (t) => {
  let release = (): void => {}
  const held = new Promise<void>((resolve) => (release = resolve))
  const s = await setup(t, { holdData: held })
  const first = await s.customer()
  const second = await s.customer()
  await processAsOf(s.server, TODAY)
  s.send()
  for (let i = 0; i < 400 && s.sink.messages.length === 0; i++) {
    const { emails } = await s.admin('GET', '/emails')
    if (emails.length === 2) break
    await new Promise((r) => setTimeout(r, 10))
  }
  const res = await s.server.request('POST', `/admin/api/v1/subscriptions/${second.subscription.id}/cancel`, { key: ADMIN_TOKEN })
  assert.equal(res.status, 200)
  assert.equal(s.sink.messages.length, 0, 'the server is still holding the mail')
  release()
  await s.sink.waitFor(3)
  assert.equal(first.user.id + 1, second.user.id)
})

test('the log API: filters by user and state, pages by id, strict parameters (C13), scope read', async (t) => {
  const s = await setup(t)
  const a = await s.customer()
  const b = await s.customer()
  await processAsOf(s.server, TODAY)
  await s.admin('POST', `/subscriptions/${a.subscription.id}/cancel`)
  const all = (await s.admin('GET', '/emails')).emails
  assert.deepEqual(all.map((e: any) => [e.user_id, e.kind]), [[a.user.id, 'upcoming'], [b.user.id, 'upcoming'], [a.user.id, 'canceled']])
  assert.deepEqual((await s.admin('GET', `/emails?user_id=${a.user.id}`)).emails.map((e: any) => e.kind), ['upcoming', 'canceled'])
  assert.deepEqual((await s.admin('GET', '/emails?state=sent')).emails, [])
  const page = await s.admin('GET', '/emails?limit=2')
  assert.deepEqual([page.emails.length, page.next_after], [2, all[1].id])
  assert.deepEqual((await s.admin('GET', `/emails?after=${page.next_after}`)).emails.map((e: any) => e.id), [all[2].id])
  const refused = async (query: string, errors: object) => {
    const res = await s.server.request('GET', `/admin/api/v1/emails?${query}`, { key: ADMIN_TOKEN })
    assert.deepEqual([res.status, res.body], [422, errors], query)
  }
  await refused('state=queued', { state: ['is not included in the list'] })
  await refused('limit=0', { limit: ['must be between 1 and 100'] })
  await refused('limit=101', { limit: ['must be between 1 and 100'] })
  await refused('after=x', { after: ['is not a number'] })
  await refused('user_id=abc', { user_id: ['is not a number'] })
  const token = await s.admin('POST', '/admin_tokens', { admin_token: { scope: 'read', label: 'support' } })
  assert.equal((await s.server.request('GET', '/admin/api/v1/emails', { key: token.token })).status, 200)
})

test('/metrics: pending, the oldest pending one\'s age, then sent and failed totals', async (t) => {
  const s = await setup(t, { refuseRecipient: (address) => (address.startsWith('gone') ? { code: 550, message: '5.1.1 No such user here' } : undefined) })
  await s.customer()
  const gone = await s.customer()
  await s.admin('PATCH', `/users/${gone.user.id}`, { user: { email: 'gone@example.com' } })
  await processAsOf(s.server, TODAY)
  assert.match(await mailMetricsText(s.server.store, Date.now()), /^replenish_emails_pending 2$/m)
  s.send()
  await s.settled()
  const text = await mailMetricsText(s.server.store, Date.now())
  assert.match(text, /^replenish_emails_pending 0$/m)
  assert.match(text, /^replenish_email_oldest_pending_age_seconds 0$/m)
  assert.match(text, /^replenish_emails_total\{state="sent"\} 1$/m)
  assert.match(text, /^replenish_emails_total\{state="failed"\} 1$/m)
})

test('the SMTP password is in no attempt, log line or answer', async (t) => {
  const password = 'hunter2-smtp-secret'
  const s = await setup(t, { auth: { user: 'shop', pass: 'the-right-one' } }, {}, { user: 'shop', pass: password })
  await s.customer()
  await processAsOf(s.server, TODAY)
  s.send()
  let attempt: any
  await until('the attempt recorded', async () => (attempt = (await s.admin('GET', '/emails')).emails[0]?.attempts[0]) !== undefined)
  assert.match(attempt.smtp_reply, /^535/)
  const metrics = await s.server.request('GET', '/metrics', { key: ADMIN_TOKEN })
  const everything = JSON.stringify([await s.admin('GET', '/emails'), s.logs, s.server.errors, s.server.log, metrics.text, await testSql(s.server.store).all('SELECT * FROM emails')])
  assert.ok(!everything.includes(password))
})
