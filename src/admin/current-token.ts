import { timingSafeEqual } from 'node:crypto'
import { HttpError } from '../http/http-error.ts'
import type { App } from '../api/kit/app.ts'
import { authenticateAdmin, bearerToken, sha256 } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'

/**
 * GET /admin/api/v1/admin_tokens/current: the token the request is made with, `{id, scope,
 * label, prefix}`, for any token that may read the admin API (a metrics token is 403, as for any
 * admin route). The dashboard asks it once at sign-in, to hide write controls from a `read`
 * token. REPLENISH_ADMIN_TOKEN is not stored: `id`, `label` and `prefix` are null, its scope admin.
 */
export const showCurrentAdminToken = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const hash = sha256(bearerToken(ctx) as string)
  const configured = app.config.adminToken
  if (configured !== undefined && timingSafeEqual(Buffer.from(hash, 'hex'), Buffer.from(sha256(configured), 'hex'))) {
    return ok({ id: null, scope: 'admin', label: null, prefix: null })
  }
  const stored = await app.store.accounts.adminTokenByHash(hash)
  // Revoked between the two reads: as the next request would be answered.
  if (!stored) throw new HttpError(401, { error: 'Invalid admin token.' }, { 'www-authenticate': 'Bearer realm="replenish"' })
  return ok({ id: stored.id, scope: stored.scope, label: stored.label, prefix: stored.prefix })
}
