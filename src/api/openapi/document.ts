/**
 * GET /api/v1/openapi.json (C5, C13): one OpenAPI 3.1 document for the whole HTTP surface,
 * assembled from the paths files. Built once at start; test/api/openapi.test.ts holds it to the
 * route tables (both ways), and every answer the API tests receive is validated against it
 * (test/helpers/openapi-check.ts).
 */
import { VERSION } from '../../version.ts'
import { adminAccountPaths } from './admin-account-paths.ts'
import { adminExportPaths } from './admin-export-paths.ts'
import { adminSubscriptionPaths } from './admin-subscription-paths.ts'
import { adminWebhookPaths } from './admin-webhook-paths.ts'
import { adminEmailPaths } from './admin-email-paths.ts'
import { adminReportPaths } from './admin-report-paths.ts'
import { customerPaths } from './customer-paths.ts'
import { dashboardPaths } from './dashboard-paths.ts'
import { errorSchemas, headers, responses } from './errors.ts'
import { inputs } from './inputs.ts'
import type { Entry } from './operation.ts'
import { opsPaths } from './ops-paths.ts'
import { parameters } from './parameters.ts'
import { portalPaths } from './portal-paths.ts'
import { representations } from './representations.ts'
import type { Schema } from './schema-kit.ts'

const TAGS: Record<string, string> = {
  Subscriptions: "A customer's own subscriptions (C5–C8), compatible with solidus_subscriptions' /api/v1.",
  'Line items': 'The line items of a subscription, owned through it.',
  Users: 'Customers as the shop knows them (admin API).',
  'API keys': "Customers' API keys: made, imported, listed, revoked; stored hashed.",
  'Payment methods': 'Payment methods a subscription may use.',
  'Payment sources': "A user's stored payment details.",
  Subscribables: 'The catalog: what may be subscribed to.',
  'Admin subscriptions': 'Every subscription, as the shop sees and changes them.',
  Installments: 'Deliveries made from due subscriptions, and their outcomes (C9).',
  Events: 'The cursor feed of every change (C10).',
  'Webhook endpoints': 'Where events are posted, signed (C10, docs/webhooks.md).',
  Deliveries: 'The delivery log of each endpoint, and redelivery.',
  Emails: "The log of customers' mails (C17, docs/email.md): never a body, never a link.",
  'Admin tokens': 'Tokens for the admin API and /metrics, with their scopes (C13).',
  Imports: 'Bringing a shop over from solidus_subscriptions with its ids (docs/import.md).',
  Exports: 'Subscriptions, users and installments as CSV files, streamed (C18).',
  Reports: "The shop's money: monthly recurring value, and new, canceled, churn and fulfilled revenue per month (C16).",
  Dashboard: "What the staff dashboard (/admin/) reads besides the lists: counts and series (docs/console.md).",
  Operations: 'Health, readiness and metrics for the operator (C12).',
  Meta: 'This document.',
}

/**
 * What the document covers: the APIs and the operator's endpoints (C13). The web console's pages
 * and the portal's cookie-session routes (C14) are HTML and browser plumbing, described in
 * docs/console.md instead.
 */
export function isApiPath(path: string): boolean {
  return /^\/(api\/v1|admin\/api\/v1)(\/|$)/.test(path) || path === '/healthz' || path === '/readyz' || path === '/metrics'
}

function assemble(entries: readonly Entry[]): Record<string, Record<string, Schema>> {
  const paths: Record<string, Record<string, Schema>> = {}
  for (const [path, method, op] of entries) {
    const item = (paths[path] ??= {})
    if (item[method]) throw new Error(`the OpenAPI document has ${method.toUpperCase()} ${path} twice`)
    item[method] = op
  }
  return paths
}

export const openApiDocument: Record<string, unknown> = {
  openapi: '3.1.0',
  info: {
    title: 'replenish',
    version: VERSION,
    summary: 'Self-hosted recurring-delivery subscriptions: the customer API, the admin API and the operator endpoints.',
    description:
      'Bodies are JSON or Rails-style form encoding (C1); a JSON body without its root key is read as wrapped. ' +
      'Every answer is JSON (`application/json; charset=utf-8`) except /metrics and the CSV exports, and carries X-Request-Id. ' +
      'Answers of 1 KiB or more are compressed (gzip, or br when Accept-Encoding weighs it higher) with Vary: Accept-Encoding. ' +
      'Routing comes first: an unknown path is a 404 and a known path with another method a 405 with Allow, before authentication. ' +
      'Every write accepts an Idempotency-Key, and `Replenish-Dry-Run: 1` to be answered without changing anything (C18). HEAD is answered wherever GET is.',
    license: { name: 'MIT', identifier: 'MIT' },
  },
  servers: [{ url: 'http://127.0.0.1:8080', description: 'The default bind address (REPLENISH_HOST, REPLENISH_PORT).' }],
  tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
  paths: assemble([...customerPaths, ...adminAccountPaths, ...adminSubscriptionPaths, ...adminWebhookPaths, ...adminExportPaths, ...adminEmailPaths, ...adminReportPaths, ...dashboardPaths, ...portalPaths, ...opsPaths]),
  components: {
    securitySchemes: {
      apiKey: { type: 'http', scheme: 'bearer', description: "A customer's API key (`rpl_…`): it identifies the user." },
      portalSession: {
        type: 'apiKey',
        in: 'cookie',
        name: 'replenish_portal',
        description: 'The customer portal\'s session (C14, docs/console.md), used only when there is no Authorization header. Writes must also send the session\'s CSRF token in X-CSRF-Token (else 403).',
      },
      adminToken: {
        type: 'http',
        scheme: 'bearer',
        description:
          'An admin token (`replenish admin-tokens create`, or REPLENISH_ADMIN_TOKEN, which has scope admin). Scopes, listed as roles: ' +
          '`admin` (everything), `read` (GET and HEAD on the admin API), `metrics` (GET /metrics only). Outside its scope a token gets 403.',
      },
    },
    schemas: { ...representations, ...errorSchemas, ...inputs },
    parameters,
    headers,
    responses,
  },
}
