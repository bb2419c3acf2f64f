import { RSS_TARGET_MB } from './report.mjs'

/** Issue 17's targets for `npm run bench:webhooks`. */
export const WEBHOOK_TARGETS = { drainPerSecond: 3000, lagP99Ms: 1000 }

export function summarizeWebhooks({ drain, lag, memory, stored, settings, machine }) {
  const drainMet = drain.perSecond >= WEBHOOK_TARGETS.drainPerSecond
  const lagMet = lag.lagMs.p99 !== null && lag.lagMs.p99 <= WEBHOOK_TARGETS.lagP99Ms
  return {
    date: new Date().toISOString(),
    settings,
    machine,
    targets: WEBHOOK_TARGETS,
    drain: { ...drain, met: drainMet },
    lag: { ...lag, met: lagMet },
    memory: { ...memory, rssTargetMB: RSS_TARGET_MB },
    stored,
    met: drainMet && lagMet,
  }
}

export const verdict = (met) => (met ? 'met' : 'MISSED')
const share = (x) => (x === undefined ? 'n/a' : `${Math.round(x * 100)}%`)
export const n = (x) => Math.round(x).toLocaleString('en-US')

export function renderWebhookMarkdown(r) {
  const d = r.drain
  const l = r.lag
  const m = r.memory
  const s = r.settings
  return [
    '| measure | result | target |',
    '| --- | --- | --- |',
    `| backlog drain | ${n(d.backlog)} deliveries in ${d.seconds.toFixed(1)} s: **${n(d.perSecond)}/s** | ≥ ${n(r.targets.drainPerSecond)}/s ${verdict(d.met)} |`,
    `| delivery lag at ${n(l.rate)} events/s | p50 ${l.lagMs.p50} ms, **p99 ${l.lagMs.p99} ms**, max ${l.lagMs.max} ms (${n(l.events)} events) | p99 ≤ ${n(r.targets.lagP99Ms)} ms ${verdict(l.met)} |`,
    `| PATCH latency at ${n(l.rate)}/s (from when due) | p50 ${l.patchLatencyMs.p50.toFixed(1)} ms, p99 ${l.patchLatencyMs.p99.toFixed(1)} ms, max ${l.patchLatencyMs.max.toFixed(1)} ms (due ${l.slowestDueAtS.toFixed(1)} s into the load; ${n(l.over100Ms)} over 100 ms) | |`,
    `| serve peak RSS over both | VmHWM ${m.hwmMB.toFixed(0)} MB (largest VmRSS seen ${m.peakRssMB.toFixed(0)} MB, of it anonymous ≤ ${m.peakAnonMB.toFixed(0)} MB); during the drain ${d.peakRssMB.toFixed(0)} MB | (service: ≤ ${m.rssTargetMB} MB) |`,
    '',
    `- drain: from \`serve\` listening (start-up ${n(d.startupMs)} ms before it) to /metrics showing 0 pending; first delivery ` +
      `${n(d.firstArrivalMs)} ms after listening, last one ${d.receiverSpanS.toFixed(1)} s after the first; the receiver got ` +
      `${n(d.received)} distinct events (${n(d.duplicates)} repeated), /metrics counts ${n(d.delivered)} delivered. ` +
      `The backlog was made by \`replenish process\` (one installment.created per due subscription) while no \`serve\` ran, in ${s.processSeconds.toFixed(1)} s.`,
    `- CPU: serve used ${share(d.cpu.serveShare)} of its core over the drain (${d.serveCpuUsPerDelivery === undefined ? 'n/a' : `${n(d.serveCpuUsPerDelivery)} µs`} per delivery), ` +
      `the receiver ${share(d.cpu.receiverShare)} of its; over the lag load serve used ${share(l.cpu.serveShare)}, the receiver ${share(l.cpu.receiverShare)}.`,
    `- lag: ${n(l.acknowledged)} PATCHes acknowledged in ${l.loadElapsedS.toFixed(1)} s (open loop), ${n(l.received)} events received ` +
      `(${n(l.duplicates)} repeated); lag = arrival at the receiver − the event's created_at (ms precision, same clock). An idle worker of the dispatcher looks for due deliveries every 100 ms, so about 50 ms is the floor of the median.`,
    `- outbox afterwards: ${n(r.stored.delivered)} delivered, ${n(r.stored.pending)} pending, ${n(r.stored.failed)} failed, ` +
      `${n(r.stored.extraAttempts)} attempts beyond the first.`,
    `- ${s.replenish}, synchronous=${s.synchronous}; ${s.pinned ? 'replenish on cpu 0, receiver and load on cpu 1' : 'not pinned'}` +
      `${m.evicted ? '; binary dropped from the page cache before serve started' : ''}` +
      `${s.startedBusy.length > 0 ? `; started while other processes kept the CPUs busy: ${s.startedBusy.join(', ')}` : ''}.`,
    `- ${r.machine.cpu}, ${r.machine.cores} cores, ${r.machine.memory}, Node ${r.machine.node}, SQLite ${r.machine.sqlite}, ` +
      `database on ${r.machine.databaseFilesystem}; load average at the end ${r.machine.loadAverageAtEnd.join(' ')}; ${r.date}`,
    '',
  ].join('\n')
}
