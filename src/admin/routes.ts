import type { Route } from '../http/types.ts'
import type { App } from '../api/kit/app.ts'
import { endpoint, withDryRunAnswers, type ApiHandler } from '../api/kit/endpoint.ts'
import * as u from './users.ts'
import * as c from './catalog.ts'
import * as s from './subscriptions.ts'
import * as i from './installments.ts'
import { recordOutcomes } from './bulk-outcomes.ts'
import * as w from './webhooks.ts'
import * as d from './deliveries.ts'
import * as t from './admin-tokens.ts'
import { createPortalSession } from './portal-sessions.ts'
import { importRecords, importRouteOptions } from './imports.ts'
import { showOverview } from './overview.ts'
import { showMonthlyReport, showRecurringReport } from './reports.ts'
import { showCurrentAdminToken } from './current-token.ts'
import { listSubscriptionEvents } from './subscription-events.ts'
import * as sw from './subscription-writes.ts'
import { eraseUser } from './user-erase.ts'
import * as x from './exports.ts'
import { listEmails } from './emails.ts'

const A = '/admin/api/v1'

/** The admin API (C11) for the shop's backend. */
export function adminRoutes(app: App): Route[] {
  // Every write of the table answers Replenish-Dry-Run (C18).
  const r = (make: (app: App) => ApiHandler) => endpoint(app, make(app), { dryRuns: true })
  return withDryRunAnswers([
    ['POST', `${A}/users`, r(u.createUser)],
    ['GET', `${A}/users`, r(u.listUsers)],
    ['GET', `${A}/users/:id`, r(u.showUser)],
    ['PATCH', `${A}/users/:id`, r(u.updateUser)],
    ['POST', `${A}/users/:id/erase`, r(eraseUser)],
    ['POST', `${A}/users/:id/api_keys`, r(u.createApiKey)],
    ['POST', `${A}/users/:id/portal_sessions`, r(createPortalSession)],
    ['GET', `${A}/users/:id/api_keys`, r(u.listUserApiKeys)],
    ['DELETE', `${A}/api_keys/:id`, r(u.revokeApiKey)],
    ['POST', `${A}/payment_methods`, r(c.createPaymentMethod)],
    ['GET', `${A}/payment_methods`, r(c.listPaymentMethods)],
    ['GET', `${A}/payment_methods/:id`, r(c.showPaymentMethod)],
    ['PATCH', `${A}/payment_methods/:id`, r(c.updatePaymentMethod)],
    ['POST', `${A}/payment_sources`, r(c.createPaymentSource)],
    ['GET', `${A}/payment_sources`, r(c.listPaymentSources)],
    ['GET', `${A}/payment_sources/:id`, r(c.showPaymentSource)],
    ['DELETE', `${A}/payment_sources/:id`, r(c.deletePaymentSource)],
    ['POST', `${A}/subscribables`, r(c.createSubscribable)],
    ['GET', `${A}/subscribables`, r(c.listSubscribables)],
    ['GET', `${A}/subscribables/:id`, r(c.showSubscribable)],
    ['PATCH', `${A}/subscribables/:id`, r(c.updateSubscribable)],
    ['DELETE', `${A}/subscribables/:id`, r(c.deleteSubscribable)],
    ['POST', `${A}/subscriptions`, r(sw.createSubscription)],
    ['GET', `${A}/subscriptions`, r(s.listSubscriptions)],
    ['GET', `${A}/subscriptions/:id`, r(s.showSubscription)],
    ['GET', `${A}/subscriptions/:id/events`, r(listSubscriptionEvents)],
    ['PATCH', `${A}/subscriptions/:id`, r(sw.updateSubscription)],
    ['POST', `${A}/subscriptions/:id/cancel`, r(s.cancelSubscription)],
    ['POST', `${A}/subscriptions/:id/skip`, r(s.skipSubscription)],
    ['POST', `${A}/subscriptions/:id/pause`, r(s.pauseSubscription)],
    ['POST', `${A}/subscriptions/:id/resume`, r(s.resumeSubscription)],
    ['POST', `${A}/subscriptions/:id/activate`, r(s.activateSubscription)],
    ['GET', `${A}/installments`, r(i.listInstallments)],
    ['GET', `${A}/installments/:id`, r(i.showInstallment)],
    ['POST', `${A}/installments/:id/outcome`, r(i.recordInstallmentOutcome)],
    ['POST', `${A}/installments/outcomes`, r(recordOutcomes)],
    ['GET', `${A}/events`, r(s.eventFeed)],
    ['POST', `${A}/webhook_endpoints`, r(w.createWebhookEndpoint)],
    ['GET', `${A}/webhook_endpoints`, r(w.listWebhookEndpoints)],
    ['GET', `${A}/webhook_endpoints/:id`, r(w.showWebhookEndpoint)],
    ['PATCH', `${A}/webhook_endpoints/:id`, r(w.updateWebhookEndpoint)],
    ['DELETE', `${A}/webhook_endpoints/:id`, r(w.deleteWebhookEndpoint)],
    ['POST', `${A}/webhook_endpoints/:id/rotate_secret`, r(w.rotateWebhookSecret)],
    ['POST', `${A}/webhook_endpoints/:id/test`, r(w.sendTestEvent)],
    ['GET', `${A}/webhook_endpoints/:id/deliveries`, r(d.listDeliveries)],
    ['GET', `${A}/deliveries`, r(d.listAllDeliveries)],
    ['GET', `${A}/deliveries/:id`, r(d.showDelivery)],
    ['POST', `${A}/deliveries/:id/redeliver`, r(d.redeliver)],
    ['GET', `${A}/emails`, r(listEmails)],
    ['POST', `${A}/admin_tokens`, r(t.createAdminTokenHandler)],
    ['GET', `${A}/admin_tokens`, r(t.listAdminTokens)],
    ['GET', `${A}/admin_tokens/current`, r(showCurrentAdminToken)],
    ['GET', `${A}/overview`, r(showOverview)],
    ['GET', `${A}/reports/recurring`, r(showRecurringReport)],
    ['GET', `${A}/reports/monthly`, r(showMonthlyReport)],
    ['DELETE', `${A}/admin_tokens/:id`, r(t.revokeAdminToken)],
    ['POST', `${A}/imports`, r(importRecords), importRouteOptions(app)],
    ['GET', `${A}/exports/subscriptions.csv`, r(x.exportSubscriptions)],
    ['GET', `${A}/exports/users.csv`, r(x.exportUsers)],
    ['GET', `${A}/exports/installments.csv`, r(x.exportInstallments)],
  ])
}
