import { afterFailure } from '../../domain/webhook-schedule.ts'
import type { EmailOutcome, MailAttempt, Store, Tx } from '../../store/api.ts'
import { noPacing, type Pacer } from '../pacer.ts'
import { composeMail, itemIdsOf, withObject, type ClaimedEmail, type MailSettings } from './compose.ts'
import type { MailTransport, SmtpResult } from './transport.ts'

/**
 * The mail sender inside `serve` (C17): takes due mails from the outbox a batch at a time, the
 * earliest due first, renders each as things stand now (the customer's address, language and
 * settings), sends it through the SMTP pool, and writes the results in batches. Requests never
 * wait for it: it runs beside them on the event loop and yields to them when the loop is saturated
 * (the pacer). At least once: a mail stays pending until its result commits, so one sent just
 * before a crash is sent again after the restart (with the same Message-ID). On PostgreSQL the
 * batch is claimed (another instance skips it), so each mail is sent by one instance at a time.
 *
 * Retries follow C10's schedule (src/domain/webhook-schedule.ts) from REPLENISH_MAIL_RETRY_BASE_SECONDS
 * for 3 days after the mail was made; a server's 5xx to the recipient or the message fails the
 * mail at once (trying again cannot change its answer), and so does a mail that must not go.
 */
export interface SenderOptions {
  readonly store: Store
  readonly transport: MailTransport
  readonly settings: MailSettings
  readonly retryBaseSeconds: number
  /**
   * Makes a one-time portal link for a user inside the claiming unit, valid until `expiresAt`,
   * and answers its token (src/admin/portal-sessions.ts makes them for the admin API too).
   */
  readonly createLink: (tx: Tx, userId: number, expiresAt: string, now: string) => Promise<string>
  readonly log: (entry: object) => void
  /** Messages in flight at once (the SMTP pool's connections). */
  readonly concurrency?: number
  /** How often an idle sender looks for due mails (ms). */
  readonly pollMs?: number
  readonly retryWindowMs?: number
  readonly random?: () => number
  readonly pacer?: Pacer
}

export interface Sender {
  start(): void
  /** Stops taking mails; waits up to `graceMs` for those in flight, records what finished. */
  stop(graceMs?: number): Promise<void>
}

const DEFAULT_CONCURRENCY = 4
const DEFAULT_POLL_MS = 500
/** Due mails claimed per unit. */
const FETCH_BATCH = 64
/**
 * Due mails claimed per unit while requests are being answered (the pacer is busy): each claimed
 * upcoming mail writes its portal link in the claiming unit, and a unit of 64 held the writer long
 * enough to show in the requests' p99 (bench:mail).
 */
const BUSY_FETCH_BATCH = 8
/** Results written per unit at most; a partial batch waits this long for company. */
const OUTCOME_BATCH = 256
const OUTCOME_WAIT_MS = 20
/** Catalogue names are read again after this long (a renamed item shows in later mails). */
const NAMES_TTL_MS = 60_000

export function mailSender(o: SenderOptions): Sender {
  const concurrency = o.concurrency ?? DEFAULT_CONCURRENCY
  const pollMs = o.pollMs ?? DEFAULT_POLL_MS
  const random = o.random ?? Math.random
  const pacer = o.pacer ?? noPacing
  const queue: ClaimedEmail[] = []
  /** Sent or being sent, result not committed yet: not to be claimed again meanwhile. */
  const unrecorded = new Set<number>()
  /** Claimed but never tried, or cut off by the stop: handed back when it ends. */
  const untried: number[] = []
  const names = new Map<number, string>()
  const namedAt = new Map<number, number>()
  let outcomes: EmailOutcome[] = []
  let flushTimer: NodeJS.Timeout | undefined
  let flushing: Promise<void> = Promise.resolve()
  let inFlight = 0
  let fetching = false
  let timer: NodeJS.Timeout | undefined
  let paceTimer: NodeJS.Timeout | undefined
  let stopped = false
  let started = false
  const idle = new Set<() => void>()

  const logError = (msg: string, err: unknown): void =>
    o.log({ time: new Date().toISOString(), level: 'error', msg, error: err instanceof Error ? err.message : String(err) })

  const flush = (): Promise<void> => {
    if (flushTimer) clearTimeout(flushTimer)
    flushTimer = undefined
    if (outcomes.length === 0) return flushing
    const batch = outcomes
    outcomes = []
    flushing = flushing
      .then(() => o.store.write((tx) => tx.emails.recordOutcomes(batch)))
      .catch((err: unknown) => logError('mail results could not be written; those mails will be sent again', err))
      .then(() => {
        for (const outcome of batch) unrecorded.delete(outcome.id)
        settleIfIdle()
      })
    return flushing
  }

  const record = (outcome: EmailOutcome): void => {
    outcomes.push(outcome)
    if (outcomes.length >= OUTCOME_BATCH) void flush()
    else flushTimer ??= setTimeout(() => void flush(), OUTCOME_WAIT_MS)
  }

  const pump = (): void => {
    if (stopped) return
    while (inFlight < concurrency && queue.length > 0) {
      const wait = pacer.delay()
      if (wait > 0) {
        paceTimer ??= setTimeout(() => {
          paceTimer = undefined
          pump()
        }, wait)
        break
      }
      void send(queue.shift() as ClaimedEmail)
    }
    if (queue.length < concurrency && !fetching && !timer) void fetch()
  }

  const sleep = (ms: number): void => {
    if (stopped) return settleIfIdle()
    timer = setTimeout(() => {
      timer = undefined
      pump()
    }, Math.max(1, ms))
    settleIfIdle()
  }

  const fetch = async (): Promise<void> => {
    fetching = true
    let found = 0
    try {
      const now = Date.now()
      if (inFlight === 0 && queue.length === 0) {
        // Idle: a read of the pending index first; a unit only when something is due.
        const next = await o.store.emails.nextDueMs()
        if (next === null || next > now) return sleep(next === null ? pollMs : Math.min(pollMs, next - now))
      }
      const skip = [...unrecorded, ...queue.map((m) => m.id)]
      const claimed = await o.store.write((tx) => claim(tx, now, skip))
      found = claimed.length
      await nameItems(claimed)
      if (stopped) untried.push(...claimed.map((m) => m.id))
      else queue.push(...claimed)
    } catch (err) {
      logError('mails could not be read', err)
      return sleep(pollMs * 10)
    } finally {
      fetching = false
    }
    if (found === 0) return sleep(pollMs)
    pump()
  }

  /** The due mails, with a one-time portal link made for each upcoming one that will go (C17). */
  const claim = async (tx: Tx, nowMs: number, skip: readonly number[]): Promise<ClaimedEmail[]> => {
    const due = (await tx.emails.claim(nowMs, pacer.busy ? BUSY_FETCH_BATCH : FETCH_BATCH, skip)).map(withObject)
    const now = new Date(nowMs).toISOString()
    const expiresAt = new Date(nowMs + o.settings.linkHours * 3_600_000).toISOString()
    const out: ClaimedEmail[] = []
    for (const m of due) {
      const goes = m.kind === 'upcoming' && m.email !== null && m.email_notifications && m.object !== undefined
      out.push(goes ? { ...m, link: { token: await o.createLink(tx, m.user_id, expiresAt, now), expiresAt } } : m)
    }
    return out
  }

  /** The catalogue names the batch's subscriptions need, read outside any unit. */
  const nameItems = async (batch: readonly ClaimedEmail[]): Promise<void> => {
    const now = Date.now()
    const missing = new Set(batch.flatMap(itemIdsOf).filter((id) => (namedAt.get(id) ?? -Infinity) < now - NAMES_TTL_MS))
    for (const id of missing) {
      const item = await o.store.catalog.findSubscribable(id)
      namedAt.set(id, now)
      if (item) names.set(id, item.name)
      else names.delete(id)
    }
  }

  const send = async (m: ClaimedEmail): Promise<void> => {
    inFlight++
    unrecorded.add(m.id)
    let composed: ReturnType<typeof composeMail>
    try {
      composed = composeMail(m, names, o.settings, new Date())
    } catch (err) {
      // A bug of ours, not the customer's nor the server's: logged, and the mail failed with it
      // rather than tried again for three days.
      logError(`mail ${m.id} could not be rendered`, err)
      composed = { skip: `not sent: it could not be rendered (${err instanceof Error ? err.message : String(err)})` }
    }
    let result: SmtpResult
    if ('skip' in composed) {
      result = { sent: false, reply: null, error: composed.skip, permanent: true }
    } else {
      result = await o.transport.send(composed.mail).catch((err: unknown) => ({
        sent: false, reply: null, error: err instanceof Error ? err.message : String(err), permanent: false,
      }) as const)
    }
    inFlight--
    const subject = 'skip' in composed ? null : composed.subject
    if (stopped && !result.sent && result.reply === null && !('skip' in composed)) {
      // Cut off by the stop (the pool closed under it): not the server's doing; it goes again.
      unrecorded.delete(m.id)
      untried.push(m.id)
    } else {
      record(outcomeOf(m, result, subject, Date.now()))
    }
    pump()
    settleIfIdle()
  }

  const outcomeOf = (m: ClaimedEmail, r: SmtpResult, subject: string | null, now: number): EmailOutcome => {
    const attempt: MailAttempt = { smtp_reply: r.reply, error: r.sent ? null : r.error, created_at: new Date(now).toISOString() }
    const base = { id: m.id, attempt, to: m.email, subject, at_ms: now }
    if (r.sent) return { ...base, state: 'sent', due_ms: null, retries: m.retries }
    const retries = m.retries + 1
    if (r.permanent) return { ...base, state: 'failed', due_ms: null, retries }
    const next = afterFailure({
      createdMs: m.created_ms, failures: retries, nowMs: now, baseSeconds: o.retryBaseSeconds, random: random(),
      ...(o.retryWindowMs !== undefined ? { windowMs: o.retryWindowMs } : {}),
    })
    return next.state === 'failed' ? { ...base, state: 'failed', due_ms: null, retries } : { ...base, state: 'pending', due_ms: next.dueMs, retries }
  }

  const settleIfIdle = (): void => {
    if (inFlight === 0 && !fetching) for (const f of idle) f()
  }

  const whenIdle = (): Promise<void> => {
    if (inFlight === 0 && !fetching) return Promise.resolve()
    return new Promise((resolve) => {
      const f = (): void => {
        idle.delete(f)
        resolve()
      }
      idle.add(f)
    })
  }

  return {
    start() {
      if (started || stopped) return
      started = true
      pump()
    },
    async stop(graceMs = 2000) {
      stopped = true
      if (timer) clearTimeout(timer)
      if (paceTimer) clearTimeout(paceTimer)
      untried.push(...queue.map((m) => m.id))
      queue.length = 0
      let graceTimer: NodeJS.Timeout | undefined
      await Promise.race([whenIdle(), new Promise((resolve) => (graceTimer = setTimeout(resolve, graceMs)))])
      clearTimeout(graceTimer)
      // Past the grace, what is still in flight is cut off and stays pending.
      o.transport.close(true)
      await whenIdle()
      await flush()
      if (untried.length > 0) {
        await o.store.write((tx) => tx.emails.release(untried, Date.now()))
          .catch((err: unknown) => logError('mails claimed but not sent could not be handed back; they go again when their claim runs out', err))
      }
    },
  }
}
