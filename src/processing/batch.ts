import { decideDue, type DueDecision } from '../domain/processing.ts'
import type { Store } from '../store/store.ts'
import type { BatchPlan, DueRow } from '../store/installments-store.ts'
import { abandonOpenInstallments } from './installment-actions.ts'

/**
 * The processor's batches (C9): which due subscriptions come next, and what one batch writes.
 * Everything here runs inside the caller's unit of writes.
 */
export interface Counts {
  processed: number
  installments: number
  ended: number
  canceled: number
  resumed: number
  retriesDue: number
  abandoned: number
}

/** Rows this many or fewer are found through the date index; more, by walking ids (see the store). */
const INDEX_WALK_MAX_BATCHES = 10
/** Ids scanned per call when walking ids, in batches: bounds the time one call holds the event loop. */
const ID_WINDOW_BATCHES = 8

export interface DueWalk {
  /** The next due rows, at most `limit` (a unit's share: pacing.ts). */
  next(limit: number): DueRow[]
  done: boolean
  /** Through the date index (few due), not by id. */
  readonly byIndex: boolean
}

/** The due subscriptions, a unit's share at a time, each seen once; `batch` is the largest share. */
export function dueWalk(store: Store, today: string, total: number, batch: number): DueWalk {
  if (total <= INDEX_WALK_MAX_BATCHES * batch) {
    let cursor = { date: '', id: 0 }
    return {
      done: false,
      byIndex: true,
      next(limit) {
        const rows = store.installments.dueByDate(today, cursor.date, cursor.id, limit)
        const last = rows[rows.length - 1]
        if (last) cursor = { date: last.due_floor ?? '', id: last.id }
        if (rows.length < limit) this.done = true
        return rows
      },
    }
  }
  const max = store.installments.maxSubscriptionId()
  let after = 0
  return {
    done: false,
    byIndex: false,
    next(limit) {
      const upto = Math.min(max, after + ID_WINDOW_BATCHES * limit)
      const rows = store.installments.dueById(today, after, upto, limit)
      const last = rows[rows.length - 1]
      after = rows.length === limit && last ? last.id : upto
      if (after >= max) this.done = true
      return rows
    },
  }
}

/** One batch: the installments in bulk, then the rarer changes one by one, all in the caller's unit. */
export function processBatch(store: Store, rows: readonly DueRow[], today: string, at: string, counts: Counts): void {
  const plans: BatchPlan[] = []
  const followUps: { id: number; events: readonly string[]; canceled: boolean; dueDate: string }[] = []
  for (const row of rows) {
    const d = decideDue(row, row.has_items, today)
    if (d.kind === 'wait') continue
    counts.processed++
    if (d.kind === 'install') {
      plans.push({ subscription_id: row.id, due_date: d.dueDate, actionable_date: d.nextDate, state: d.state })
      if (d.events.length > 0) followUps.push({ id: row.id, events: d.events, canceled: d.state === 'canceled', dueDate: d.dueDate })
      if (d.events.includes('subscription.resumed')) counts.resumed++
      if (d.state === 'canceled') counts.canceled++
      if (d.state === 'inactive') counts.ended++
    } else {
      applyChange(store, row.id, d, counts)
    }
  }
  counts.installments += store.installments.processMany(plans, at).size
  for (const f of followUps) {
    // A pending cancellation is complete: older deliveries still open end, the one just made stays.
    if (f.canceled) counts.abandoned += abandonOpenInstallments(store, f.id, f.dueDate)
    recordSubscription(store, f.id, f.events)
  }
}

/** A decision without an installment: end or resume. */
export function applyChange(store: Store, id: number, d: DueDecision, counts: Counts): void {
  if (d.kind !== 'end' && d.kind !== 'resume') return
  const sub = store.subscriptions.find(id)
  if (!sub) return
  if (d.kind === 'resume') counts.resumed++
  else if (d.event === 'subscription.canceled') counts.canceled++
  else counts.ended++
  if (store.subscriptions.update(sub, d.patch).state === 'canceled') counts.abandoned += abandonOpenInstallments(store, id)
  recordSubscription(store, id, [d.event])
}

/** The subscription as it now stands (C3, rendered by SQLite as every answer is) in each event. */
function recordSubscription(store: Store, id: number, events: readonly string[]): void {
  if (events.length === 0) return
  const body = store.subscriptions.renderJson(id)?.body
  if (body === undefined) return
  for (const type of events) store.events.recordJson(type, id, body)
}
