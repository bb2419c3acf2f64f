import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, totalmem } from 'node:os'

/**
 * The machine under the bench: what it is, and whether something else is using it. The bench
 * shares its cores with whatever else runs, so it waits for quiet before each measurement.
 */

/** What the results record of the machine they were measured on. */
export function machine(dir, sqlite) {
  const free = spawnSync('free', ['-h'], { encoding: 'utf8' })
  const wrk = spawnSync('wrk', ['-v'], { encoding: 'utf8' })
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: availableParallelism(),
    memory: `${(totalmem() / 2 ** 30).toFixed(1)} GiB`,
    free: free.stdout?.trim() ?? '',
    node: process.version,
    wrk: (wrk.stdout || wrk.stderr || '').split('\n')[0]?.trim() ?? '',
    databaseFilesystem: fsType(dir),
    loadAverageAtEnd: loadavg().map((n) => Number(n.toFixed(2))),
    sqlite,
  }
}

/** Resolves true once the CPUs are under 15% busy over half a second, false after `limitMs`. */
export async function waitQuiet(limitMs, log) {
  const until = Date.now() + limitMs
  let told = false
  while ((await cpuBusyShare(500)) > 0.15) {
    if (Date.now() > until) {
      log('warning: the machine stayed busy; measuring anyway')
      return false
    }
    if (!told) log('other processes are using the CPUs; waiting for them before the next measurement')
    told = true
  }
  return true
}

/** Share of all CPUs' time spent busy over `ms` (from /proc/stat; 0 where there is none). */
export async function cpuBusyShare(ms) {
  const sample = () => {
    try {
      const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number)
      return { idle: f[3] + f[4], total: f.reduce((a, b) => a + b, 0) }
    } catch {
      return undefined
    }
  }
  const a = sample()
  await new Promise((r) => setTimeout(r, ms))
  const b = sample()
  if (!a || !b || b.total === a.total) return 0
  return 1 - (b.idle - a.idle) / (b.total - a.total)
}

/** The file system type of `dir` (ext4, tmpfs: fsync on tmpfs costs nothing, so say where the database was). */
export function fsType(dir) {
  const r = spawnSync('df', ['-T', dir], { encoding: 'utf8' })
  const line = r.stdout?.trim().split('\n')[1]
  return line ? line.split(/\s+/)[1] ?? 'unknown' : 'unknown'
}
