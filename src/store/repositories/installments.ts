/** Installments, their attempts, and the processor's reads and batch writes (C9): the repository's records and interfaces, exported by ../api.ts. */
import type { Attempt, Installment, InstallmentState } from '../../domain/installment.ts'
import type { DueFields } from '../../domain/processing.ts'
import type { State, Subscription } from '../../domain/types.ts'

export interface AdminInstallmentFilter {
  readonly after: number
  readonly limit: number
  readonly state?: string | undefined
  readonly subscriptionId?: number | undefined
  readonly userId?: number | undefined
  /** Both bounds exclusive, as `actionableBefore` is (decisions.md, "Admin search"). */
  readonly dueAfter?: string | undefined
  readonly dueBefore?: string | undefined
}

export interface InstallmentChange {
  readonly state: InstallmentState
  readonly retry_at: string | null
  readonly first_failed_at: string | null
  readonly replayable_attempt_id: number | null
}

/** What the processor needs of a due subscription, and where it sits in the due index (its floor). */
export type DueRow = DueFields & { readonly id: number; readonly has_items: boolean; readonly due_floor: string | null; readonly currency: string }

/** One installment to make, and the subscription's state and next date once it is made. */
export interface BatchPlan {
  readonly subscription_id: number
  readonly due_date: string
  readonly actionable_date: string | null
  readonly state: State
  /**
   * The subscription already has `state` and is not paused: the store may leave both columns
   * alone (SQLite then touches no index keyed by them: migration 10's recurring index).
   */
  readonly keeps_state?: boolean
  /** The subscription's currency, when the caller read it: the store counts the installments made by it (C16's report) without reading them back. */
  readonly currency?: string
}

export interface InstallmentReads {
  find(id: number): Promise<Installment | undefined>
  listOfSubscription(subscriptionId: number, offset: number, limit: number): Promise<Installment[]>
  countOfSubscription(subscriptionId: number): Promise<number>
  adminList(f: AdminInstallmentFilter): Promise<Installment[]>
  /** Attempts of these installments, oldest first. */
  attemptsOf(installmentIds: readonly number[]): Promise<Map<number, Attempt[]>>
  countByState(): Promise<Record<InstallmentState, number>>
  countRetriesDue(nowIso: string): Promise<number>
  /** The oldest date of a subscription that is due and has something to deliver (/metrics, /readyz). */
  oldestDue(today: string): Promise<string | null>
  /**
   * Acting subscriptions whose floor (the due index's key) is up to `today`: the due ones, and
   * those a skip moved past today whose floors were not lifted yet (`liftDueFloors`).
   */
  countDue(today: string): Promise<number>
  maxSubscriptionId(): Promise<number>
}

export interface InstallmentsTx extends InstallmentReads {
  /** Due subscriptions with ids in (afterId, uptoId], in id order. */
  dueById(today: string, afterId: number, uptoId: number, limit: number): Promise<DueRow[]>
  /** Due subscriptions after the cursor (due_floor, id), in that order. */
  dueByDate(today: string, afterFloor: string, afterId: number, limit: number): Promise<DueRow[]>
  /** Lifts at most `limit` floors that have come due to their rows' dates; answers how many. */
  liftDueFloors(today: string, limit: number): Promise<number>
  /** Subscriptions whose end date passed before today, after the cursor (end_date, id). */
  endingBatch(today: string, afterDate: string, afterId: number, limit: number): Promise<Subscription[]>
  /** Installments, subscriptions moved on and their events; answers the subscriptions that got one. */
  processMany(plans: readonly BatchPlan[], at: string): Promise<ReadonlySet<number>>
  change(id: number, c: InstallmentChange, at: string): Promise<Installment>
  retriesDue(nowIso: string, limit: number): Promise<Installment[]>
  openOf(subscriptionId: number): Promise<Installment[]>
  latestIdOf(subscriptionId: number): Promise<number | undefined>
  lastAttempt(installmentId: number): Promise<Attempt | undefined>
  addAttempt(installmentId: number, result: string, orderReference: string | null, message: string | null, at: string): Promise<Attempt>
  /** Sets `processing_state`; true when it changed. */
  setProcessingState(subscriptionId: number, state: string, at: string): Promise<boolean>
}
