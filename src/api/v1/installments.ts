import { renderInstallment } from '../../domain/installment.ts'
import type { App } from '../kit/app.ts'
import { ok, type ApiHandler } from '../kit/endpoint.ts'
import { pageBody, readPage } from '../kit/params.ts'
import { ownSubscription } from './subscriptions.ts'

/** GET /subscriptions/:id/installments: the owner's deliveries so far, newest due date first (C5, C9). */
export const listInstallments = (app: App): ApiHandler => async (ctx) => {
  const sub = await ownSubscription(app, ctx)
  const page = readPage(ctx.query)
  const installments = await app.store.installments.listOfSubscription(sub.id, page.offset, page.perPage)
  const attempts = await app.store.installments.attemptsOf(installments.map((i) => i.id))
  const items = installments.map((i) => renderInstallment(i, attempts.get(i.id) ?? []))
  return ok(pageBody('installments', items, page, await app.store.installments.countOfSubscription(sub.id)))
}
