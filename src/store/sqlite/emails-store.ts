import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { MailKind, MailState } from '../../domain/mail/kinds.ts'
import type { Language } from '../../domain/messages.ts'
import type { DueEmail, Email, EmailFilter, EmailOutcome, EmailStats, MailAttempt } from '../api.ts'
import { prepareValues, type Values } from './rows.ts'

const EMAIL_COLUMNS = 'id, user_id, kind, event_id, to_address, subject, state, attempts, created_ms, updated_ms'

const iso = (ms: number): string => new Date(ms).toISOString()

const toEmail = (r: Values): Email => ({
  id: r[0] as number,
  user_id: r[1] as number,
  kind: r[2] as MailKind,
  event_id: r[3] as number,
  to: r[4] as string | null,
  subject: r[5] as string | null,
  state: r[6] as MailState,
  attempts: JSON.parse(r[7] as string) as MailAttempt[],
  created_at: iso(r[8] as number),
  updated_at: iso(r[9] as number),
})

/** The mail outbox (migration 11): mails, their attempts, and what the sender asks of them. */
export function emailsStore(db: DatabaseSync) {
  // One statement per combination of filters: each reads its own index (user, state, or ids).
  const lists = new Map<string, StatementSync>()
  const list = (f: EmailFilter): Values[] => {
    const where = ['id > ?']
    const args: (number | string)[] = [f.after]
    if (f.userId !== undefined) { where.push('user_id = ?'); args.push(f.userId) }
    if (f.state !== undefined) { where.push('state = ?'); args.push(f.state) }
    const sql = `SELECT ${EMAIL_COLUMNS} FROM emails WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`
    let statement = lists.get(sql)
    if (!statement) lists.set(sql, (statement = prepareValues(db, sql)))
    return statement.all(...args, f.limit) as unknown as Values[]
  }
  // Made at its event's time, as a webhook delivery is (migration 7): retention keeps every event
  // from the oldest pending mail's time on, which then includes the mail's own event, and C10's
  // three days count from the event.
  const enqueue = db.prepare(`INSERT INTO emails (user_id, kind, event_id, to_address, due_ms, created_ms, updated_ms)
    SELECT u.id, ?1, ?2, u.email, t.ms, t.ms, t.ms FROM subscriptions s JOIN users u ON u.id = s.user_id,
      (SELECT coalesce((SELECT CAST(round(unixepoch(created_at, 'subsec') * 1000) AS INTEGER) FROM events WHERE id = ?2), ?4) AS ms) t
    WHERE s.id = ?3 AND u.email IS NOT NULL AND u.email_notifications = 1`)
  const nextDue = prepareValues(db, `SELECT due_ms FROM emails INDEXED BY emails_pending WHERE state = 'pending' ORDER BY due_ms LIMIT 1`)
  const pending = prepareValues(db, `SELECT count(*), min(created_ms) FROM emails INDEXED BY emails_pending WHERE state = 'pending'`)
  const totals = prepareValues(db, 'SELECT sent, failed FROM email_totals WHERE id = 1')
  const due = prepareValues(db, `SELECT m.id, m.user_id, m.kind, m.event_id, m.created_ms, m.retries, u.email, u.locale, u.email_notifications, e.data
    FROM emails m INDEXED BY emails_pending JOIN users u ON u.id = m.user_id LEFT JOIN events e ON e.id = m.event_id
    WHERE m.state = 'pending' AND m.due_ms <= ?1 AND m.id NOT IN (SELECT value FROM json_each(?2))
    ORDER BY m.due_ms, m.id LIMIT ?3`)
  const settle = db.prepare(`UPDATE emails SET state = ?2, due_ms = ?3, retries = ?4, attempts = json_insert(attempts, '$[#]', json(?5)),
    to_address = ?6, subject = coalesce(?7, subject), updated_ms = ?8 WHERE id = ?1 AND state = 'pending'`)
  const logOnly = db.prepare(`UPDATE emails SET attempts = json_insert(attempts, '$[#]', json(?2)), updated_ms = ?3 WHERE id = ?1`)
  const count = db.prepare(`INSERT INTO email_totals (id, sent, failed) VALUES (1, ?1, ?2)
    ON CONFLICT (id) DO UPDATE SET sent = sent + excluded.sent, failed = failed + excluded.failed`)
  const failPendingOf = db.prepare(`UPDATE emails SET state = 'failed', due_ms = NULL, attempts = json_insert(attempts, '$[#]', json(?2)),
    updated_ms = ?3 WHERE user_id = ?1 AND state = 'pending'`)
  const blankAddressesOf = db.prepare('UPDATE emails SET to_address = NULL WHERE user_id = ? AND to_address IS NOT NULL')
  // The oldest first (ids follow time); the newest row always stays, so that no id is handed out
  // twice (rowids, no AUTOINCREMENT) and the log's cursor never meets an old id again.
  const prune = db.prepare(`DELETE FROM emails WHERE id IN (SELECT id FROM emails WHERE created_ms < ?1 AND state <> 'pending'
    AND id < (SELECT max(id) FROM emails) ORDER BY id LIMIT ?2)`)
  const oldestPending = prepareValues(db, `SELECT min(created_ms) FROM emails INDEXED BY emails_pending WHERE state = 'pending'`)

  return {
    list(f: EmailFilter): Email[] {
      return list(f).map(toEmail)
    },
    nextDueMs(): number | null {
      return ((nextDue.get() as Values | undefined)?.[0] as number | undefined) ?? null
    },
    stats(): EmailStats {
      const [n, oldest] = pending.get() as unknown as [number, number | null]
      const [sent, failed] = (totals.get() as unknown as [number, number] | undefined) ?? [0, 0]
      return { pending: n, oldest_pending_ms: oldest, sent_total: sent, failed_total: failed }
    },
    enqueue(kind: MailKind, subscriptionId: number, eventId: number, atMs: number): boolean {
      return Number(enqueue.run(kind, eventId, subscriptionId, atMs).changes) > 0
    },
    claim(nowMs: number, limit: number, skip: readonly number[]): DueEmail[] {
      return (due.all(nowMs, JSON.stringify(skip), limit) as unknown as Values[]).map((r) => ({
        id: r[0] as number,
        user_id: r[1] as number,
        kind: r[2] as MailKind,
        event_id: r[3] as number,
        created_ms: r[4] as number,
        retries: r[5] as number,
        email: r[6] as string | null,
        locale: r[7] as Language | null,
        email_notifications: r[8] === 1,
        data: r[9] as string | null,
      }))
    },
    recordOutcomes(outcomes: readonly EmailOutcome[]): void {
      let sent = 0
      let failed = 0
      for (const o of outcomes) {
        const attempt = JSON.stringify(o.attempt)
        if (Number(settle.run(o.id, o.state, o.due_ms, o.retries, attempt, o.to, o.subject, o.at_ms).changes) === 0) {
          logOnly.run(o.id, attempt, o.at_ms)
          continue
        }
        if (o.state === 'sent') sent++
        else if (o.state === 'failed') failed++
      }
      if (sent + failed > 0) count.run(sent, failed)
    },
    /** `claim` claims nothing here (one serve per file): a mail it handed out is still due. */
    release(_ids: readonly number[], _atMs: number): void {},
    forgetUser(userId: number, atMs: number): void {
      const attempt: MailAttempt = { smtp_reply: null, error: 'not sent: the customer was erased', created_at: iso(atMs) }
      const failed = Number(failPendingOf.run(userId, JSON.stringify(attempt), atMs).changes)
      if (failed > 0) count.run(0, failed)
      blankAddressesOf.run(userId)
    },
    pruneBefore(beforeMs: number, limit: number): number {
      return Number(prune.run(beforeMs, limit).changes)
    },
    oldestPendingMs(): number | null {
      return ((oldestPending.get() as unknown as Values)[0] as number | null) ?? null
    },
  }
}
export type EmailsStore = ReturnType<typeof emailsStore>
