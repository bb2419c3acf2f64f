/** Users, their API keys and the admin tokens: the repository's records and interfaces, exported by ../api.ts. */
import type { Language } from '../../domain/messages.ts'
import type { PrefixRange } from '../../domain/search.ts'
import type { User } from '../../domain/types.ts'

export interface ApiKeyRecord {
  readonly id: number
  readonly user_id: number
  readonly prefix: string
  readonly created_at: string
  readonly updated_at: string
  readonly revoked_at: string | null
  /** Written at most once a minute per key (docs/decisions.md), so exact to about a minute. */
  readonly last_used_at: string | null
}

/** What authentication reads of a key that is not revoked. */
export interface ActiveApiKey {
  readonly id: number
  readonly user_id: number
  readonly last_used_at: string | null
  /**
   * PostgreSQL: the credentials' generation read in the same statement (migration 16), which a
   * revocation moves on; a cached key holds while a request's own read still sees it. SQLite has
   * one process, which clears its cache when it revokes: none.
   */
  readonly generation?: number
}

/** C13: what an admin token may do. `admin`: everything; `read`: GET/HEAD on the admin API; `metrics`: GET /metrics. */
export const ADMIN_SCOPES = ['admin', 'read', 'metrics'] as const

export type AdminScope = (typeof ADMIN_SCOPES)[number]

/** A stored admin token as it is listed: never the token, only its first characters. */
export interface AdminTokenRecord {
  readonly id: number
  readonly label: string | null
  readonly scope: AdminScope
  readonly prefix: string
  readonly created_at: string
  readonly updated_at: string
  readonly last_used_at: string | null
}

/** C13 search: exact matches; `email` ignores case as the unique index does. */
export interface UserFilter {
  readonly email?: string | undefined
  readonly externalId?: string | undefined
  /**
   * C18 `q`: users whose email, external id or email after `@` (each ASCII-folded) falls in this
   * range, that is starts with the folded prefix (src/domain/search.ts); indexed on both stores.
   */
  readonly prefix?: PrefixRange | undefined
}

/** A user's e-mail settings (C17): `locale` null follows REPLENISH_DEFAULT_LOCALE. */
export interface UserSettings {
  readonly locale: Language | null
  readonly email_notifications: boolean
}

export interface AccountReads {
  findUser(id: number): Promise<User | undefined>
  /** Some user has this email (in any case); `exceptUserId`'s own does not count. */
  emailTaken(email: string, exceptUserId?: number): Promise<boolean>
  listUsers(after: number, limit: number, filter?: UserFilter): Promise<User[]>
  apiKeyHashExists(keyHash: string): Promise<boolean>
  findApiKey(id: number): Promise<ApiKeyRecord | undefined>
  /** A user's keys, revoked ones included, by id after `after`. */
  listApiKeys(userId: number, after: number, limit: number): Promise<ApiKeyRecord[]>
  userIdForKeyHash(keyHash: string): Promise<number | undefined>
  /** The key this hash names, unless revoked (the customer API authenticates with it on a cache miss). */
  activeApiKeyByHash(keyHash: string): Promise<ActiveApiKey | undefined>
  adminTokenExists(tokenHash: string): Promise<boolean>
  /** The token this hash names, unless revoked (authentication reads this on every admin request). */
  adminTokenByHash(tokenHash: string): Promise<AdminTokenRecord | undefined>
  /** A token that is not revoked. */
  findAdminToken(id: number): Promise<AdminTokenRecord | undefined>
  /** Tokens that are not revoked, by id after `after`. */
  listAdminTokens(after: number, limit: number): Promise<AdminTokenRecord[]>
}

export interface AccountsTx extends AccountReads {
  /** `settings` left out: the defaults (the service's locale, notifications on). */
  createUser(email: string, externalId: string | null, settings?: UserSettings): Promise<User>
  updateUser(id: number, email: string | null, externalId: string | null, settings: UserSettings): Promise<User>
  /**
   * The user's part of an erasure (C13): email to null, every key revoked, their payment sources'
   * gateway references and their installments' address snapshots blanked, the answers kept for
   * their own Idempotency-Key replays deleted; what is already erased is left alone. Subscriptions
   * are the caller's: their changes write events.
   */
  eraseUser(id: number): Promise<void>
  createApiKey(userId: number, keyHash: string, prefix: string): Promise<ApiKeyRecord>
  revokeApiKey(id: number): Promise<void>
  /** Sets a key's last_used_at to now; the caller decides how often (docs/decisions.md). */
  touchApiKey(id: number): Promise<void>
  createAdminToken(tokenHash: string, prefix: string, scope?: AdminScope, label?: string | null): Promise<number>
  revokeAdminToken(id: number): Promise<void>
  /** Sets last_used_at to now (C13); the caller decides how often (docs/decisions.md). */
  touchAdminToken(id: number): Promise<void>
}
