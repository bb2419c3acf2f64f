import { DatabaseSync } from 'node:sqlite'
import { receiverStats } from './webhooks.mjs'
import { n, verdict } from './webhook-report.mjs'

/**
 * `npm run bench:webhooks -- --flaky` (issue 25): delivery to a receiver that leaves 3 % of the
 * requests unanswered (each then holds a socket for the 10 s time-out) and answers 8 % with a
 * 500, retries at a 1 s base (1 s, 6 s, 36 s, …). What it measures, and what the targets are:
 *
 * - drain: a backlog made while no `serve` ran, posted once `serve` starts. Deliveries/s is the
 *   backlog over the time until the receiver had a request for every one of its events (a
 *   first attempt each, whatever the answer); beside it, when 90 % had been accepted (answered
 *   200). Not "until nothing is pending", nor 99 % accepted: by design 0.11² ≈ 1.2 % of the
 *   deliveries fail twice running and wait for their second retry (6 s, or more after a 10 s
 *   time-out), 0.11⁴ wait minutes for their fourth; that is the schedule, not the dispatcher.
 * - retries on schedule: for the deliveries of the events made at a steady rate after the drain,
 *   each retry's gap after the attempt before it ended, against its nominal delay (±20 % jitter),
 *   read from the delivery log in the database.
 */
export const FLAKY = { hang: 0.03, fail: 0.08, retryBaseSeconds: 1 }
export const FLAKY_TARGETS = { deliveriesPerSecond: 1000, lateRetrySeconds: 1 }

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Polls the receiver (counts only) until it has accepted `expected` events, or 30 s after it had
 * 99 % of them; fails when 99 % take longer than `limitMs`. Notes when the first requests of all
 * of them had come and when 50/90/99 % were accepted.
 */
export async function flakyDrain({ receiverUrl, expected, limitMs, startedAt, onProgress }) {
  const until = performance.now() + limitMs
  const marks = { allAttemptedS: null, accepted50S: null, accepted90S: null, accepted99S: null, acceptedAllS: null }
  let acceptedAtAllAttempted = null
  let told = performance.now()
  let got
  for (;;) {
    got = await receiverStats(`${receiverUrl}`, true)
    const now = performance.now()
    const at = (now - startedAt) / 1000
    if (got.unsigned > 0) throw new Error(`the receiver got ${got.unsigned} unsigned requests`)
    if (marks.allAttemptedS === null && got.distinct >= expected) {
      marks.allAttemptedS = at
      acceptedAtAllAttempted = got.accepted
    }
    for (const [key, share] of [['accepted50S', 0.5], ['accepted90S', 0.9], ['accepted99S', 0.99], ['acceptedAllS', 1]]) {
      if (marks[key] === null && got.accepted >= expected * share) marks[key] = at
    }
    // The last few wait for their third or fourth retry (36 s, 216 s): not a measure of the drain.
    if (marks.acceptedAllS !== null || (marks.accepted99S !== null && at > marks.accepted99S + 30)) break
    if (now > until) throw new Error(`the receiver accepted ${got.accepted} of ${expected} events within ${limitMs / 1000} s`)
    if (onProgress && now - told > 5000) {
      onProgress(got)
      told = now
    }
    await sleep(50)
  }
  return {
    ...marks,
    acceptedAtAllAttempted,
    deliveriesPerSecond: expected / marks.allAttemptedS,
    accepted90PerSecond: (expected * 0.9) / marks.accepted90S,
    receiver: got,
  }
}

/** Waits until the receiver accepted `expected` events, or `limitMs` passed; answers its full stats. */
export async function acceptedOrTimeout(receiverUrl, expected, limitMs) {
  const until = performance.now() + limitMs
  while ((await receiverStats(receiverUrl, true)).accepted < expected && performance.now() < until) await sleep(100)
  return receiverStats(receiverUrl)
}

export function lastDeliveryId(file) {
  const db = new DatabaseSync(file, { readOnly: true })
  try {
    return db.prepare('SELECT coalesce(max(id), 0) AS id FROM webhook_deliveries').get().id
  } finally {
    db.close()
  }
}

const percentile = (sorted, p) => (sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)])

/**
 * Each scheduled retry of the deliveries after `afterId`: its gap after the end of the attempt
 * before it, by retry number, in seconds and as a share of its nominal delay (base × 6^(n−1)).
 * The schedule draws each delay within ±20 %, so on time is 0.8–1.2× nominal; `lateS` is how far
 * past 1.2× a retry went.
 */
export function retryGaps(file, afterId, baseSeconds) {
  const db = new DatabaseSync(file, { readOnly: true })
  const byRetry = new Map()
  let deliveries = 0
  try {
    for (const { attempts } of db.prepare('SELECT attempts FROM webhook_deliveries WHERE id > ?').iterate(afterId)) {
      deliveries++
      const scheduled = JSON.parse(attempts).filter((a) => !a.redelivery)
      for (let i = 1; i < scheduled.length; i++) {
        const before = scheduled[i - 1]
        const gapS = (Date.parse(scheduled[i].created_at) - (Date.parse(before.created_at) + before.duration_ms)) / 1000
        const nominalS = baseSeconds * 6 ** (i - 1)
        const list = byRetry.get(i) ?? []
        list.push({ gapS, ratio: gapS / nominalS, lateS: Math.max(0, gapS - 1.2 * nominalS), afterHang: before.status_code === null })
        byRetry.set(i, list)
      }
    }
  } finally {
    db.close()
  }
  const retries = [...byRetry.entries()].sort(([a], [b]) => a - b).map(([retry, list]) => {
    const gaps = list.map((g) => g.gapS).sort((a, b) => a - b)
    const late = list.map((g) => g.lateS).sort((a, b) => a - b)
    return {
      retry,
      nominalS: baseSeconds * 6 ** (retry - 1),
      count: list.length,
      afterHang: list.filter((g) => g.afterHang).length,
      gapS: { min: gaps[0], p50: percentile(gaps, 50), p99: percentile(gaps, 99), max: gaps[gaps.length - 1] },
      lateS: { p99: percentile(late, 99), max: late[late.length - 1] },
    }
  })
  return { deliveries, retries }
}

export function summarizeFlaky({ drain, lag, retries, memory, stored, settings, machine }) {
  const drainMet = drain.deliveriesPerSecond >= FLAKY_TARGETS.deliveriesPerSecond
  const worstLate = Math.max(0, ...retries.retries.map((r) => r.lateS.max))
  const retriesMet = retries.retries.length > 0 && worstLate <= FLAKY_TARGETS.lateRetrySeconds
  return {
    date: new Date().toISOString(),
    scenario: 'flaky receiver',
    receiver: FLAKY,
    settings,
    machine,
    targets: FLAKY_TARGETS,
    drain: { ...drain, met: drainMet },
    lag,
    retries: { ...retries, worstLateS: worstLate, met: retriesMet },
    memory,
    stored,
    met: drainMet && retriesMet,
  }
}

const s1 = (x) => (x === null || x === undefined ? 'n/a' : `${x.toFixed(1)} s`)
const s2 = (x) => (x === null || x === undefined ? 'n/a' : x.toFixed(2))

export function renderFlakyMarkdown(r) {
  const d = r.drain
  const l = r.lag
  const s = r.settings
  const rx = d.receiver
  return [
    `A receiver that leaves ${Math.round(r.receiver.hang * 100)} % of requests unanswered and answers ${Math.round(r.receiver.fail * 100)} % with 500; retries at a ${r.receiver.retryBaseSeconds} s base.`,
    '',
    '| measure | result | target |',
    '| --- | --- | --- |',
    `| backlog drain | ${n(d.backlog)} events, each posted (a first attempt) within ${s1(d.allAttemptedS)}: **${n(d.deliveriesPerSecond)} deliveries/s**; 90 % accepted after ${s1(d.accepted90S)} (${n(d.accepted90PerSecond)}/s) | ≥ ${n(r.targets.deliveriesPerSecond)}/s ${verdict(d.met)} |`,
    `| retries on schedule (events at ${n(l.rate)}/s) | ${r.retries.retries.map((x) => `retry ${x.retry} (nominal ${x.nominalS} s, ${n(x.count)}): ${s2(x.gapS.min)}–${s2(x.gapS.max)} s, p50 ${s2(x.gapS.p50)} s`).join('; ')} | at most ${r.targets.lateRetrySeconds} s past +20 %: worst ${s2(r.retries.worstLateS)} s ${verdict(r.retries.met)} |`,
    `| lag at ${n(l.rate)} events/s | first request p50 ${l.lagMs.p50} ms, p99 ${l.lagMs.p99} ms; accepted p50 ${l.acceptedLagMs.p50} ms, p90 ${l.acceptedLagMs.p90} ms, p99 ${l.acceptedLagMs.p99} ms (${n(l.acceptedLagMs.count)} of ${n(l.acknowledged)} events accepted by the end) | |`,
    `| serve peak RSS | VmHWM ${r.memory.hwmMB.toFixed(0)} MB | |`,
    '',
    `- drain: times from \`serve\` listening; 50 % accepted after ${s1(d.accepted50S)}, 99 % after ${s1(d.accepted99S)}, all ${d.acceptedAllS === null ? 'not within the wait (their retries are minutes away)' : `after ${s1(d.acceptedAllS)}`}. ` +
      `The receiver got ${n(rx.requests)} requests for ${n(rx.distinct)} events: ${n(rx.hung)} left unanswered, ${n(rx.failed)} answered 500. ` +
      `serve used ${d.serveCpuS === undefined ? 'n/a' : `${d.serveCpuS.toFixed(1)} s`} of CPU over the drain and its wait for the last retries.`,
    `- retries: ${n(r.retries.deliveries)} deliveries of the steady load; a retry's gap is from the end of the attempt before it (a hanging one ends at the 10 s time-out) to the next attempt's start. ` +
      `Retries after a hanging attempt: ${r.retries.retries.map((x) => n(x.afterHang)).join(' / ')}.`,
    `- outbox at the end: ${n(r.stored.delivered)} delivered, ${n(r.stored.pending)} pending (retries still ahead), ${n(r.stored.failed)} failed.`,
    `- ${s.replenish}, synchronous=${s.synchronous}; ${s.pinned ? 'replenish on cpu 0, receiver and load on cpu 1' : 'not pinned'}` +
      `${s.startedBusy.length > 0 ? `; started while other processes kept the CPUs busy: ${s.startedBusy.join(', ')}` : ''}.`,
    `- ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memory}, Node ${r.machine.node}, SQLite ${r.machine.sqlite}; load average at the end ${r.machine.loadAverageAtEnd.join(' ')}; ${r.date}`,
    '',
  ].join('\n')
}
