import type { PortalLinkUse, PortalSession, PortalTx } from '../api.ts'
import { Secret, type Sql } from './sql.ts'

/**
 * The customer portal's one-time links and sessions (C14). Only hashes of the link tokens and
 * session ids are stored: a copy of the database opens no one's portal. Times are ISO 8601 UTC,
 * real time (never the service's REPLENISH_TODAY), compared as text. An erased user (email null,
 * C13) has no portal: its links and sessions stop working at once, without the erasure having to
 * know of them.
 */
export function portalRepo(sql: Sql): PortalTx {
  return {
    async createLink(tokenHash, userId, returnUrl, expiresAt, now) {
      await sql.run('INSERT INTO portal_links (token_hash, user_id, return_url, expires_at, created_at) VALUES ($1, $2, $3, $4, $5)', [tokenHash, userId, returnUrl, expiresAt, now])
    },
    // One statement marks the link used and answers whether it could be: two tabs opening the same
    // link at once cannot both get a session (the second waits for the first's row lock, then finds
    // used_at set).
    useLink: (tokenHash, now) =>
      sql.one<PortalLinkUse>(
        `UPDATE portal_links SET used_at = $1
          WHERE token_hash = $2 AND used_at IS NULL AND expires_at > $1
            AND user_id IN (SELECT id FROM users WHERE email IS NOT NULL)
          RETURNING user_id, return_url`,
        [now, tokenHash],
      ),
    async createSession(sessionHash, userId, csrfToken, returnUrl, expiresAt, now) {
      await sql.run(
        `INSERT INTO portal_sessions (session_hash, user_id, csrf_token, return_url, expires_at, touched_at, created_at)
          VALUES ($1, $2, $3, $4, $5, $6, $6)`,
        [sessionHash, userId, new Secret(csrfToken), returnUrl, expiresAt, now],
      )
    },
    sessionByHash: (sessionHash, now) =>
      sql.one<PortalSession>(
        `SELECT s.id, s.user_id, s.csrf_token, s.return_url, s.expires_at, s.touched_at
          FROM portal_sessions s JOIN users u ON u.id = s.user_id
          WHERE s.session_hash = $1 AND s.expires_at > $2 AND u.email IS NOT NULL`,
        [sessionHash, now],
      ),
    returnUrlOfLink: async (tokenHash) =>
      (await sql.one<{ return_url: string | null }>(
        `SELECT l.return_url FROM portal_links l JOIN users u ON u.id = l.user_id
          WHERE l.token_hash = $1 AND u.email IS NOT NULL`,
        [tokenHash],
      ))?.return_url ?? null,
    async touchSession(id, expiresAt, now) {
      await sql.run('UPDATE portal_sessions SET expires_at = $1, touched_at = $2 WHERE id = $3', [expiresAt, now, id])
    },
    async deleteSession(sessionHash) {
      await sql.run('DELETE FROM portal_sessions WHERE session_hash = $1', [sessionHash])
    },
    async endAllOf(userId) {
      await sql.run('DELETE FROM portal_sessions WHERE user_id = $1', [userId])
      await sql.run('DELETE FROM portal_links WHERE user_id = $1', [userId])
    },
    /** Expired links and sessions go when new ones are made: the tables hold only live rows and a day's worth of dead ones. */
    async pruneExpired(before) {
      await sql.run('DELETE FROM portal_links WHERE expires_at <= $1', [before])
      await sql.run('DELETE FROM portal_sessions WHERE expires_at <= $1', [before])
    },
  }
}
