import { randomBytes } from 'node:crypto'
import { notFound } from '../http/http-error.ts'
import { FieldErrors, acceptableText, isRecord } from '../domain/field-errors.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin, sha256 } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, parseId, rootObject } from '../api/kit/params.ts'
import type { ApiKeyRecord, Tx, UserFilter, UserSettings } from '../store/api.ts'
import { prefixRange } from '../domain/search.ts'
import { LANGUAGES, type Language } from '../domain/messages.ts'
import { renderUser } from '../domain/representation.ts'
import type { User } from '../domain/types.ts'
import { changeFound } from './change-found.ts'
import { TEXT_PARAM, check, optionalBoolean, optionalString, readListQuery, requiredString } from './input.ts'

const EMAIL = /^[^\s@]+@[^\s@]+$/
const MIN_IMPORTED_KEY = 16

/** A new API key: `rpl_` and 192 random bits, URL-safe (C2 asks for at least 128). */
export function newApiKey(): string {
  return `rpl_${randomBytes(24).toString('base64url')}`
}

export function newAdminToken(): string {
  return `rpladm_${randomBytes(32).toString('base64url')}`
}

/** A user's email as POST and PATCH /users take it: required, NAME@DOMAIN, no other user's (in any case). */
async function readEmail(tx: Tx, attrs: Record<string, unknown>, errors: FieldErrors, userId?: number): Promise<string | undefined> {
  const email = requiredString(attrs, 'email', errors)
  if (email === undefined) return undefined
  if (!EMAIL.test(email)) return errors.add('email', 'invalid')
  if (await tx.accounts.emailTaken(email, userId)) return errors.add('email', 'taken')
  return email
}

/**
 * C17's settings as a body gives them, over `current`: `locale` one of en, es, fr, de, or null for
 * the service's default (REPLENISH_DEFAULT_LOCALE); `email_notifications` a boolean.
 */
export function readSettings(attrs: Record<string, unknown>, current: UserSettings, errors: FieldErrors): UserSettings {
  const raw = attrs['locale']
  let locale = current.locale
  if (raw === null || raw === '') locale = null
  else if (typeof raw === 'string' && (LANGUAGES as readonly string[]).includes(raw)) locale = raw as Language
  else if (raw !== undefined) errors.add('locale', 'inclusion')
  return { locale, email_notifications: optionalBoolean(attrs, 'email_notifications', current.email_notifications, errors) }
}

const NEW_USER: UserSettings = { locale: null, email_notifications: true }

/** A user as the admin API shows it (C11, C17). */
export const presentUser = (app: App, user: User): Record<string, unknown> => renderUser(user, app.config.defaultLocale)

export const createUser = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  const attrs = rootObject(ctx, 'user')
  return call.commit(async (tx) => {
    const errors = new FieldErrors()
    const email = await readEmail(tx, attrs, errors)
    const externalId = optionalString(attrs, 'external_id', errors)
    const settings = readSettings(attrs, NEW_USER, errors)
    check(errors)
    return ok(presentUser(app, await tx.accounts.createUser(email as string, externalId, settings)), 201)
  })
}

/**
 * PATCH (and PUT) /users/:id `{user: {email, external_id, locale, email_notifications}}` (C13,
 * C17): a field left out keeps its value, `external_id` null or empty clears it, `locale` null
 * goes back to the service's default; the email follows POST's rules. Nothing changed, nothing
 * written (updated_at stays).
 */
export const updateUser = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.accounts.findUser(id), async (tx, user, ctx) => {
    const attrs = rootObject(ctx, 'user')
    const errors = new FieldErrors()
    const email = attrs['email'] === undefined ? user.email : await readEmail(tx, attrs, errors, user.id)
    const externalId = attrs['external_id'] === undefined ? user.external_id : optionalString(attrs, 'external_id', errors)
    const settings = readSettings(attrs, user, errors)
    check(errors)
    const same = email === user.email && externalId === user.external_id && settings.locale === user.locale &&
      settings.email_notifications === user.email_notifications
    if (same) return ok(presentUser(app, user))
    return ok(presentUser(app, await tx.accounts.updateUser(user.id, email ?? null, externalId, settings)))
  })

/** The filters of `GET /users` and of its export (C13, C18). */
export const USER_FILTERS = { email: TEXT_PARAM, external_id: TEXT_PARAM, q: TEXT_PARAM }

/** The store's filter for a query read with USER_FILTERS; `q` is a prefix (src/domain/search.ts). */
export function userFilter(q: { email?: string | undefined; external_id?: string | undefined; q?: string | undefined }): UserFilter {
  return { email: q.email, externalId: q.external_id, prefix: q.q === undefined ? undefined : prefixRange(q.q) }
}

export const listUsers = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readListQuery(ctx.query, USER_FILTERS)
  const users = await app.store.accounts.listUsers(q.after, q.limit + 1, userFilter(q))
  return ok(cursorBody('users', users, q.limit, (u) => presentUser(app, u)))
}

export const showUser = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const user = await app.store.accounts.findUser(parseId(ctx.params['id']))
  if (!user) throw notFound()
  return ok(presentUser(app, user))
}

const renderKey = (k: ApiKeyRecord, key?: string): Record<string, unknown> => ({
  id: k.id,
  user_id: k.user_id,
  prefix: k.prefix,
  ...(key !== undefined ? { key } : { revoked_at: k.revoked_at }),
  created_at: k.created_at,
  updated_at: k.updated_at,
})

/** Empty body: a new key. `api_key: {key}`: import an existing key (16+ characters) so old clients keep working. */
export const createApiKey = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.accounts.findUser(id), async (tx, user, ctx) => {
    const body = ctx.body
    const wrapped = isRecord(body) ? (isRecord(body['api_key']) ? body['api_key'] : ctx.bodyKind === 'json' ? body : {}) : {}
    let key: string
    if (wrapped['key'] !== undefined && wrapped['key'] !== null) {
      const errors = new FieldErrors()
      const given = wrapped['key']
      if (typeof given !== 'string' || /\s/.test(given)) errors.add('key', 'invalid')
      else if (given.length < MIN_IMPORTED_KEY) errors.add('key', 'too_short', MIN_IMPORTED_KEY)
      else if (acceptableText(given, 'key', errors) && (await tx.accounts.apiKeyHashExists(sha256(given)))) errors.add('key', 'taken')
      check(errors)
      key = given as string
    } else {
      key = newApiKey()
    }
    const record = await tx.accounts.createApiKey(user.id, sha256(key), key.slice(0, 8))
    return ok(renderKey(record, key), 201)
  })

/** GET /users/:id/api_keys (C13): every key of the user, revoked ones too; never the key itself. */
export const listUserApiKeys = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const user = await app.store.accounts.findUser(parseId(ctx.params['id']))
  if (!user) throw notFound()
  const { after, limit } = readListQuery(ctx.query, {})
  const keys = await app.store.accounts.listApiKeys(user.id, after, limit + 1)
  return ok(cursorBody('api_keys', keys, limit, (k) => ({
    id: k.id,
    user_id: k.user_id,
    prefix: k.prefix,
    created_at: k.created_at,
    updated_at: k.updated_at,
    last_used_at: k.last_used_at,
    revoked_at: k.revoked_at,
  })))
}

export const revokeApiKey = (app: App): ApiHandler => {
  const revoke = changeFound(app, (tx, id) => tx.accounts.findApiKey(id), async (tx, key) => {
    await tx.accounts.revokeApiKey(key.id)
    return ok(renderKey((await tx.accounts.findApiKey(key.id)) as ApiKeyRecord))
  })
  return async (ctx, call) => {
    const reply = await revoke(ctx, call)
    // A revoked key stops working at once, not when its cache entry ages out. After the unit: a
    // unit has no effect outside its tx (a backend may run it again after a conflict).
    app.keyCache.clear()
    return reply
  }
}
