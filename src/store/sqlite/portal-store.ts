import type { DatabaseSync } from 'node:sqlite'
import { prepareValues } from './rows.ts'
import type { PortalLinkUse, PortalSession } from '../api.ts'

/**
 * The customer portal's one-time links and sessions (C14). Only hashes of the link tokens and
 * session ids are stored: a copy of the database opens no one's portal. Times are ISO 8601 UTC,
 * real time (never the service's REPLENISH_TODAY). An erased user (email null, C13) has no portal:
 * its links and sessions stop working at once, without the erasure having to know of them.
 */
export function portalStore(db: DatabaseSync) {
  const insertLink = db.prepare('INSERT INTO portal_links (token_hash, user_id, return_url, expires_at, created_at) VALUES (?, ?, ?, ?, ?)')
  // One statement marks the link used and answers whether it could be: two tabs opening the same
  // link at once cannot both get a session.
  const useLink = prepareValues(db, `UPDATE portal_links SET used_at = ?1
    WHERE token_hash = ?2 AND used_at IS NULL AND expires_at > ?1
      AND user_id IN (SELECT id FROM users WHERE email IS NOT NULL)
    RETURNING user_id, return_url`)
  const insertSession = db.prepare(`INSERT INTO portal_sessions (session_hash, user_id, csrf_token, return_url, expires_at, touched_at, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?)`)
  const sessionByHash = prepareValues(db, `SELECT s.id, s.user_id, s.csrf_token, s.return_url, s.expires_at, s.touched_at
    FROM portal_sessions s JOIN users u ON u.id = s.user_id
    WHERE s.session_hash = ? AND s.expires_at > ? AND u.email IS NOT NULL`)
  const linkReturnUrl = prepareValues(db, `SELECT l.return_url FROM portal_links l JOIN users u ON u.id = l.user_id
    WHERE l.token_hash = ? AND u.email IS NOT NULL`)
  const touchSession = db.prepare('UPDATE portal_sessions SET expires_at = ?, touched_at = ? WHERE id = ?')
  const deleteSession = db.prepare('DELETE FROM portal_sessions WHERE session_hash = ?')
  const sessionsOf = db.prepare('DELETE FROM portal_sessions WHERE user_id = ?')
  const linksOf = db.prepare('DELETE FROM portal_links WHERE user_id = ?')
  const pruneLinks = db.prepare('DELETE FROM portal_links WHERE expires_at <= ?')
  const pruneSessions = db.prepare('DELETE FROM portal_sessions WHERE expires_at <= ?')
  return {
    createLink(tokenHash: string, userId: number, returnUrl: string | null, expiresAt: string, now: string): void {
      insertLink.run(tokenHash, userId, returnUrl, expiresAt, now)
    },
    useLink(tokenHash: string, now: string): PortalLinkUse | undefined {
      const row = useLink.get(now, tokenHash) as unknown as [number, string | null] | undefined
      return row && { user_id: row[0], return_url: row[1] }
    },
    createSession(sessionHash: string, userId: number, csrfToken: string, returnUrl: string | null, expiresAt: string, now: string): void {
      insertSession.run(sessionHash, userId, csrfToken, returnUrl, expiresAt, now, now)
    },
    sessionByHash(sessionHash: string, now: string): PortalSession | undefined {
      const r = sessionByHash.get(sessionHash, now) as unknown as [number, number, string, string | null, string, string] | undefined
      return r && { id: r[0], user_id: r[1], csrf_token: r[2], return_url: r[3], expires_at: r[4], touched_at: r[5] }
    },
    returnUrlOfLink(tokenHash: string): string | null {
      const row = linkReturnUrl.get(tokenHash) as unknown as [string | null] | undefined
      return row?.[0] ?? null
    },
    touchSession(id: number, expiresAt: string, now: string): void {
      touchSession.run(expiresAt, now, id)
    },
    deleteSession(sessionHash: string): void {
      deleteSession.run(sessionHash)
    },
    /** Expired links and sessions go when new ones are made: the tables hold only live rows and a day's worth of dead ones. */
    endAllOf(userId: number): void {
      sessionsOf.run(userId)
      linksOf.run(userId)
    },
    pruneExpired(before: string): void {
      pruneLinks.run(before)
      pruneSessions.run(before)
    },
  }
}
export type PortalStore = ReturnType<typeof portalStore>
