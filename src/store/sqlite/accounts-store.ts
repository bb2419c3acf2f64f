import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { User } from '../../domain/types.ts'
import type { Language } from '../../domain/messages.ts'
import { nowIso, plain, type Row } from './rows.ts'
import type { ActiveApiKey, ApiKeyRecord, UserFilter, UserSettings } from '../api.ts'
import type { PrefixRange } from '../../domain/search.ts'
import type { AdminScope, AdminTokenRecord } from '../api.ts'
export type { ApiKeyRecord }

/**
 * C18 `q`: what a prefix is matched against, each expression exactly as an index holds it:
 * `email` under its NOCASE collation (the unique index; NOCASE folds ASCII as lower() does), the
 * external id and the part of the email after its `@` folded (migration 13's indexes).
 */
export const PREFIX_INDEXED = ['email', 'lower(external_id)', "lower(substr(email, instr(email, '@') + 1))"] as const

/**
 * SQLite has no statistics of a range's size (no STAT4), so it cannot choose between reading a
 * prefix's index ranges (few matches: fast; a prefix most users share: every match read and
 * sorted by id, half a second on a million users) and reading the table in id order until a page
 * is full (the other way round). The search counts first, up to this many per index (under a
 * millisecond), and chooses: on 1,000,000 users every search's median is then under 10 ms
 * (docs/performance.md, docs/decisions.md "User search").
 */
const DENSE_PREFIX_MATCHES = 5000

const boundsOf = (prefix: PrefixRange): string[] => (prefix.to === null ? [prefix.from] : [prefix.from, prefix.to])

/** The columns of a user, in the domain's order (toUser). */
const USER = 'id, email, external_id, locale, email_notifications, created_at, updated_at'

const toUser = (r: Row): User => ({
  id: r['id'] as number,
  email: r['email'] as string | null,
  external_id: r['external_id'] as string | null,
  locale: r['locale'] as Language | null,
  email_notifications: r['email_notifications'] === 1,
  created_at: r['created_at'] as string,
  updated_at: r['updated_at'] as string,
})

const DEFAULT_SETTINGS: UserSettings = { locale: null, email_notifications: true }

export function accountsStore(db: DatabaseSync) {
  const insertUser = db.prepare(`INSERT INTO users (email, external_id, locale, email_notifications, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
    RETURNING ${USER}`)
  const userById = db.prepare(`SELECT ${USER} FROM users WHERE id = ?`)
  const userByEmail = db.prepare('SELECT id FROM users WHERE email = ?')
  // One statement per combination of filters, prepared when first used: a written-out condition
  // lets the planner use the unique email index (`email = ?` compares with the column's NOCASE
  // collation), which `(? IS NULL OR email = ?)` would not.
  const searches = new Map<string, StatementSync>()
  const searchUsers = (after: number, limit: number, { email, externalId, prefix }: UserFilter): Row[] => {
    const where = ['id > ?']
    const args: (string | number)[] = [after]
    if (email !== undefined) { where.push('email = ?'); args.push(email) }
    if (externalId !== undefined) { where.push('external_id = ?'); args.push(externalId) }
    let from = 'users'
    if (prefix !== undefined) {
      const ranges = PREFIX_INDEXED.map((expression) => (prefix.to === null ? `${expression} >= ?` : `${expression} >= ? AND ${expression} < ?`))
      for (let i = 0; i < ranges.length; i++) args.push(...boundsOf(prefix))
      if (email === undefined && countPrefixMatches(prefix) >= DENSE_PREFIX_MATCHES) {
        // Many match: reading the table in id order finds a page of them soonest.
        from = 'users NOT INDEXED'
        where.push(`(${ranges.map((r) => `(${r})`).join(' OR ')})`)
      } else {
        // Few match: each index's range, then those rows by id.
        where.push(`id IN (${ranges.map((r) => `SELECT id FROM users WHERE ${r}`).join(' UNION ALL ')})`)
      }
    }
    const sql = `SELECT ${USER} FROM ${from} WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`
    let statement = searches.get(sql)
    if (!statement) searches.set(sql, (statement = db.prepare(sql)))
    return statement.all(...args, limit) as Row[]
  }
  // How many users the prefix matches in each index, each counted up to DENSE_PREFIX_MATCHES:
  // at most that many index entries are read, whatever the prefix.
  const prefixCounts = [false, true].map((open) => {
    const range = (expression: string): string => (open ? `${expression} >= ?1` : `${expression} >= ?1 AND ${expression} < ?2`)
    const counts = PREFIX_INDEXED.map((expression) => `(SELECT count(*) FROM (SELECT 1 FROM users WHERE ${range(expression)} LIMIT ?3))`)
    return db.prepare(`SELECT ${counts.join(' + ')} AS n`)
  })
  const countPrefixMatches = (prefix: PrefixRange): number => {
    const counted = prefix.to === null
      ? prefixCounts[1]?.get(prefix.from, null, DENSE_PREFIX_MATCHES)
      : prefixCounts[0]?.get(prefix.from, prefix.to, DENSE_PREFIX_MATCHES)
    return (counted as { n: number }).n
  }
  const updateUser = db.prepare(`UPDATE users SET email = ?, external_id = ?, locale = ?, email_notifications = ?, updated_at = ? WHERE id = ?
    RETURNING ${USER}`)
  const KEY_COLUMNS = 'id, user_id, prefix, revoked_at, created_at, updated_at, last_used_at'
  const insertKey = db.prepare(`INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING ${KEY_COLUMNS}`)
  const keyById = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = ?`)
  const keysOfUser = db.prepare(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE user_id = ? AND id > ? ORDER BY id LIMIT ?`)
  const keyByHash = db.prepare('SELECT id FROM api_keys WHERE key_hash = ?')
  const userForHash = db.prepare('SELECT user_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
  const activeKeyByHash = db.prepare('SELECT id, user_id, last_used_at FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
  const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL')
  const touchKey = db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?')
  // Erasure (C13). Each statement changes only what is not erased yet, so erasing twice changes nothing.
  const blankEmail = db.prepare('UPDATE users SET email = NULL, updated_at = ? WHERE id = ? AND email IS NOT NULL')
  const revokeKeysOf = db.prepare('UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE user_id = ? AND revoked_at IS NULL')
  const forgetGatewayReferences = db.prepare(
    'UPDATE payment_sources SET gateway_reference = NULL, updated_at = ? WHERE user_id = ? AND gateway_reference IS NOT NULL',
  )
  const blankInstallmentAddresses = db.prepare(`UPDATE installments SET shipping_address = NULL, billing_address = NULL, updated_at = ?
    WHERE subscription_id IN (SELECT id FROM subscriptions WHERE user_id = ?) AND (shipping_address IS NOT NULL OR billing_address IS NOT NULL)`)
  // The answers kept for the customer's Idempotency-Key replays hold their addresses; their keys
  // are revoked, so nothing could replay them. The scope is the customer's as endpoint.ts names it.
  const forgetReplays = db.prepare('DELETE FROM idempotency_keys WHERE scope = ?')
  const insertToken = db.prepare('INSERT INTO admin_tokens (token_hash, prefix, scope, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id')
  const tokenByHash = db.prepare('SELECT id FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL')
  const TOKEN_COLUMNS = 'id, label, scope, prefix, created_at, updated_at, last_used_at'
  const tokenRecordByHash = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL`)
  const tokenById = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id = ? AND revoked_at IS NULL`)
  const tokensAfter = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id > ? AND revoked_at IS NULL ORDER BY id LIMIT ?`)
  const revokeToken = db.prepare('UPDATE admin_tokens SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL')
  const touchToken = db.prepare('UPDATE admin_tokens SET last_used_at = ? WHERE id = ?')

  return {
    createUser(email: string, externalId: string | null, settings: UserSettings = DEFAULT_SETTINGS): User {
      const now = nowIso()
      return toUser(insertUser.get(email, externalId, settings.locale, settings.email_notifications ? 1 : 0, now, now) as Row)
    },
    findUser(id: number): User | undefined {
      const r = userById.get(id) as Row | undefined
      return r ? toUser(r) : undefined
    },
    /** Another user has this email (in any case); `exceptUserId`'s own does not count. */
    emailTaken(email: string, exceptUserId?: number): boolean {
      const found = userByEmail.get(email) as { id: number } | undefined
      return found !== undefined && found.id !== exceptUserId
    },
    updateUser(id: number, email: string | null, externalId: string | null, settings: UserSettings): User {
      return toUser(updateUser.get(email, externalId, settings.locale, settings.email_notifications ? 1 : 0, nowIso(), id) as Row)
    },
    /**
     * The user's part of an erasure (C13): email blanked, every key revoked, payment sources'
     * gateway references and installments' address snapshots blanked, the customer's stored
     * Idempotency-Key answers deleted. The subscriptions are the caller's (their changes write
     * events). Rows that are already erased are not touched.
     */
    eraseUser(id: number): void {
      const now = nowIso()
      blankEmail.run(now, id)
      revokeKeysOf.run(now, now, id)
      forgetGatewayReferences.run(now, id)
      blankInstallmentAddresses.run(now, id)
      forgetReplays.run(`user:${id}`)
    },
    listUsers(after: number, limit: number, filter: UserFilter = {}): User[] {
      return searchUsers(after, limit, filter).map(toUser)
    },
    createApiKey(userId: number, keyHash: string, prefix: string): ApiKeyRecord {
      const now = nowIso()
      return plain<ApiKeyRecord>(insertKey.get(userId, keyHash, prefix, now, now) as Row)
    },
    listApiKeys(userId: number, after: number, limit: number): ApiKeyRecord[] {
      return (keysOfUser.all(userId, after, limit) as Row[]).map((r) => plain<ApiKeyRecord>(r))
    },
    apiKeyHashExists(keyHash: string): boolean {
      return keyByHash.get(keyHash) !== undefined
    },
    findApiKey(id: number): ApiKeyRecord | undefined {
      const r = keyById.get(id) as Row | undefined
      return r ? plain<ApiKeyRecord>(r) : undefined
    },
    revokeApiKey(id: number): void {
      const now = nowIso()
      revokeKey.run(now, now, id)
    },
    /** The user an active key belongs to. */
    userIdForKeyHash(keyHash: string): number | undefined {
      return (userForHash.get(keyHash) as { user_id: number } | undefined)?.user_id
    },
    activeApiKeyByHash(keyHash: string): ActiveApiKey | undefined {
      const r = activeKeyByHash.get(keyHash) as Row | undefined
      return r ? plain<ActiveApiKey>(r) : undefined
    },
    touchApiKey(id: number): void {
      touchKey.run(nowIso(), id)
    },
    createAdminToken(tokenHash: string, prefix: string, scope: AdminScope = 'admin', label: string | null = null): number {
      const now = nowIso()
      return (insertToken.get(tokenHash, prefix, scope, label, now, now) as { id: number }).id
    },
    adminTokenExists(tokenHash: string): boolean {
      return tokenByHash.get(tokenHash) !== undefined
    },
    adminTokenByHash(tokenHash: string): AdminTokenRecord | undefined {
      const r = tokenRecordByHash.get(tokenHash) as Row | undefined
      return r ? plain<AdminTokenRecord>(r) : undefined
    },
    findAdminToken(id: number): AdminTokenRecord | undefined {
      const r = tokenById.get(id) as Row | undefined
      return r ? plain<AdminTokenRecord>(r) : undefined
    },
    listAdminTokens(after: number, limit: number): AdminTokenRecord[] {
      return (tokensAfter.all(after, limit) as Row[]).map((r) => plain<AdminTokenRecord>(r))
    },
    revokeAdminToken(id: number): void {
      const now = nowIso()
      revokeToken.run(now, now, id)
    },
    touchAdminToken(id: number): void {
      touchToken.run(nowIso(), id)
    },
  }
}
export type AccountsStore = ReturnType<typeof accountsStore>
