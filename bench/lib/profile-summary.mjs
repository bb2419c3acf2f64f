#!/usr/bin/env node
/**
 * The hottest functions of a V8 .cpuprofile (from `node --cpu-prof`), by self time: what the
 * process was executing itself, not what it called. Idle time is left out of the percentages,
 * so they are shares of the time the process was busy.
 *
 *   node bench/lib/profile-summary.mjs /tmp/prof/CPU.*.cpuprofile [--top 25]
 */
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export function summarizeProfile(profile, top = 25) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map()
  const deltas = profile.timeDeltas ?? []
  // Each sample's time is the gap to the next one (V8 records the delta before each sample).
  for (let i = 0; i < profile.samples.length; i++) {
    const us = deltas[i + 1] ?? 0
    const id = profile.samples[i]
    selfUs.set(id, (selfUs.get(id) ?? 0) + Math.max(0, us))
  }
  const groups = new Map()
  let busy = 0
  let idle = 0
  for (const [id, us] of selfUs) {
    const f = byId.get(id).callFrame
    if (f.functionName === '(idle)') {
      idle += us
      continue
    }
    busy += us
    const where = shortUrl(f.url)
    const key = `${f.functionName || '(anonymous)'}\u0000${where}\u0000${f.lineNumber}`
    const g = groups.get(key) ?? { function: f.functionName || '(anonymous)', file: where ? `${where}:${f.lineNumber + 1}` : '', us: 0 }
    g.us += us
    groups.set(key, g)
  }
  const rows = [...groups.values()].sort((a, b) => b.us - a.us).slice(0, top)
  const byFile = new Map()
  for (const g of groups.values()) {
    const file = g.file.replace(/:\d+$/, '') || '(native / V8)'
    byFile.set(file, (byFile.get(file) ?? 0) + g.us)
  }
  return {
    busyMs: busy / 1000,
    idleMs: idle / 1000,
    functions: rows.map((r) => ({ function: r.function, file: r.file, selfMs: r.us / 1000, selfPct: (100 * r.us) / busy })),
    files: [...byFile.entries()].sort((a, b) => b[1] - a[1]).slice(0, 15).map(([file, us]) => ({ file, selfMs: us / 1000, selfPct: (100 * us) / busy })),
  }
}

function shortUrl(url) {
  if (!url) return ''
  if (url.startsWith('file://')) return relative(ROOT, fileURLToPath(url))
  return url
}

export function renderProfile(s) {
  const lines = [`busy ${s.busyMs.toFixed(0)} ms, idle ${s.idleMs.toFixed(0)} ms; self time, share of busy time:`, '']
  lines.push('| self % | self ms | function | file |', '|---:|---:|---|---|')
  for (const f of s.functions) lines.push(`| ${f.selfPct.toFixed(1)} | ${f.selfMs.toFixed(0)} | ${f.function} | ${f.file} |`)
  lines.push('', '| self % | file |', '|---:|---|')
  for (const f of s.files) lines.push(`| ${f.selfPct.toFixed(1)} | ${f.file} |`)
  return lines.join('\n')
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2)
  const topAt = args.indexOf('--top')
  const top = topAt === -1 ? 25 : Number(args.splice(topAt, 2)[1])
  if (args.length === 0) {
    process.stderr.write('usage: node bench/lib/profile-summary.mjs FILE.cpuprofile [--top N]\n')
    process.exit(2)
  }
  for (const file of args) {
    process.stdout.write(`## ${file}\n\n${renderProfile(summarizeProfile(JSON.parse(readFileSync(file, 'utf8')), top))}\n\n`)
  }
}
