import type { MailKind, MailState } from '../../domain/mail/kinds.ts'
import type { Language } from '../../domain/messages.ts'
import type { DueEmail, Email, EmailFilter, EmailOutcome, EmailStats, EmailsTx, MailAttempt } from '../api.ts'
import type { Sql } from './sql.ts'

/**
 * How long a mail `claim` hands out stays claimed: its `due_ms` moves this far ahead in the
 * claiming statement, so another instance's sender does not send it while this one's SMTP
 * conversation is under way (C17: one instance at a time). Well above the sender's time-outs; the
 * attempt's result sets the real next due time. A claim of an instance that died runs out, and the
 * mail is sent again (at least once, docs/email.md).
 */
export const MAIL_CLAIM_MS = 120_000

const EMAIL_COLUMNS = 'id, user_id, kind, event_id, to_address, subject, state, attempts, created_ms, updated_ms'

interface EmailRow {
  id: number
  user_id: number
  kind: MailKind
  event_id: number
  to_address: string | null
  subject: string | null
  state: MailState
  attempts: string
  created_ms: number
  updated_ms: number
}

const iso = (ms: number): string => new Date(ms).toISOString()

const toEmail = (r: EmailRow): Email => ({
  id: r.id,
  user_id: r.user_id,
  kind: r.kind,
  event_id: r.event_id,
  to: r.to_address,
  subject: r.subject,
  state: r.state,
  attempts: JSON.parse(r.attempts) as MailAttempt[],
  created_at: iso(r.created_ms),
  updated_at: iso(r.updated_ms),
})

/** An attempt appended to the stored log, as SQLite's json_insert writes it (emails-store.ts). */
const APPEND_ATTEMPT = (attempt: string): string =>
  `left(m.attempts, -1) || CASE WHEN m.attempts = '[]' THEN '' ELSE ',' END || ${attempt} || ']'`

/**
 * Pending mails due by $1 but those in flight here ($2), the earliest first, at most $3: locked
 * (one another instance is claiming is skipped, not waited for), then claimed until $4 in the
 * same statement, with what rendering them needs as things stand now.
 */
const CLAIM_DUE = `WITH picked AS (
    SELECT m.id, m.user_id, m.kind, m.event_id, m.created_ms, m.retries, m.due_ms
    FROM emails m WHERE m.state = 'pending' AND m.due_ms <= $1 AND m.id <> ALL($2::bigint[])
    ORDER BY m.due_ms, m.id LIMIT $3
    FOR UPDATE OF m SKIP LOCKED),
  claimed AS (UPDATE emails SET due_ms = $4 WHERE id = ANY(ARRAY(SELECT id FROM picked)))
  SELECT p.id, p.user_id, p.kind, p.event_id, p.created_ms, p.retries, u.email, u.locale, u.email_notifications, e.data
  FROM picked p JOIN users u ON u.id = p.user_id LEFT JOIN events e ON e.id = p.event_id
  ORDER BY p.due_ms, p.id`

/** Results, one per mail: `settle` ones take their outcome; the others (no longer pending) only log the attempt. */
const RECORD = `UPDATE emails m SET
    state = CASE WHEN o.settle THEN o.state ELSE m.state END,
    due_ms = CASE WHEN o.settle THEN o.due_ms ELSE m.due_ms END,
    retries = CASE WHEN o.settle THEN o.retries ELSE m.retries END,
    to_address = CASE WHEN o.settle THEN o.to_address ELSE m.to_address END,
    subject = CASE WHEN o.settle THEN coalesce(o.subject, m.subject) ELSE m.subject END,
    attempts = ${APPEND_ATTEMPT('o.attempt')},
    updated_ms = o.at_ms
  FROM unnest($1::bigint[], $2::boolean[], $3::text[], $4::bigint[], $5::integer[], $6::text[], $7::text[], $8::text[], $9::bigint[])
    AS o(id, settle, state, due_ms, retries, attempt, to_address, subject, at_ms)
  WHERE m.id = o.id`

const COUNT = `INSERT INTO email_totals (id, sent, failed) VALUES (1, $1, $2)
  ON CONFLICT (id) DO UPDATE SET sent = email_totals.sent + excluded.sent, failed = email_totals.failed + excluded.failed`

export function emailsRepo(sql: Sql): EmailsTx {
  const count = async (sent: number, failed: number): Promise<void> => {
    if (sent + failed > 0) await sql.run(COUNT, [sent, failed])
  }
  return {
    async list(f: EmailFilter): Promise<Email[]> {
      const rows = await sql.rows<EmailRow>(`SELECT ${EMAIL_COLUMNS} FROM emails WHERE id > $1
        AND ($2::bigint IS NULL OR user_id = $2) AND ($3::text IS NULL OR state = $3) ORDER BY id LIMIT $4`,
      [f.after, f.userId ?? null, f.state ?? null, f.limit])
      return rows.map(toEmail)
    },
    async nextDueMs(): Promise<number | null> {
      const r = await sql.one<{ due_ms: number }>(`SELECT due_ms FROM emails WHERE state = 'pending' ORDER BY due_ms LIMIT 1`)
      return r?.due_ms ?? null
    },
    async stats(): Promise<EmailStats> {
      const r = await sql.one<{ pending: number; oldest: number | null; sent: number | null; failed: number | null }>(
        `SELECT (SELECT count(*) FROM emails WHERE state = 'pending') AS pending,
          (SELECT min(created_ms) FROM emails WHERE state = 'pending') AS oldest,
          t.sent, t.failed FROM (SELECT 1) one LEFT JOIN email_totals t ON t.id = 1`)
      return { pending: r?.pending ?? 0, oldest_pending_ms: r?.oldest ?? null, sent_total: r?.sent ?? 0, failed_total: r?.failed ?? 0 }
    },
    async enqueue(kind, subscriptionId, eventId, atMs) {
      // At its event's time (see the SQLite store): retention keeps the events of pending mails.
      return (await sql.run(`INSERT INTO emails (user_id, kind, event_id, to_address, due_ms, created_ms, updated_ms)
        SELECT u.id, $1, $2, u.email, t.ms, t.ms, t.ms FROM subscriptions s JOIN users u ON u.id = s.user_id,
          (SELECT coalesce((SELECT round(extract(epoch FROM created_at::timestamptz) * 1000)::bigint FROM events WHERE id = $2), $4::bigint) AS ms) t
        WHERE s.id = $3 AND u.email IS NOT NULL AND u.email_notifications`, [kind, eventId, subscriptionId, atMs])) > 0
    },
    async claim(nowMs, limit, skip): Promise<DueEmail[]> {
      const rows = await sql.rows<Omit<DueEmail, 'locale'> & { locale: Language | null }>(CLAIM_DUE, [nowMs, skip, limit, nowMs + MAIL_CLAIM_MS])
      return rows
    },
    async recordOutcomes(outcomes) {
      if (outcomes.length === 0) return
      // Locked first, in id order: whether each settles is decided from states no other unit
      // changes before the commit. A mail has one outcome per batch.
      const locked = await sql.rows<{ id: number; state: MailState }>(
        'SELECT id, state FROM emails WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE', [outcomes.map((o) => o.id)])
      const states = new Map(locked.map((r) => [r.id, r.state]))
      const known = outcomes.filter((o) => states.has(o.id))
      const settle = known.map((o) => states.get(o.id) === 'pending')
      await sql.run(RECORD, [
        known.map((o) => o.id), settle, known.map((o) => o.state), known.map((o) => o.due_ms), known.map((o) => o.retries),
        known.map((o) => JSON.stringify(o.attempt)), known.map((o) => o.to), known.map((o) => o.subject), known.map((o) => o.at_ms),
      ])
      await count(known.filter((o, i) => settle[i] && o.state === 'sent').length, known.filter((o, i) => settle[i] && o.state === 'failed').length)
    },
    /** Ends the claims at once: the mails were due when they were claimed, so due now. */
    async release(ids, atMs) {
      if (ids.length === 0) return
      await sql.run("UPDATE emails SET due_ms = LEAST(due_ms, $2) WHERE id = ANY($1::bigint[]) AND state = 'pending'", [ids, atMs])
    },
    async forgetUser(userId, atMs) {
      const attempt: MailAttempt = { smtp_reply: null, error: 'not sent: the customer was erased', created_at: iso(atMs) }
      const failed = await sql.run(`UPDATE emails m SET state = 'failed', due_ms = NULL, attempts = ${APPEND_ATTEMPT('$2')}, updated_ms = $3
        WHERE m.user_id = $1 AND m.state = 'pending'`, [userId, JSON.stringify(attempt), atMs])
      await count(0, failed)
      await sql.run('UPDATE emails SET to_address = NULL WHERE user_id = $1 AND to_address IS NOT NULL', [userId])
    },
    async pruneBefore(beforeMs, limit) {
      return sql.run(`DELETE FROM emails WHERE id IN (SELECT id FROM emails WHERE created_ms < $1 AND state <> 'pending'
        AND id < (SELECT max(id) FROM emails) ORDER BY id LIMIT $2)`, [beforeMs, limit])
    },
    async oldestPendingMs() {
      const r = await sql.one<{ oldest: number | null }>(`SELECT min(created_ms) AS oldest FROM emails WHERE state = 'pending'`)
      return r?.oldest ?? null
    },
  }
}
