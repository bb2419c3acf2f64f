/**
 * C17 on PostgreSQL with several instances: each mail is sent by one instance at a time. Two
 * instances' senders drain one outbox into one SMTP server: every mail arrives once (its
 * Message-ID once), and every mail is sent.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { until } from '../../helpers/wait.ts'
import { loadConfig } from '../../../src/config.ts'
import { mailForServe } from '../../../src/processing/mail/in-serve.ts'
import { withMailOutbox } from '../../../src/processing/mail/outbox.ts'
import { createPortalLink, prunePortalLinks } from '../../../src/admin/portal-sessions.ts'
import { noPacing } from '../../../src/processing/pacer.ts'
import { announceUpcoming } from '../../../src/processing/upcoming.ts'
import { addDays } from '../../../src/domain/dates.ts'
import { openStoreAt, openTestStore } from '../../helpers/store.ts'
import { startSmtpSink, TEST_CA_FILE } from '../../helpers/smtp.ts'
import { seedDueSubscriptions } from '../helpers.ts'

test('two instances\' senders on one database send each of 300 mails once', async (t) => {
  const sink = await startSmtpSink(t)
  const config = loadConfig({}, {
    REPLENISH_SMTP_URL: sink.url(), REPLENISH_SMTP_CA_FILE: TEST_CA_FILE, REPLENISH_MAIL_FROM: 'shop@tea.example', REPLENISH_PUBLIC_URL: 'https://shop.example',
  })
  const first = await openTestStore(t)
  const second = await openStoreAt(first.location)
  t.after(() => second.close())
  const stores = [first.store, second].map(withMailOutbox)
  await seedDueSubscriptions(first.store, 300, addDays('2026-02-01', 2))
  // One customer, 300 upcoming deliveries: 300 mails.
  assert.equal(await announceUpcoming(stores[0]!, { today: '2026-02-01', days: 3, batch: 500 }), 300)
  const senders = stores.map((store) => mailForServe(config, store, { create: createPortalLink, prune: prunePortalLinks }, () => {}, noPacing, { pollMs: 5, concurrency: 4 }))
  for (const s of senders) s?.start()
  try {
    await sink.waitFor(300, 60_000)
    // Until every result is recorded: a mail sent twice would arrive meanwhile.
    await until('every mail recorded as sent', async () => (await first.store.emails.stats()).pending === 0)
  } finally {
    await Promise.all(senders.map((s) => s?.stop()))
  }
  const ids = sink.messages.map((m) => m.headers.get('message-id'))
  assert.equal(new Set(ids).size, ids.length, 'no mail arrived twice')
  assert.equal(ids.length, 300)
  const stats = await first.store.emails.stats()
  assert.deepEqual([stats.pending, stats.sent_total, stats.failed_total], [0, 300, 0])
})
