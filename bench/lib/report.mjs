/**
 * Medians of the repetitions, the ratio of each scenario to the bare server of the same run, the
 * issue's targets beside them, and the table in plain text and markdown.
 */

/**
 * Issue 6's targets: same run, server on one core, 64 connections; a ratio is to the bare server
 * unless `of` names another scenario (issue 17: PATCH with a webhook endpoint against PATCH).
 */
export const TARGETS = {
  get: { ratio: 0.4, p99Ms: 5 },
  patch: { ratio: 0.2, p99Ms: 10 },
  'patch-webhook': { ratio: 0.7, of: 'patch' },
  skip: { ratio: 0.2 },
  create: { ratio: 0.12 },
}
export const RSS_TARGET_MB = 150
/** Issue 17: no scenario may lose more than this against its last recorded run (latest.json). */
export const REGRESSION_LIMIT = 0.05

/**
 * What a run's files are called after the time stamp, and so which recorded run it is compared
 * with: each backend and instance count apart (`latest.*` is SQLite's, `latest-postgres.*`
 * PostgreSQL's, `latest-postgres-2-instances.*` two instances on it).
 */
export function variantOf({ backend, instances = 1 }) {
  return backend === 'postgres' ? `-postgres${instances > 1 ? `-${instances}-instances` : ''}` : ''
}

/** The median of the defined values (a run without /proc has none: undefined). */
const medianOf = (values) => {
  const known = values.filter((v) => v !== undefined && Number.isFinite(v))
  return known.length === 0 ? undefined : median(known)
}

const median = (values) => {
  const s = [...values].sort((a, b) => a - b)
  const mid = Math.floor(s.length / 2)
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2
}

export function summarize({ targets, runs, previous, appHwm, appAnon, durability, settings, machine }) {
  const bareRps = median(runs.bare.map((r) => r.rps))
  // Against another scenario: the median of the repetitions' own ratios. Repetitions interleave the
  // scenarios, so each pair ran back to back: a busy minute of the machine hits both sides of it.
  const pairedRatio = (key, of) => (runs[of] ? median(runs[key].map((r, i) => r.rps / runs[of][i].rps)) : undefined)
  const before = new Map((previous?.rows ?? []).map((r) => [r.key, r.rps]))
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
      cpuUs: medianOf(rs.map((r) => r.cpuUs)),
      dbCpuUs: medianOf(rs.map((r) => r.dbCpuUs)),
      repetitions: rs.map((r) => ({ rps: Math.round(r.rps), p50Ms: r.p50_us / 1000, p99Ms: r.p99_us / 1000, cpuUs: r.cpuUs, dbCpuUs: r.dbCpuUs })),
    }
    const last = before.get(t.key)
    if (last !== undefined) {
      row.lastRps = last
      row.change = rps / last - 1
      row.regressed = row.change < -REGRESSION_LIMIT
    }
    const target = TARGETS[t.key]
    const ratio = target?.of === undefined ? row.ratio : pairedRatio(t.key, target.of)
    if (target && ratio !== undefined) {
      if (target.of !== undefined) row[`ratioTo_${target.of}`] = ratio
      const misses = []
      if (ratio < target.ratio) misses.push(`ratio < ${target.ratio}${target.of ? ` (${ratio.toFixed(2)}× ${target.of})` : ''}`)
      if (target.p99Ms !== undefined && row.p99Ms > target.p99Ms) misses.push(`p99 > ${target.p99Ms} ms`)
      row.target = `≥ ${target.ratio.toFixed(2)}×${target.of ? ` ${target.of}` : ''}${target.p99Ms !== undefined ? `, p99 ≤ ${target.p99Ms} ms` : ''}`
      row.met = misses.length === 0
      row.misses = misses
    }
    const hooks = rs.map((r) => r.webhook).filter((w) => w !== undefined)
    if (hooks.length > 0) row.webhooks = webhookSummary(hooks, target?.of ? row[`ratioTo_${target.of}`] : undefined)
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
    regressions: rows.filter((r) => r.regressed).map((r) => r.key),
    previousDate: previous?.date,
    previousSettings: previous?.settings,
  }
}

/** The webhook scenario's repetitions: events received against PATCHes acknowledged, and the drains after. */
function webhookSummary(hooks, ratioToPatch) {
  const drains = hooks.filter((w) => w.drainPerSecond !== null && w.backlogAtEnd > 0)
  return {
    ratioToPatch,
    acknowledged: hooks.reduce((n, w) => n + w.acknowledged, 0),
    received: hooks.reduce((n, w) => n + w.received, 0),
    duplicates: hooks.reduce((n, w) => n + w.duplicates, 0),
    receivedDuringLoadShare: hooks.reduce((n, w) => n + w.receivedDuringLoad, 0) / hooks.reduce((n, w) => n + w.acknowledged, 0),
    drainPerSecond: drains.length > 0 ? median(drains.map((w) => w.drainPerSecond)) : null,
    drains: hooks.map((w) => ({ backlog: w.backlogAtEnd, seconds: w.drainSeconds, perSecond: w.drainPerSecond === null ? null : Math.round(w.drainPerSecond) })),
  }
}

function cells(r, postgres) {
  const verdict = r.target === undefined ? '' : `${r.target} ${r.met ? 'met' : `MISSED (${r.misses.join(', ')})`}`
  const change = r.change === undefined ? '' : `${r.change >= 0 ? '+' : ''}${(r.change * 100).toFixed(1)}%${r.regressed ? ' LOST' : ''}`
  const cpu = (us) => (us === undefined ? '' : us.toFixed(0))
  return [r.scenario, String(r.rps), r.p50Ms.toFixed(2), r.p99Ms.toFixed(2), `${r.ratio.toFixed(2)}×`, cpu(r.cpuUs), ...(postgres ? [cpu(r.dbCpuUs)] : []),
    r.peakRssMB.toFixed(0), change, verdict]
}

/** The columns; a PostgreSQL run of the bench's own cluster adds the database's CPU per request. */
const headerOf = (postgres) => ['scenario', 'req/s', 'p50 ms', 'p99 ms', 'ratio to bare', 'CPU µs/req', ...(postgres ? ['PostgreSQL CPU µs/req'] : []),
  'peak RSS MB', 'vs last', 'target']
const hasDatabaseCpu = (result) => result.rows.some((r) => r.dbCpuUs !== undefined)

/** Whether this run was measured like the recorded one it is compared with (seconds, repetitions, load, pinning; on PostgreSQL the server, pool and instances too). */
function sameSettings(result) {
  const a = result.settings
  const b = result.previousSettings ?? {}
  const postgres = a.backend === 'postgres' ? ['postgres', 'pool', 'instances'] : []
  return ['seconds', 'reps', 'warmup', 'connections', 'threads', 'pinned', 'replenish', ...postgres].every((k) => a[k] === b[k])
}

/** The webhook scenario's line: its ratio to PATCH, the check of every event, and the drains. */
function webhookLines(result) {
  return result.rows.filter((r) => r.webhooks).map((r) => {
    const w = r.webhooks
    const drains = w.drains.map((d) => `${d.backlog} in ${d.seconds.toFixed(1)} s`).join(', ')
    return `${r.scenario}: ${w.ratioToPatch === undefined ? '' : `${w.ratioToPatch.toFixed(2)}× PATCH without webhooks (median of the repetitions' ratios); `}` +
      `receiver got ${w.received} events for ${w.acknowledged} PATCHes acknowledged (${w.received >= w.acknowledged ? 'all delivered' : 'SOME MISSING'}` +
      `, ${w.duplicates} repeated), ${(w.receivedDuringLoadShare * 100).toFixed(0)}% of them while the load ran; ` +
      `backlog left at the end of each repetition drained at ${w.drainPerSecond === null ? 'n/a' : `${Math.round(w.drainPerSecond)}/s`} (median; ${drains})`
  })
}

function footer(result) {
  const s = result.settings
  return [
    `replenish peak RSS over the whole bench (VmHWM): ${result.replenishPeakRssMB.toFixed(0)} MB ` +
      `(target ≤ ${result.rssTargetMB} MB: ${result.rssMet ? 'met' : 'MISSED'}); of it anonymous (heaps, caches) at most ` +
      `${(result.replenishPeakAnonMB ?? 0).toFixed(0)} MB, the rest pages of the executable` +
      (s.evicted ? ', started uncached' : ''),
    `acknowledged writes stored: ${result.durability.text || 'no writes measured'} (${result.durability.ok ? 'all stored' : 'SOME MISSING'})`,
    ...webhookLines(result),
    result.previousDate === undefined
      ? `vs last: no recorded run (bench/results/latest${variantOf(s)}.json) to compare with`
      : `vs last: req/s against the last recorded full run (${result.previousDate})${sameSettings(result) ? '' : ', measured with other settings than this run, so only a rough guide'}; ` +
        (result.regressions.length === 0 ? `none lost more than ${REGRESSION_LIMIT * 100}%` : `LOST more than ${REGRESSION_LIMIT * 100}%: ${result.regressions.join(', ')}`),
    `${s.replenish}, ${s.backend === 'postgres' ? `PostgreSQL ${s.synchronous}, REPLENISH_DB_POOL=${s.pool}, ${s.instances} instance(s)` : `synchronous=${s.synchronous}`}; ` +
      `wrk ${s.threads} thread(s)${s.instances > 1 ? ` per process, one process per instance,` : ','} ${s.connections} connections${s.instances > 1 ? ' in all' : ''}, ` +
      `${s.warmup} s warm-up, ${s.seconds} s × ${s.reps} repetition(s), medians; ` +
      (s.pinned ? `servers on cpu ${s.serverCpu}${s.postgresCpu === undefined ? '' : `, PostgreSQL on cpu ${s.postgresCpu}`}, wrk on cpu ${s.wrkCpu}` : 'not pinned') +
      (s.cpuPerRequest ? '; CPU µs/req: the servers\' (and PostgreSQL\'s processes\') user + system time over the requests answered' : '') +
      (s.busyStarts > 0 ? `; ${s.busyStarts} measurement(s) started while other processes kept the CPUs busy` : ''),
    `${result.machine.cpu}, ${result.machine.cores} cores, ${result.machine.memory}, Node ${result.machine.node}, ` +
      `${s.backend === 'postgres' ? `PostgreSQL ${result.machine.postgres}` : `SQLite ${result.machine.sqlite}`}, database on ${result.machine.databaseFilesystem}; ` +
      `load average at the end ${result.machine.loadAverageAtEnd.join(' ')}; ${result.date}`,
  ]
}

/**
 * What a PostgreSQL run is, above its table (a SQLite run has none: its footer says it all): the
 * server, and where it ran, since it shares the servers' core.
 */
function heading(result) {
  const s = result.settings
  if (s.backend !== 'postgres') return []
  const where = s.postgres === 'cluster'
    ? `the bench's own cluster (${s.synchronous}, full_page_writes=on, max_connections ${s.maxConnections}), ` +
      (s.postgresCpu === undefined
        ? 'not pinned'
        : s.postgresCpu !== s.serverCpu
          ? `pinned to cpu ${s.postgresCpu}, a core of its own; replenish and the bare server on cpu ${s.serverCpu}, wrk on cpu ${s.wrkCpu}`
          : `pinned to cpu ${s.postgresCpu} with replenish and the bare server, so wrk keeps cpu ${s.wrkCpu} to itself: ` +
            'replenish and its database share one core, as replenish and its SQLite file do in the SQLite run')
    : `an existing server (${s.synchronous}; not pinned, and its cores are not counted here)`
  return [
    `# replenish on PostgreSQL ${result.machine.postgres}${s.instances > 1 ? `, ${s.instances} instances` : ''}`,
    '',
    `The same scenarios as the SQLite run, on ${where}. Ratios are to the bare node:http server of this run.`,
    '',
  ]
}

export function renderTable(result) {
  const postgres = hasDatabaseCpu(result)
  const HEADER = headerOf(postgres)
  const rows = [HEADER, ...result.rows.map((r) => cells(r, postgres))]
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => r[i].length)))
  const line = (r) => r.map((c, i) => (i === 0 || i === r.length - 1 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ').trimEnd()
  return [...heading(result), line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line), '', ...footer(result)].join('\n')
}

export function renderMarkdown(result) {
  const postgres = hasDatabaseCpu(result)
  const HEADER = headerOf(postgres)
  const row = (r) => `| ${r.join(' | ')} |`
  return [
    ...heading(result),
    row(HEADER),
    row(HEADER.map((_, i) => (i === 0 || i === HEADER.length - 1 ? '---' : '---:'))),
    ...result.rows.map((r) => row(cells(r, postgres))),
    '',
    ...footer(result).map((l) => `- ${l}`),
    '',
  ].join('\n')
}
