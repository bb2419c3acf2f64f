import { readdirSync, readFileSync } from 'node:fs'
import { labelValue } from '../http/metrics.ts'
import { VERSION } from '../version.ts'

/**
 * `replenish_build_info` and the standard process metrics, under the names every Prometheus
 * client library uses (so stock dashboards and alerts work). CPU, resident memory and start
 * time come from Node on every platform; virtual memory and file descriptors from /proc on
 * Linux, and are left out where /proc cannot be read.
 */
export function processMetricsLines(): string[] {
  const cpu = process.cpuUsage()
  const lines = [
    '# HELP replenish_build_info The running version; always 1.',
    '# TYPE replenish_build_info gauge',
    `replenish_build_info{version="${labelValue(VERSION)}"} 1`,
    '# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.',
    '# TYPE process_cpu_seconds_total counter',
    `process_cpu_seconds_total ${(cpu.user + cpu.system) / 1e6}`,
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${process.memoryUsage.rss()}`,
    '# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.',
    '# TYPE process_start_time_seconds gauge',
    `process_start_time_seconds ${Math.round(performance.timeOrigin) / 1000}`,
  ]
  const linux = process.platform === 'linux' ? linuxProcessStats() : {}
  if (linux.virtualBytes !== undefined) {
    lines.push(
      '# HELP process_virtual_memory_bytes Virtual memory size in bytes.',
      '# TYPE process_virtual_memory_bytes gauge',
      `process_virtual_memory_bytes ${linux.virtualBytes}`,
    )
  }
  if (linux.openFds !== undefined) {
    lines.push('# HELP process_open_fds Number of open file descriptors.', '# TYPE process_open_fds gauge', `process_open_fds ${linux.openFds}`)
  }
  if (linux.maxFds !== undefined) {
    lines.push('# HELP process_max_fds Maximum number of open file descriptors.', '# TYPE process_max_fds gauge', `process_max_fds ${linux.maxFds}`)
  }
  return lines
}

interface LinuxStats {
  virtualBytes?: number
  openFds?: number
  maxFds?: number
}

/** What Linux's /proc/self tells; each reading is left out on its own if it fails. */
export function linuxProcessStats(proc = '/proc/self'): LinuxStats {
  const out: LinuxStats = {}
  try {
    // Field 23 of stat is vsize in bytes; the command name (field 2) may hold spaces, so count
    // from the ')' that closes it.
    const stat = readFileSync(`${proc}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    const vsize = Number(fields[20])
    if (Number.isFinite(vsize)) out.virtualBytes = vsize
  } catch {
    // left out
  }
  try {
    // The directory's listing includes the descriptor that reads it, as in the Go client.
    out.openFds = readdirSync(`${proc}/fd`).length
  } catch {
    // left out
  }
  try {
    const soft = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync(`${proc}/limits`, 'utf8'))?.[1]
    if (soft !== undefined && soft !== 'unlimited') out.maxFds = Number(soft)
  } catch {
    // left out
  }
  return out
}
