import type { App } from '../api/kit/app.ts'
import { authenticateAdmin } from '../api/kit/auth.ts'
import { ok, type ApiHandler } from '../api/kit/endpoint.ts'
import { cursorBody } from '../api/kit/params.ts'
import { MAIL_STATES, type MailState } from '../domain/mail/kinds.ts'
import { ID_PARAM, oneOf, readListQuery } from './input.ts'

/**
 * GET /admin/api/v1/emails?user_id=&state=&after=&limit= (C17): the mail log, by id, each mail
 * with its attempts. Strict parameters (C13). A mail's body and link are never kept, so never shown.
 */
export const listEmails = (app: App): ApiHandler => async (ctx) => {
  await authenticateAdmin(app, ctx)
  const q = readListQuery(ctx.query, { user_id: ID_PARAM, state: oneOf(MAIL_STATES) })
  const emails = await app.store.emails.list({ after: q.after, limit: q.limit + 1, userId: q.user_id, state: q.state as MailState | undefined })
  return ok(cursorBody('emails', emails, q.limit, (e) => e))
}
