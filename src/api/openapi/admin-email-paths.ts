/** The admin API's mail log (C17; docs/email.md). */
import { MAIL_STATES } from '../../domain/mail/kinds.ts'
import { A } from './admin-account-paths.ts'
import { operation, type Entry } from './operation.ts'
import { enumFilter, idFilter, listParameters } from './parameters.ts'
import { ref } from './schema-kit.ts'

export const adminEmailPaths: readonly Entry[] = [
  operation('get', `${A}/emails`, {
    id: 'listEmails', tag: 'Emails', summary: "The log of customers' mails", auth: 'read', strictQuery: true,
    parameters: listParameters({ user_id: idFilter("Only this user's mails."), state: enumFilter(MAIL_STATES, 'Only this state.') }),
    answers: [{ status: '200', description: 'A page of mails, by id, each with its attempts.', schema: ref('EmailList') }],
  }),
]
