import { FieldErrors } from '../domain/field-errors.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin, sha256 } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody, rootObject } from '../api/kit/params.ts'
import { readListQuery } from './input.ts'
import { ADMIN_SCOPES, type AdminScope, type AdminTokenRecord, type AccountsTx } from '../store/api.ts'
import { changeFound } from './change-found.ts'
import { check, optionalString } from './input.ts'
import { newAdminToken } from './users.ts'

/** Enough to tell tokens apart in a list; the rest of the row is small. */
export const MAX_LABEL_LENGTH = 100

export const isAdminScope = (value: unknown): value is AdminScope => (ADMIN_SCOPES as readonly unknown[]).includes(value)

/** The C13 body; `token` only in the answer of create. */
export const renderAdminToken = (t: AdminTokenRecord, token?: string): Record<string, unknown> => ({
  id: t.id,
  label: t.label,
  scope: t.scope,
  prefix: t.prefix,
  ...(token !== undefined ? { token } : {}),
  created_at: t.created_at,
  updated_at: t.updated_at,
  last_used_at: t.last_used_at,
})

/** Makes and stores a token (only its SHA-256); the token itself is answered once, here. */
export async function createAdminToken(tx: AccountsTx, scope: AdminScope, label: string | null): Promise<{ record: AdminTokenRecord; token: string }> {
  const token = newAdminToken()
  const id = await tx.createAdminToken(sha256(token), token.slice(0, 10), scope, label)
  return { record: (await tx.findAdminToken(id)) as AdminTokenRecord, token }
}

function readNewToken(attrs: Record<string, unknown>): { scope: AdminScope; label: string | null } {
  const errors = new FieldErrors()
  const raw = attrs['scope']
  const scope = raw === undefined || raw === null || raw === '' ? 'admin' : isAdminScope(raw) ? raw : errors.add('scope', 'inclusion')
  const label = optionalString(attrs, 'label', errors, MAX_LABEL_LENGTH)
  check(errors)
  return { scope: scope as AdminScope, label }
}

export const createAdminTokenHandler = (app: App): ApiHandler => async (ctx, call) => {
  await authenticateAdmin(app, ctx)
  // No body at all is a token with the defaults (scope admin, no label).
  const { scope, label } = readNewToken(ctx.body === undefined ? {} : rootObject(ctx, 'admin_token'))
  return call.commit(async (tx) => {
    const { record, token } = await createAdminToken(tx.accounts, scope, label)
    return ok(renderAdminToken(record, token), 201)
  })
}

export const listAdminTokens = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const { after, limit } = readListQuery(ctx.query, {})
  return ok(cursorBody('admin_tokens', await app.store.accounts.listAdminTokens(after, limit + 1), limit, (t) => renderAdminToken(t)))
}

/** The token as it was; from the next request on it is 401 (authentication has no cache). */
export const revokeAdminToken = (app: App): ApiHandler =>
  changeFound(app, (tx, id) => tx.accounts.findAdminToken(id), async (tx, token) => {
    await tx.accounts.revokeAdminToken(token.id)
    return ok(renderAdminToken(token))
  })
