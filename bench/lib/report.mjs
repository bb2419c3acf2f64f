/**
 * Medians of the repetitions, the ratio of each scenario to the bare server of the same run, the
 * issue's targets beside them, and the table in plain text and markdown.
 */

/** Issue 6's targets: same run, server on one core, 64 connections. */
export const TARGETS = {
  get: { ratio: 0.4, p99Ms: 5 },
  patch: { ratio: 0.2, p99Ms: 10 },
  skip: { ratio: 0.2 },
  create: { ratio: 0.12 },
}
export const RSS_TARGET_MB = 150

const median = (values) => {
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export function summarize({ targets, runs, appHwm, appAnon, durability, settings, machine }) {
  const bareRps = median(runs.bare.map((r) => r.rps))
  const rows = targets.map((t) => {
    const rs = runs[t.key]
    const rps = median(rs.map((r) => r.rps))
    const row = {
      key: t.key,
      scenario: t.label,
      rps: Math.round(rps),
      p50Ms: median(rs.map((r) => r.p50_us)) / 1000,
      p99Ms: median(rs.map((r) => r.p99_us)) / 1000,
      ratio: rps / bareRps,
      peakRssMB: Math.max(...rs.map((r) => r.peakRssMB)),
      requests: rs.reduce((n, r) => n + r.requests, 0),
      repetitions: rs.map((r) => ({ rps: Math.round(r.rps), p50Ms: r.p50_us / 1000, p99Ms: r.p99_us / 1000 })),
    }
    const target = TARGETS[t.key]
    if (target) {
      const misses = []
      if (row.ratio < target.ratio) misses.push(`ratio < ${target.ratio}`)
      if (target.p99Ms !== undefined && row.p99Ms > target.p99Ms) misses.push(`p99 > ${target.p99Ms} ms`)
      row.target = `≥ ${target.ratio.toFixed(2)}×${target.p99Ms !== undefined ? `, p99 ≤ ${target.p99Ms} ms` : ''}`
      row.met = misses.length === 0
      row.misses = misses
    }
    return row
  })
  return {
    date: new Date().toISOString(),
    settings,
    machine,
    rows,
    replenishPeakRssMB: appHwm,
    replenishPeakAnonMB: appAnon,
    rssTargetMB: RSS_TARGET_MB,
    rssMet: appHwm <= RSS_TARGET_MB,
    durability,
  }
}

function cells(r) {
  const verdict = r.target === undefined ? '' : `${r.target} ${r.met ? 'met' : `MISSED (${r.misses.join(', ')})`}`
  return [r.scenario, String(r.rps), r.p50Ms.toFixed(2), r.p99Ms.toFixed(2), `${r.ratio.toFixed(2)}×`, r.peakRssMB.toFixed(0), verdict]
}

const HEADER = ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', 'peak RSS MB', 'target']

function footer(result) {
  const s = result.settings
  return [
    `replenish peak RSS over the whole bench (VmHWM): ${result.replenishPeakRssMB.toFixed(0)} MB ` +
      `(target ≤ ${result.rssTargetMB} MB: ${result.rssMet ? 'met' : 'MISSED'}); of it anonymous (heaps, caches) at most ` +
      `${(result.replenishPeakAnonMB ?? 0).toFixed(0)} MB, the rest pages of the executable` +
      (s.evicted ? ', started uncached' : ''),
    `acknowledged writes stored: ${result.durability.text || 'no writes measured'} (${result.durability.ok ? 'all stored' : 'SOME MISSING'})`,
    `${s.replenish}, synchronous=${s.synchronous}; wrk ${s.threads} thread(s), ${s.connections} connections, ` +
      `${s.warmup} s warm-up, ${s.seconds} s × ${s.reps} repetition(s), medians; ` +
      (s.pinned ? `servers on cpu ${s.serverCpu}, wrk on cpu ${s.wrkCpu}` : 'not pinned') +
      (s.busyStarts > 0 ? `; ${s.busyStarts} measurement(s) started while other processes kept the CPUs busy` : ''),
    `${result.machine.cpu}, ${result.machine.cores} cores, ${result.machine.memory}, Node ${result.machine.node}, ` +
      `SQLite ${result.machine.sqlite}, database on ${result.machine.databaseFilesystem}; ` +
      `load average at the end ${result.machine.loadAverageAtEnd.join(' ')}; ${result.date}`,
  ]
}

export function renderTable(result) {
  const rows = [HEADER, ...result.rows.map(cells)]
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  const line = (r) => r.map((c, i) => (i === 0 || i === r.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd()
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line), '', ...footer(result)].join('\n')
}

export function renderMarkdown(result) {
  const row = (r) => `| ${r.join(' | ')} |`
  return [
    row(HEADER),
    row(HEADER.map((_, i) => (i === 0 || i === HEADER.length - 1 ? '---' : '---:'))),
    ...result.rows.map((r) => row(cells(r))),
    '',
    ...footer(result).map((l) => `- ${l}`),
    '',
  ].join('\n')
}
