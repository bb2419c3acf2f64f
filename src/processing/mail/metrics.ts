import type { Store } from '../../store/api.ts'

/**
 * /metrics lines for customers' mails (C17): what waits in the outbox now and how long the oldest
 * has waited (an SMTP outage shows here), and the mails sent and given up on since the database
 * was made.
 */
export async function mailMetricsText(store: Store, nowMs: number): Promise<string> {
  const s = await store.emails.stats()
  return [
    '# HELP replenish_emails_pending Mails waiting for their first or next attempt.',
    '# TYPE replenish_emails_pending gauge',
    `replenish_emails_pending ${s.pending}`,
    '# HELP replenish_email_oldest_pending_age_seconds Age of the oldest pending mail (0 when none waits).',
    '# TYPE replenish_email_oldest_pending_age_seconds gauge',
    `replenish_email_oldest_pending_age_seconds ${s.oldest_pending_ms === null ? 0 : Math.max(0, (nowMs - s.oldest_pending_ms) / 1000).toFixed(3)}`,
    '# HELP replenish_emails_total Mails that reached a final state: sent (the SMTP server took them) or failed (given up on).',
    '# TYPE replenish_emails_total counter',
    `replenish_emails_total{state="sent"} ${s.sent_total}`,
    `replenish_emails_total{state="failed"} ${s.failed_total}`,
  ].join('\n') + '\n'
}
