/** `replenish mail-preview KIND [--locale L] [--html]` (docs/email.md): what a customer would get, printed. */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { runCli } from './harness.ts'

test('prints the headers and the text of each kind in the asked language, with this configuration\'s shop, sender and link base', async () => {
  const env = { REPLENISH_DB: ':memory:', REPLENISH_SHOP_NAME: 'Tea & Co', REPLENISH_MAIL_FROM: 'shop@tea.example', REPLENISH_PUBLIC_URL: 'https://tea.example', REPLENISH_TODAY: '2026-03-10', REPLENISH_CURRENCY: 'EUR' }
  const upcoming = await runCli(['mail-preview', 'upcoming', '--locale', 'es'], env)
  assert.equal(upcoming.status, 0, upcoming.stderr.join('\n'))
  assert.deepEqual(upcoming.stdout.slice(0, 3), ['From: Tea & Co <shop@tea.example>', 'To: ana@example.com', 'Subject: Su próxima entrega de Tea & Co: viernes, 13 de marzo'])
  assert.ok(upcoming.stdout.includes('Content-Language: es'))
  assert.ok(upcoming.stdout.includes('  Total                           29,90\u00a0€'), upcoming.stdout.join('\n'))
  assert.ok(upcoming.stdout.some((l) => l.startsWith('https://tea.example/portal/sessions/rplp_PREVIEW')))
  for (const kind of ['payment_failed', 'canceled']) {
    const run = await runCli(['mail-preview', kind, '--locale', 'de'], env)
    assert.equal(run.status, 0)
    assert.match(run.stdout[2] ?? '', /^Subject: .*Tea & Co/)
  }
  const html = await runCli(['mail-preview', 'canceled', '--html'], { ...env, REPLENISH_DEFAULT_LOCALE: 'fr' })
  assert.match(html.stdout[0] ?? '', /^<!DOCTYPE html>$/)
  assert.ok(html.stdout.includes('<html lang="fr">'))
})

test('an unknown kind or language is a usage error (2)', async () => {
  for (const argv of [['mail-preview'], ['mail-preview', 'welcome'], ['mail-preview', 'upcoming', '--locale', 'it']]) {
    const run = await runCli(argv, { REPLENISH_DB: ':memory:' })
    assert.equal(run.status, 2, argv.join(' '))
    assert.match(run.stderr[0] ?? '', /^replenish: (usage: replenish mail-preview upcoming\|payment_failed\|canceled|--locale: expected one of en, es, fr, de)/)
  }
  assert.equal((await runCli(['serve', '--html'], { REPLENISH_DB: ':memory:' })).status, 2, '--html belongs to mail-preview')
})
