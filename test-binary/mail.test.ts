/**
 * Issue 27, C17: `kill -9` of the built executable while customers' mails are pending and in
 * flight, a restart on the same database, and every mail is then sent at least once (the outbox
 * survives kill -9). The mails come from `replenish process` run beside `serve` (upcoming) and from
 * requests (cancellations). Real processes, a real SMTP server, 127.0.0.1 only.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TestContext } from 'node:test'
import { request, type TestResponse } from '../test/helpers/server.ts'
import { startSmtpSink, TEST_CA_FILE } from '../test/helpers/smtp.ts'
import { spawnProcess, tempDir, type Child } from '../test/cli/harness.ts'

const BINARY = fileURLToPath(new URL('../dist/replenish', import.meta.url))
if (!existsSync(BINARY)) throw new Error(`${BINARY} is missing: run \`npm run build\` first`)

const TOKEN = 'binary-mail-admin-token-0123456789'
const CUSTOMERS = 30
const TODAY = '2026-03-10'
/** Messages the SMTP server keeps waiting when the kill comes: the sender's pool has 4 connections. */
const IN_FLIGHT_AT_KILL = 3
const DRAIN_LIMIT_MS = 30_000

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms))

async function until(what: string, ms: number, ready: () => boolean | Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await sleep(50)
  }
}

const expectStatus = (res: TestResponse, status: number): void => assert.equal(res.status, status, res.text)

test('kill -9 with mails pending and in flight; after a restart every mail is sent at least once', async (t) => {
  // Before the kill: a mail whose id is a multiple of 4 is taken at once; the others are refused
  // (451) at their first attempt and kept waiting at their second (in flight at the kill). After
  // the restart everything is taken. The mail's id is in its Message-ID.
  let restarted = false
  const tries = new Map<number, number>()
  const answers: { id: number; answer: 'taken' | 'refused' | 'held'; restarted: boolean }[] = []
  const never = new Promise<undefined>(() => {})
  const sink = await startSmtpSink(t, {
    async answer(mail) {
      const id = Number(/^<replenish\.\w+\.(\d+)\./.exec(mail.headers.get('message-id') ?? '')?.[1])
      const before = tries.get(id) ?? 0
      tries.set(id, before + 1)
      const answer = restarted || id % 4 === 0 ? 'taken' : before === 0 ? 'refused' : 'held'
      answers.push({ id, answer, restarted })
      if (answer === 'refused') return { code: 451, message: '4.3.0 Try again later' }
      return answer === 'held' ? never : undefined
    },
  })

  const cwd = tempDir(t)
  const empty = join(tempDir(t), 'empty-bin')
  mkdirSync(empty)
  const env = {
    PATH: empty,
    REPLENISH_ADMIN_TOKEN: TOKEN,
    REPLENISH_PROCESS_EVERY: '0',
    REPLENISH_RATE_LIMIT: '0',
    REPLENISH_TODAY: TODAY,
    REPLENISH_SMTP_URL: sink.url(),
    REPLENISH_SMTP_CA_FILE: TEST_CA_FILE,
    REPLENISH_MAIL_FROM: 'Tea & Co <shop@tea.example>',
    REPLENISH_PUBLIC_URL: 'https://shop.example',
    REPLENISH_MAIL_RETRY_BASE_SECONDS: '1',
  }
  const startServe = async (): Promise<{ child: Child; url: string }> => {
    const child = spawnProcess(t, BINARY, ['serve', '--port', '0'], { cwd, env })
    return { child, url: (await child.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string }
  }
  const first = await startServe()
  const admin = (url: string, method: string, path: string, json?: unknown) =>
    request(url, method, `/admin/api/v1${path}`, { key: TOKEN, ...(json === undefined ? {} : { json }) })

  const item = await admin(first.url, 'POST', '/subscribables', { subscribable: { sku: 'TEA-500G', name: 'Té verde' } })
  expectStatus(item, 201)
  const subscriptions: number[] = []
  for (let i = 0; i < CUSTOMERS; i++) {
    const user = await admin(first.url, 'POST', '/users', { user: { email: `customer${i}@example.com`, locale: ['en', 'es', 'fr', 'de'][i % 4] } })
    expectStatus(user, 201)
    const sub = await admin(first.url, 'POST', '/subscriptions', { subscription: {
      user_id: user.body.id, interval_length: 1, interval_units: 'month', actionable_date: '2026-03-12', line_items_attributes: [{ subscribable_id: item.body.id, quantity: 1 }],
    } })
    expectStatus(sub, 201)
    subscriptions.push(sub.body.id as number)
  }
  // The cron job beside serve: its events queue mails for serve to send.
  const processRun = spawnProcess(t, BINARY, ['process'], { cwd, env })
  assert.deepEqual(await processRun.exited, { code: 0, signal: null }, processRun.stderr())
  assert.match(processRun.stdout(), /; 30 upcoming deliveries announced$/m)
  for (const id of subscriptions.slice(0, 20)) expectStatus(await admin(first.url, 'POST', `/subscriptions/${id}/cancel`), 200)

  await until(`${IN_FLIGHT_AT_KILL} mails kept waiting at the SMTP server`, 20_000, () => answers.filter((a) => a.answer === 'held').length >= IN_FLIGHT_AT_KILL)
  const metrics = await request(first.url, 'GET', '/metrics', { key: TOKEN })
  const pendingAtKill = Number(/^replenish_emails_pending (\d+)$/m.exec(metrics.text)?.[1])
  assert.ok(pendingAtKill > 0, `mails pending before the kill (${pendingAtKill})`)
  first.child.kill('SIGKILL')
  assert.deepEqual(await first.child.exited, { code: null, signal: 'SIGKILL' })

  restarted = true
  const second = await startServe()
  const log = async (): Promise<any[]> => {
    const out: any[] = []
    for (let after = 0; ;) {
      const page = await admin(second.url, 'GET', `/emails?after=${after}&limit=100`)
      expectStatus(page, 200)
      out.push(...page.body.emails)
      if (page.body.next_after === null) return out
      after = page.body.next_after
    }
  }
  await until('the restarted server emptied the outbox', DRAIN_LIMIT_MS, async () => (await log()).every((e) => e.state !== 'pending'))
  const emails = await log()
  assert.equal(emails.length, CUSTOMERS + 20, '30 upcoming and 20 canceled mails')
  assert.deepEqual(emails.filter((e) => e.state !== 'sent').map((e) => e.id), [], 'every mail sent')
  const taken = new Set(sink.messages.map((m) => Number(/^<replenish\.\w+\.(\d+)\./.exec(m.headers.get('message-id') ?? '')?.[1])))
  assert.deepEqual(emails.map((e) => e.id).filter((id) => !taken.has(id)), [], 'the SMTP server took every mail at least once')
  const heldAtKill = new Set(answers.filter((a) => a.answer === 'held').map((a) => a.id))
  assert.deepEqual([...heldAtKill].filter((id) => !answers.some((a) => a.id === id && a.restarted && a.answer === 'taken')), [],
    'each mail in flight at the kill was sent again after the restart')
  t.diagnostic(`${emails.length} mails; at the kill ${pendingAtKill} pending, ${heldAtKill.size} in flight; ${answers.length} SMTP transactions in all`)

  second.child.kill('SIGTERM')
  assert.deepEqual(await second.child.exited, { code: 0, signal: null })
})
