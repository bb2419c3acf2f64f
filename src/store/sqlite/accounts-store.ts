import type { DatabaseSync } from 'node:sqlite'
import type { User } from '../../domain/types.ts'
import { nowIso, plain, type Row } from './rows.ts'
import type { ApiKeyRecord } from '../api.ts'
export type { ApiKeyRecord }

export function accountsStore(db: DatabaseSync) {
  const insertUser = db.prepare('INSERT INTO users (email, external_id, created_at, updated_at) VALUES (?, ?, ?, ?) RETURNING *')
  const userById = db.prepare('SELECT * FROM users WHERE id = ?')
  const userByEmail = db.prepare('SELECT id FROM users WHERE email = ?')
  const usersAfter = db.prepare('SELECT * FROM users WHERE id > ? ORDER BY id LIMIT ?')
  const insertKey = db.prepare('INSERT INTO api_keys (user_id, key_hash, prefix, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING id, user_id, prefix, revoked_at, created_at, updated_at')
  const keyById = db.prepare('SELECT id, user_id, prefix, revoked_at, created_at, updated_at FROM api_keys WHERE id = ?')
  const keyByHash = db.prepare('SELECT id FROM api_keys WHERE key_hash = ?')
  const userForHash = db.prepare('SELECT user_id FROM api_keys WHERE key_hash = ? AND revoked_at IS NULL')
  const revokeKey = db.prepare('UPDATE api_keys SET revoked_at = ?, updated_at = ? WHERE id = ? AND revoked_at IS NULL')
  const insertToken = db.prepare('INSERT INTO admin_tokens (token_hash, prefix, created_at) VALUES (?, ?, ?) RETURNING id')
  const tokenByHash = db.prepare('SELECT id FROM admin_tokens WHERE token_hash = ?')

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
    listUsers(after: number, limit: number): User[] {
      return (usersAfter.all(after, limit) as Row[]).map((r) => plain<User>(r))
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
    createAdminToken(tokenHash: string, prefix: string): number {
      return (insertToken.get(tokenHash, prefix, nowIso()) as { id: number }).id
    },
    adminTokenExists(tokenHash: string): boolean {
      return tokenByHash.get(tokenHash) !== undefined
    },
  }
}
export type AccountsStore = ReturnType<typeof accountsStore>
