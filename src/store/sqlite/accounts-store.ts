import type { DatabaseSync, StatementSync } from 'node:sqlite'
import type { User } from '../../domain/types.ts'
import { nowIso, plain, type Row } from './rows.ts'
import type { ApiKeyRecord, UserFilter } from '../api.ts'
import type { AdminScope, AdminTokenRecord } from '../api.ts'
export type { ApiKeyRecord }

export function accountsStore(db: DatabaseSync) {
  const insertUser = db.prepare('INSERT INTO users (email, external_id, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING *')
  const userById = db.prepare('SELECT * FROM users WHERE id = ?')
  const userByEmail = db.prepare('SELECT id FROM users WHERE email = ?')
  // One statement per combination of filters, prepared when first used: a written-out condition
  // lets the planner use the unique email index (`email = ?` compares with the column's NOCASE
  // collation), which `(? IS NULL OR email = ?)` would not.
  const searches = new Map<string, StatementSync>()
  const searchUsers = (after: number, limit: number, { email, externalId }: UserFilter): Row[] => {
    const where = ['id > ?']
    const args: (string | number)[] = [after]
    if (email !== undefined) { where.push('email = ?'); args.push(email) }
    if (externalId !== undefined) { where.push('external_id = ?'); args.push(externalId) }
    const sql = `SELECT * FROM users WHERE ${where.join(' AND ')} ORDER BY id LIMIT ?`
    let statement = searches.get(sql)
    if (!statement) searches.set(sql, (statement = db.prepare(sql)))
    return statement.all(...args, limit) as Row[]
  }
  const insertKey = db.prepare('INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id, user_id, prefix, revoked_at, created_at, updated_at')
  const keyById = db.prepare('SELECT id, user_id, prefix, revoked_at, created_at, updated_at FROM api_keys WHERE id = ?')
  const keyByHash = db.prepare('SELECT id FROM api_keys WHERE key_hash = ?')
  const userForHash = db.prepare('SELECT user_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
  const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL')
  const insertToken = db.prepare('INSERT INTO admin_tokens (token_hash, prefix, scope, label, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING id')
  const tokenByHash = db.prepare('SELECT id FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL')
  const TOKEN_COLUMNS = 'id, label, scope, prefix, created_at, updated_at, last_used_at'
  const tokenRecordByHash = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE token_hash = ? AND revoked_at IS NULL`)
  const tokenById = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id = ? AND revoked_at IS NULL`)
  const tokensAfter = db.prepare(`SELECT ${TOKEN_COLUMNS} FROM admin_tokens WHERE id > ? AND revoked_at IS NULL ORDER BY id LIMIT ?`)
  const revokeToken = db.prepare('UPDATE admin_tokens SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL')
  const touchToken = db.prepare('UPDATE admin_tokens SET last_used_at = ? WHERE id = ?')

  return {
    createUser(email: string, externalId: string | null): User {
      const now = nowIso()
      return plain<User>(insertUser.get(email, externalId, now, now) as Row)
    },
    findUser(id: number): User | undefined {
      const r = userById.get(id) as Row | undefined
      return r ? plain<User>(r) : undefined
    },
    emailTaken(email: string): boolean {
      return userByEmail.get(email) !== undefined
    },
    listUsers(after: number, limit: number, filter: UserFilter = {}): User[] {
      return searchUsers(after, limit, filter).map((r) => plain<User>(r))
    },
    createApiKey(userId: number, keyHash: string, prefix: string): ApiKeyRecord {
      const now = nowIso()
      return plain<ApiKeyRecord>(insertKey.get(userId, keyHash, prefix, now, now) as Row)
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
