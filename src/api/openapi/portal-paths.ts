/** The admin API's door to the customer portal (C14, docs/console.md): a one-time link for a user. */
import { A } from './admin-account-paths.ts'
import { body, operation, type Entry } from './operation.ts'
import { input, object, rooted } from './schema-kit.ts'

const PortalSessionInput = input({
  return_url: { type: ['string', 'null'], description: 'An http(s) URL the portal links back to ("Back to the shop"); anything else is a 422.' },
})

const PortalSession = object({
  url: { type: 'string', format: 'uri', description: '`<REPLENISH_PUBLIC_URL or this request\'s scheme and host>/portal/sessions/<token>`: opens the portal once.' },
  expires_at: { type: 'string', format: 'date-time', description: 'One hour from now; after it, or once used, the link answers an HTML page with status 410.' },
})

export const portalPaths: readonly Entry[] = [
  operation('post', `${A}/users/{id}/portal_sessions`, {
    id: 'createPortalSession', tag: 'Users', summary: "A one-time link to the user's customer portal", auth: 'admin',
    description: 'Like a billing-portal session: hand the link to the signed-in customer; opening it sets a session cookie (12 h idle expiry) and shows /portal/.',
    body: body(rooted('portal_session', PortalSessionInput, false), { required: false, description: 'Optional.' }),
    answers: [{ status: '201', description: 'The link, shown in this answer only (the database keeps its hash).', schema: PortalSession }],
  }),
]
