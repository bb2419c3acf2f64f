/**
 * C17's configuration: REPLENISH_SMTP_URL needs REPLENISH_MAIL_FROM and REPLENISH_PUBLIC_URL (a
 * command exits 2 naming the one missing); each value is checked, and the SMTP URL, which holds a
 * password, is never echoed.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { writeFileSync } from 'node:fs'
import { loadConfig } from '../../src/config.ts'
import { runCli, tempDir } from './harness.ts'

const MAIL = { REPLENISH_SMTP_URL: 'smtp://shop:s3cret-pw@mail.example:587', REPLENISH_MAIL_FROM: 'shop@tea.example', REPLENISH_PUBLIC_URL: 'https://shop.example' }

test('a command with REPLENISH_SMTP_URL but no REPLENISH_MAIL_FROM, or no REPLENISH_PUBLIC_URL, exits 2 with one line naming it', async (t) => {
  const db = join(tempDir(t), 'r.db')
  for (const missing of ['REPLENISH_MAIL_FROM', 'REPLENISH_PUBLIC_URL'] as const) {
    const env: Record<string, string> = { REPLENISH_DB: db, ...MAIL }
    delete env[missing]
    const run = await runCli(['migrate'], env)
    assert.equal(run.status, 2, missing)
    assert.deepEqual(run.stdout, [])
    assert.equal(run.stderr.length, 1)
    assert.match(run.stderr[0] ?? '', new RegExp(`^replenish: ${missing}: required when REPLENISH_SMTP_URL is set`))
    assert.ok(!run.stderr[0]?.includes('s3cret-pw'))
  }
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db, ...MAIL })).status, 0)
  // Without SMTP, neither is needed.
  assert.equal((await runCli(['migrate'], { REPLENISH_DB: db })).status, 0)
})

test('REPLENISH_SMTP_URL: smtp:// or smtps:// with a host, nothing else; a bad one is refused without being shown', () => {
  for (const url of ['smtp://mail.example', 'smtps://u:p@mail.example:465', 'smtp://[::1]:2525', 'smtp://user%40shop:p%3Aw@127.0.0.1:25/']) {
    assert.equal(loadConfig({}, { ...MAIL, REPLENISH_SMTP_URL: url }).smtpUrl, url)
  }
  for (const url of ['http://u:s3cret-pw@mail.example', 'smtp://u:s3cret-pw@', 'smtp://u:s3cret-pw@mail.example/path', 'smtp://u:s3cret-pw@mail.example?pool=true', 'mail.example:587']) {
    assert.throws(() => loadConfig({}, { ...MAIL, REPLENISH_SMTP_URL: url }), (err: Error) => {
      assert.match(err.message, /^REPLENISH_SMTP_URL: expected smtp:\/\/user:password@host:port or smtps:\/\/user:password@host:port, got a value that is not one \(not shown: it may hold a password\)$/)
      return true
    }, url)
  }
  // Never a flag: argv shows in `ps`.
  assert.equal(loadConfig({ 'smtp-url': 'smtp://x' }, {}).smtpUrl, undefined)
})

test('REPLENISH_MAIL_FROM, REPLENISH_DEFAULT_LOCALE, REPLENISH_MAIL_LINK_HOURS, REPLENISH_MAIL_RETRY_BASE_SECONDS, REPLENISH_UPCOMING_DAYS and REPLENISH_SMTP_CA_FILE are checked', (t) => {
  const ok = (env: Record<string, string>) => loadConfig({}, { ...MAIL, ...env })
  assert.equal(ok({ REPLENISH_MAIL_FROM: 'Tea & Co <shop@tea.example>' }).mailFrom, 'Tea & Co <shop@tea.example>')
  for (const from of ['shop', 'shop@', 'Tea <shop>', 'a@b.c\r\nBcc: x@y.z', '<shop@tea.example']) {
    assert.throws(() => ok({ REPLENISH_MAIL_FROM: from }), { message: /^REPLENISH_MAIL_FROM: expected an address such as shop@example\.com/ }, from)
  }
  assert.equal(ok({ REPLENISH_DEFAULT_LOCALE: 'fr' }).defaultLocale, 'fr')
  assert.throws(() => ok({ REPLENISH_DEFAULT_LOCALE: 'it' }), { message: 'REPLENISH_DEFAULT_LOCALE: expected one of en, es, fr, de, got "it"' })
  assert.throws(() => ok({ REPLENISH_MAIL_LINK_HOURS: '0' }), { message: /^REPLENISH_MAIL_LINK_HOURS: expected a whole number of at least 1/ })
  assert.throws(() => ok({ REPLENISH_MAIL_RETRY_BASE_SECONDS: '1.5' }), { message: /^REPLENISH_MAIL_RETRY_BASE_SECONDS: expected a whole number/ })
  assert.equal(ok({ REPLENISH_UPCOMING_DAYS: '0' }).upcomingDays, 0)
  assert.throws(() => ok({ REPLENISH_UPCOMING_DAYS: '-1' }), { message: /^REPLENISH_UPCOMING_DAYS: expected a whole number/ })
  const dir = tempDir(t)
  const ca = join(dir, 'ca.pem')
  writeFileSync(ca, '-----BEGIN CERTIFICATE-----\n')
  assert.equal(ok({ REPLENISH_SMTP_CA_FILE: ca }).smtpCaFile, ca)
  assert.throws(() => ok({ REPLENISH_SMTP_CA_FILE: join(dir, 'none.pem') }), { message: /^REPLENISH_SMTP_CA_FILE: expected a file this user can read/ })
  assert.throws(() => ok({ REPLENISH_SMTP_CA_FILE: dir }), { message: /^REPLENISH_SMTP_CA_FILE: expected a file/ })
  assert.equal(ok({ REPLENISH_SMTP_TLS_INSECURE: '1' }).smtpTlsInsecure, true)
})
