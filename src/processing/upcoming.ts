import { upcomingDate, upcomingHorizon } from '../domain/upcoming.ts'
import { PROCESSOR_UNIT, type Store, type Tx } from '../store/api.ts'
import { LockSharing, RowBudget } from './pacing.ts'

/**
 * The processor's last phase (C17): `subscription.upcoming` for every subscription whose next
 * delivery is at most `days` days away, once per (subscription, date). The walk goes through the
 * due index by (floor, id), a unit's share of rows at a time, so a run costs the index entries
 * dated up to the horizon, never the table. Exactly once: each subscription is marked with the
 * date in the unit that writes its event, by a compare-and-set (the store's `mark`), so two runs
 * at once, or two instances, write one event between them; a date that moves gets its own.
 */
export interface UpcomingWalk {
  readonly today: string
  readonly days: number
  /** Most rows one unit reads. */
  readonly batch: number
  /** Runs first in every unit (the processor renews its lease there). */
  readonly inUnit?: ((tx: Tx) => Promise<void>) | undefined
  readonly stopped?: (() => boolean) | undefined
  /** Paces the units against another writer of the database (pacing.ts). */
  readonly sharing?: LockSharing | undefined
}

/** Answers how many subscriptions were told of their next delivery. */
export async function announceUpcoming(store: Store, w: UpcomingWalk): Promise<number> {
  if (w.days <= 0) return 0
  const horizon = upcomingHorizon(w.today, w.days)
  const sharing = w.sharing ?? new LockSharing(() => store.externalChanges())
  const budget = new RowBudget(sharing, w.batch)
  let at = { floor: '', id: 0 }
  let told = 0
  for (let full = true; full && !(w.stopped?.() ?? false); await sharing.pause()) {
    const unit = await store.write(async (tx) => {
      await w.inUnit?.(tx)
      const limit = budget.begin()
      const rows = await tx.upcoming.scan(w.today, horizon, at.floor, at.id, limit)
      const plans = rows.flatMap((r) => {
        const date = upcomingDate(r, w.today, horizon)
        return date === undefined ? [] : [{ id: r.id, date }]
      })
      const marked = await tx.upcoming.mark(plans)
      await tx.events.recordSubscriptions('subscription.upcoming', marked)
      budget.end(rows.length)
      const last = rows[rows.length - 1]
      return { after: last ? { floor: last.due_floor ?? '', id: last.id } : at, full: rows.length === limit, told: marked.length }
    }, PROCESSOR_UNIT)
    at = unit.after
    told += unit.told
    full = unit.full
  }
  return told
}
