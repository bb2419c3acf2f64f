import { decideDue, decideEnded, type DueDecision } from '../domain/processing.ts'
import { upcomingDate } from '../domain/upcoming.ts'
import type { Installment } from '../domain/installment.ts'
import { renderLineItem } from '../domain/representation.ts'
import type { Subscription } from '../domain/types.ts'
import type { BatchPlan, DueRow, Store, Tx } from '../store/api.ts'
import { abandonOpenInstallments, retryDue } from './installment-actions.ts'

/**
 * The processor's batches (C9): which due subscriptions come next, and what one batch writes.
 * Everything here runs inside the caller's unit of writes, through its `tx`, and touches nothing
 * else: the counts a unit makes are its own, added to the run's once the unit has committed
 * (a backend that runs a unit again after a conflict must not count it twice).
 */
export interface Counts {
  processed: number
  installments: number
  ended: number
  canceled: number
  resumed: number
  retriesDue: number
  abandoned: number
  /** Subscriptions told of their next delivery (C17). */
  upcoming: number
}

export const noCounts = (): Counts => ({ processed: 0, installments: 0, ended: 0, canceled: 0, resumed: 0, retriesDue: 0, abandoned: 0, upcoming: 0 })

/** Adds a committed unit's counts to the run's. */
export function addCounts(total: Counts, unit: Counts): void {
  for (const key of Object.keys(total) as (keyof Counts)[]) total[key] += unit[key]
}

/** Rows this many or fewer are found through the date index; more, by walking ids (see the store). */
const INDEX_WALK_MAX_BATCHES = 10
/** The most due rows a walk of `batch`-sized units takes through the index. */
export const indexWalkMax = (batch: number): number => INDEX_WALK_MAX_BATCHES * batch
/** Ids scanned per call when walking ids, in batches: bounds the time one call holds the event loop. */
const ID_WINDOW_BATCHES = 8

/** Where a walk stands: after (due_floor, id) through the index, after `id` walking ids. */
export interface WalkPosition {
  readonly date: string
  readonly id: number
  readonly done: boolean
}

/** The rows one unit read, and where the walk stands after them. */
export interface DueStep {
  readonly rows: DueRow[]
  readonly next: WalkPosition
}

export interface DueWalk {
  /** The next due rows from where the walk stands, at most `limit` (a unit's share: pacing.ts). */
  read(tx: Tx, limit: number): Promise<DueStep>
  /**
   * Moves the walk to a step's `next`, once its unit has committed: a unit run again reads the
   * same rows. Only the position is kept past the unit, not its rows (they would outlive the
   * young generation, and a run of a million would grow the heap for nothing).
   */
  advance(to: WalkPosition): void
  readonly done: boolean
  /** Through the date index (few due), not by id. */
  readonly byIndex: boolean
}

/** The due subscriptions, a unit's share at a time, each seen once; `batch` is the largest share. */
export async function dueWalk(store: Store, today: string, total: number, batch: number): Promise<DueWalk> {
  const byIndex = total <= indexWalkMax(batch)
  const max = byIndex ? 0 : await store.installments.maxSubscriptionId()
  let at: WalkPosition = { date: '', id: 0, done: false }
  return {
    get done() {
      return at.done
    },
    byIndex,
    async read(tx, limit) {
      if (byIndex) {
        const rows = await tx.installments.dueByDate(today, at.date, at.id, limit)
        const last = rows[rows.length - 1]
        return { rows, next: { date: last ? (last.due_floor ?? '') : at.date, id: last ? last.id : at.id, done: rows.length < limit } }
      }
      const upto = Math.min(max, at.id + ID_WINDOW_BATCHES * limit)
      const rows = await tx.installments.dueById(today, at.id, upto, limit)
      const last = rows[rows.length - 1]
      const after = rows.length === limit && last ? last.id : upto
      return { rows, next: { date: '', id: after, done: after >= max } }
    },
    advance(to) {
      at = to
    },
  }
}

/**
 * One batch: the installments in bulk, then the rarer changes one by one; answers the batch's
 * counts. With `horizon` (C17's window ends there: upcoming.ts), a subscription moved to a date
 * inside the window is told of it in the same unit: its page is written once, not again by the
 * run's last phase, which would step through the index in date order and write each page of
 * subscriptions once per date (measured: a million due, 107,145 told, 4.6 GB written).
 */
export async function processBatch(tx: Tx, rows: readonly DueRow[], today: string, at: string, horizon?: string): Promise<Counts> {
  const counts = noCounts()
  const plans: BatchPlan[] = []
  const followUps: { id: number; events: readonly string[]; canceled: boolean; dueDate: string }[] = []
  for (const row of rows) {
    const d = decideDue(row, row.has_items, today)
    if (d.kind === 'wait') continue
    counts.processed++
    if (d.kind === 'install') {
      plans.push({ subscription_id: row.id, due_date: d.dueDate, actionable_date: d.nextDate, state: d.state, keeps_state: d.state === row.state && !row.paused, currency: row.currency })
      if (d.events.length > 0) followUps.push({ id: row.id, events: d.events, canceled: d.state === 'canceled', dueDate: d.dueDate })
      if (d.events.includes('subscription.resumed')) counts.resumed++
      if (d.state === 'canceled') counts.canceled++
      if (d.state === 'inactive') counts.ended++
    } else {
      await applyChange(tx, row.id, d, counts)
    }
  }
  const created = await tx.installments.processMany(plans, at)
  counts.installments += created.size
  await deliverOneTimeLines(tx, created)
  for (const f of followUps) {
    // A pending cancellation is complete: older deliveries still open end, the one just made stays.
    if (f.canceled) counts.abandoned += await abandonOpenInstallments(tx, f.id, f.dueDate)
    await recordSubscription(tx, f.id, f.events)
  }
  if (horizon !== undefined && created.size > 0) counts.upcoming += await announceMoved(tx, plans, created, rows, today, horizon)
  return counts
}

/**
 * C17 for the subscriptions this batch moved on: those whose new date falls in the window are
 * marked (the store's compare-and-set, as the last phase's) and get `subscription.upcoming`, their
 * bodies rendered after everything else the batch wrote (one-time lines gone, events recorded).
 */
async function announceMoved(tx: Tx, plans: readonly BatchPlan[], created: ReadonlySet<number>, rows: readonly DueRow[], today: string, horizon: string): Promise<number> {
  const endOf = new Map(rows.map((r) => [r.id, r.end_date]))
  const told = plans.flatMap((p) => {
    if (!created.has(p.subscription_id)) return []
    const date = upcomingDate({ state: p.state, actionable_date: p.actionable_date, end_date: endOf.get(p.subscription_id) ?? null, has_items: true, upcoming_for: null }, today, horizon)
    return date === undefined ? [] : [{ id: p.subscription_id, date }]
  })
  if (told.length === 0) return 0
  const marked = await tx.upcoming.mark(told)
  await tx.events.recordSubscriptions('subscription.upcoming', marked)
  return marked.length
}

/**
 * C17: the installments just made carry their subscriptions' one-time line items (the snapshot
 * took every line); in the same unit those lines go, each with `line_item.deleted` as a request's
 * delete writes it (stamped with the unit's actor, the processor). A subscription that got no
 * installment (skipped, paused, or one already made for the date) keeps its lines.
 */
async function deliverOneTimeLines(tx: Tx, created: ReadonlySet<number>): Promise<void> {
  if (created.size === 0) return
  for (const li of await tx.subscriptions.takeOneTimeLines([...created])) {
    await tx.events.recordJson('line_item.deleted', li.subscription_id, JSON.stringify(renderLineItem(li)))
  }
}

/** Subscriptions whose end date passed (they were not due, or the walk would have ended them). */
export async function endBatch(tx: Tx, subs: readonly Subscription[], today: string): Promise<Counts> {
  const counts = noCounts()
  for (const sub of subs) {
    const d = decideEnded(sub, today)
    if (d.kind === 'wait') continue
    counts.processed++
    await applyChange(tx, sub.id, d, counts)
  }
  return counts
}

/** Retries whose time came: due again, or abandoned when their subscription is canceled. */
export async function retryBatch(tx: Tx, due: readonly Installment[], at: string): Promise<Counts> {
  const counts = noCounts()
  for (const inst of due) {
    // Locked: the state that decides between a retry and its end holds until the unit commits.
    if ((await retryDue(tx, inst, await tx.subscriptions.lock(inst.subscription_id), at)) === 'due') counts.retriesDue++
    else counts.abandoned++
  }
  return counts
}

/** A decision without an installment: end or resume. Counts go to the unit's own `counts`. */
export async function applyChange(tx: Tx, id: number, d: DueDecision, counts: Counts): Promise<void> {
  if (d.kind !== 'end' && d.kind !== 'resume') return
  const sub = await tx.subscriptions.lock(id)
  if (!sub) return
  if (d.kind === 'resume') counts.resumed++
  else if (d.event === 'subscription.canceled') counts.canceled++
  else counts.ended++
  if ((await tx.subscriptions.update(sub, d.patch)).state === 'canceled') counts.abandoned += await abandonOpenInstallments(tx, id)
  await recordSubscription(tx, id, [d.event])
}

/** The subscription as it now stands (C3, rendered by the store as every answer is) in each event. */
async function recordSubscription(tx: Tx, id: number, events: readonly string[]): Promise<void> {
  if (events.length === 0) return
  const body = (await tx.subscriptions.renderJson(id, false))?.body
  if (body === undefined) return
  for (const type of events) await tx.events.recordJson(type, id, body)
}
