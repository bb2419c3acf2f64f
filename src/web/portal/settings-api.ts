import type { App } from '../../api/kit/app.ts'
import { portalSession } from '../../api/kit/auth.ts'
import { actAs } from '../../api/kit/actor.ts'
import { ok, type ApiHandler } from '../../api/kit/endpoint.ts'
import { rootObject } from '../../api/kit/params.ts'
import { FieldErrors } from '../../domain/field-errors.ts'
import { notFound } from '../../http/http-error.ts'
import { check } from '../../admin/input.ts'
import { readSettings } from '../../admin/users.ts'

/**
 * PATCH /portal/api/settings `{settings: {email_notifications?, locale?}}` (C17): the customer's own
 * e-mail settings, as the admin API's PATCH /users/:id sets them (the same rules and 422s, in the
 * page's language); the CSRF token is required as for every portal write. Answers the settings as
 * they now are, the default language shown when the customer has none of their own.
 */
export const updatePortalSettings = (app: App): ApiHandler => async (ctx, call) => {
  const session = await portalSession(app, ctx)
  ctx.userId = session.user_id
  actAs(ctx, { type: 'portal', id: session.user_id })
  const attrs = rootObject(ctx, 'settings')
  return call.commit(async (tx) => {
    const user = await tx.accounts.findUser(session.user_id)
    if (!user) throw notFound()
    const errors = new FieldErrors()
    const settings = readSettings(attrs, user, errors)
    check(errors)
    const same = settings.locale === user.locale && settings.email_notifications === user.email_notifications
    const now = same ? user : await tx.accounts.updateUser(user.id, user.email, user.external_id, settings)
    return ok({ locale: now.locale ?? app.config.defaultLocale, email_notifications: now.email_notifications })
  })
}
