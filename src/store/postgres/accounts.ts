import type { User } from '../../domain/types.ts'
import type { AccountsTx, ActiveApiKey, AdminScope, AdminTokenRecord, ApiKeyRecord, UserFilter, UserSettings } from '../api.ts'
import { changed, unlessTaken } from './conflict.ts'
import { nowIso } from './rows.ts'
import { CREDENTIAL_GENERATION, lockedInUnit, type Sql } from './sql.ts'

/** Columns in the domain's order: the admin API answers these objects as JSON, keys in this order. */
const USER = 'id, email, external_id, locale, email_notifications, created_at, updated_at'
const DEFAULT_SETTINGS: UserSettings = { locale: null, email_notifications: true }
const KEY = 'id, user_id, prefix, revoked_at, created_at, updated_at, last_used_at'
const TOKEN = 'id, label, scope, prefix, created_at, updated_at, last_used_at'

/**
 * Email matches ignore ASCII case, as the unique index `users_email ON users (lower(email))` does
 * (SQLite: NOCASE). The argument is cast to "C" too: lower() of a text of the database's default
 * collation would fold non-ASCII letters, which neither the index nor SQLite folds.
 */
const EMAIL_IS = (n: number): string => `lower(email) = lower($${n}::text COLLATE "C")`

/**
 * C18 `q`: what a prefix is matched against, each expression exactly as an index holds it: the
 * unique `users_email` and migration 13's `users_external_id_lower` and `users_email_domain`.
 */
export const PREFIX_INDEXED = ['lower(email)', 'lower(external_id)', "lower(substr(email, strpos(email, '@') + 1))"] as const

/** Users, their API keys, and admin tokens (C2, C13). */
export function accountsRepo(sql: Sql): AccountsTx {
  return {
    async createUser(email, externalId, settings = DEFAULT_SETTINGS) {
      const now = nowIso()
      const insert = sql.one<User>(`INSERT INTO users (email, external_id, locale, email_notifications, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5)
        RETURNING ${USER}`, [email, externalId, settings.locale, settings.email_notifications, now])
      return (await unlessTaken(insert, 'users_email')) as User
    },
    findUser: (id) => sql.one<User>(`SELECT ${USER} FROM users WHERE id = $1${lockedInUnit(sql)}`, [id]),
    async emailTaken(email, exceptUserId) {
      const found = await sql.one<{ id: number }>(`SELECT id FROM users WHERE ${EMAIL_IS(1)}`, [email])
      return found !== undefined && found.id !== exceptUserId
    },
    async updateUser(id, email, externalId, settings) {
      const update = sql.one<User>(`UPDATE users SET email = $1, external_id = $2, locale = $3, email_notifications = $4, updated_at = $5 WHERE id = $6
        RETURNING ${USER}`, [email, externalId, settings.locale, settings.email_notifications, nowIso(), id])
      return changed(await unlessTaken(update, 'users_email'), `user ${id}`)
    },
    eraseUser: (id) => eraseUser(sql, id),
    listUsers: (after, limit, filter = {}) => searchUsers(sql, after, limit, filter),
    async createApiKey(userId, keyHash, prefix) {
      const now = nowIso()
      const insert = sql.one<ApiKeyRecord>(`INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES ($1, $2, $3, $4, $4) RETURNING ${KEY}`, [userId, keyHash, prefix, now])
      // An imported key (users.ts) is checked with apiKeyHashExists first: the same race as an email.
      return (await unlessTaken(insert, 'api_keys_key_hash_key')) as ApiKeyRecord
    },
    listApiKeys: (userId, after, limit) => sql.rows<ApiKeyRecord>(`SELECT ${KEY} FROM api_keys WHERE user_id = $1 AND id > $2 ORDER BY id LIMIT $3`, [userId, after, limit]),
    apiKeyHashExists: async (keyHash) => (await sql.one('SELECT 1 FROM api_keys WHERE key_hash = $1', [keyHash])) !== undefined,
    findApiKey: (id) => sql.one<ApiKeyRecord>(`SELECT ${KEY} FROM api_keys WHERE id = $1${lockedInUnit(sql)}`, [id]),
    async revokeApiKey(id) {
      await sql.run('UPDATE api_keys SET revoked_at = $1, updated_at = $1 WHERE id = $2 AND revoked_at IS NULL', [nowIso(), id])
    },
    userIdForKeyHash: async (keyHash) =>
      (await sql.one<{ user_id: number }>('SELECT user_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [keyHash]))?.user_id,
    activeApiKeyByHash: (keyHash) => sql.one<ActiveApiKey>(`SELECT id, user_id, last_used_at, (${CREDENTIAL_GENERATION}) AS generation
      FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL`, [keyHash]),
    async touchApiKey(id) {
      await sql.run('UPDATE api_keys SET last_used_at = $1 WHERE id = $2', [nowIso(), id])
    },
    async createAdminToken(tokenHash, prefix, scope: AdminScope = 'admin', label: string | null = null) {
      const now = nowIso()
      const row = await sql.one<{ id: number }>(
        'INSERT INTO admin_tokens (token_hash, prefix, scope, label, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $5) RETURNING id',
        [tokenHash, prefix, scope, label, now],
      )
      return (row as { id: number }).id
    },
    adminTokenExists: async (tokenHash) => (await sql.one('SELECT 1 FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL', [tokenHash])) !== undefined,
    adminTokenByHash: (tokenHash) => sql.one<AdminTokenRecord>(`SELECT ${TOKEN} FROM admin_tokens WHERE token_hash = $1 AND revoked_at IS NULL`, [tokenHash]),
    findAdminToken: (id) => sql.one<AdminTokenRecord>(`SELECT ${TOKEN} FROM admin_tokens WHERE id = $1 AND revoked_at IS NULL${lockedInUnit(sql)}`, [id]),
    listAdminTokens: (after, limit) => sql.rows<AdminTokenRecord>(`SELECT ${TOKEN} FROM admin_tokens WHERE id > $1 AND revoked_at IS NULL ORDER BY id LIMIT $2`, [after, limit]),
    async revokeAdminToken(id) {
      await sql.run('UPDATE admin_tokens SET revoked_at = $1, updated_at = $1 WHERE id = $2 AND revoked_at IS NULL', [nowIso(), id])
    },
    async touchAdminToken(id) {
      await sql.run('UPDATE admin_tokens SET last_used_at = $1 WHERE id = $2', [nowIso(), id])
    },
  }
}

/**
 * C13 search, one statement text per combination of filters: a written-out condition lets the
 * planner use the email index, which `($1 IS NULL OR …)` would not.
 */
function searchUsers(sql: Sql, after: number, limit: number, { email, externalId, prefix }: UserFilter): Promise<User[]> {
  const where = ['id > $1']
  const args: (string | number)[] = [after]
  if (email !== undefined) { args.push(email); where.push(EMAIL_IS(args.length)) }
  if (externalId !== undefined) { args.push(externalId); where.push(`external_id = $${args.length}`) }
  if (prefix !== undefined) {
    // C18 `q`: one range of each index (users_email, migration 13's two), which the planner
    // reads as a BitmapOr. The columns are COLLATE "C": byte order, ASCII-only lower().
    args.push(prefix.from)
    const from = `$${args.length}`
    if (prefix.to !== null) args.push(prefix.to)
    const range = (expression: string): string =>
      prefix.to === null ? `${expression} >= ${from}` : `(${expression} >= ${from} AND ${expression} < $${args.length})`
    where.push(`(${PREFIX_INDEXED.map(range).join(' OR ')})`)
  }
  args.push(limit)
  return sql.rows<User>(`SELECT ${USER} FROM users WHERE ${where.join(' AND ')} ORDER BY id LIMIT $${args.length}`, args)
}

/**
 * The user's part of an erasure (C13). Each statement changes only what is not erased yet, so
 * erasing twice changes nothing. The answers kept for the customer's Idempotency-Key replays hold
 * their addresses; their keys are revoked, so nothing could replay them (the scope is the
 * customer's as endpoint.ts names it).
 */
async function eraseUser(sql: Sql, id: number): Promise<void> {
  const now = nowIso()
  await sql.run('UPDATE users SET email = NULL, updated_at = $1 WHERE id = $2 AND email IS NOT NULL', [now, id])
  await sql.run('UPDATE api_keys SET revoked_at = $1, updated_at = $1 WHERE user_id = $2 AND revoked_at IS NULL', [now, id])
  await sql.run('UPDATE payment_sources SET gateway_reference = NULL, updated_at = $1 WHERE user_id = $2 AND gateway_reference IS NOT NULL', [now, id])
  await sql.run(
    `UPDATE installments SET shipping_address = NULL, billing_address = NULL, updated_at = $1
      WHERE subscription_id IN (SELECT id FROM subscriptions WHERE user_id = $2) AND (shipping_address IS NOT NULL OR billing_address IS NOT NULL)`,
    [now, id],
  )
  await sql.run('DELETE FROM idempotency_keys WHERE scope = $1', [`user:${id}`])
}
