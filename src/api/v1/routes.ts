import type { Route } from '../../http/types.ts'
import type { App } from '../kit/app.ts'
import { endpoint, withDryRunAnswers, type ApiHandler } from '../kit/endpoint.ts'
import * as s from './subscriptions.ts'
import * as li from './line-items.ts'
import * as inst from './installments.ts'
import { openApiDocument } from '../openapi/document.ts'

/** The customer API (C5): the whole table on one screen. */
export function customerRoutes(app: App): Route[] {
  // Every write of the table answers Replenish-Dry-Run (C18).
  const r = (make: (app: App) => ApiHandler) => endpoint(app, make(app), { dryRuns: true })
  return withDryRunAnswers([
    ['GET', '/api/v1/openapi.json', () => ({ status: 200, body: openApiDocument })],
    ['POST', '/api/v1/subscriptions', r(s.createSubscription)],
    ['GET', '/api/v1/subscriptions', r(s.listSubscriptions)],
    ['GET', '/api/v1/subscriptions/:id', r(s.showSubscription)],
    ['PATCH', '/api/v1/subscriptions/:id', r(s.updateSubscription)],
    ['POST', '/api/v1/subscriptions/:id/skip', r(s.skipSubscription)],
    ['POST', '/api/v1/subscriptions/:id/cancel', r(s.cancelSubscription)],
    ['POST', '/api/v1/subscriptions/:id/pause', r(s.pauseSubscription)],
    ['POST', '/api/v1/subscriptions/:id/resume', r(s.resumeSubscription)],
    ['POST', '/api/v1/subscriptions/:id/activate', r(s.activateSubscription)],
    ['GET', '/api/v1/subscriptions/:id/events', r(s.listEvents)],
    ['GET', '/api/v1/subscriptions/:id/installments', r(inst.listInstallments)],
    ['POST', '/api/v1/subscriptions/:id/line_items', r(li.addLineItem)],
    ['GET', '/api/v1/line_items/:id', r(li.showLineItem)],
    ['PATCH', '/api/v1/line_items/:id', r(li.updateLineItem)],
    ['DELETE', '/api/v1/line_items/:id', r(li.deleteLineItem)],
  ])
}
