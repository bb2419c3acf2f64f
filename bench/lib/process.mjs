import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, readdirSync } from 'node:fs'

/** True when `name` runs (`which` is not everywhere, so ask the command itself). */
export function hasCommand(name, versionArg = '--version') {
  const r = spawnSync(name, [versionArg], { stdio: 'ignore' })
  return r.error === undefined
}

/** `taskset -c <cpu> cmd …` when pinning, else `cmd …`; taskset execs, so the pid stays the server's. */
export function pinned(cpu, command, args) {
  return cpu === undefined ? [command, args] : ['taskset', ['-c', String(cpu), command, ...args]]
}

/**
 * Starts a server and resolves once it prints `listening on <url>`. Its stderr is kept (the last
 * lines are shown if it dies), and `stop()` sends SIGTERM and waits for the exit.
 */
export function startServer(name, command, args, options) {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.on('data', (chunk) => {
    stderr = (stderr + chunk).slice(-4000)
  })
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })))
  return new Promise((resolve, reject) => {
    let stdout = ''
    let started = false
    const timer = setTimeout(() => fail(new Error(`${name} did not start within 30 s`)), 30_000)
    const fail = (err) => {
      if (started) return
      clearTimeout(timer)
      child.kill('SIGKILL')
      reject(new Error(`${err.message}\n${stderr}`))
    }
    child.once('error', fail)
    void exited.then(({ code, signal }) => fail(new Error(`${name} exited (${code ?? signal}) before listening`)))
    child.stdout.on('data', (chunk) => {
      stdout += chunk
      const m = /listening on (http:\/\/\S+)/.exec(stdout)
      if (!m) return
      started = true
      clearTimeout(timer)
      child.stdout.removeAllListeners('data')
      child.stdout.resume()
      resolve({
        name,
        pid: child.pid,
        url: m[1],
        stderr: () => stderr,
        alive: () => child.exitCode === null && child.signalCode === null,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
          const kill = setTimeout(() => child.kill('SIGKILL'), 15_000)
          const result = await exited
          clearTimeout(kill)
          return result
        },
      })
    })
  })
}

/**
 * VmHWM and VmRSS of a process in MB (10^6 bytes, as the targets count), from /proc (Linux), with
 * RssAnon: the part that is the process's own memory (heaps, caches), not pages of its executable
 * mapped from the page cache. Undefined when unreadable.
 */
export function memoryOf(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN)
    return { hwmMB: (kib('VmHWM') * 1024) / 1e6, rssMB: (kib('VmRSS') * 1024) / 1e6, anonMB: (kib('RssAnon') * 1024) / 1e6 }
  } catch {
    return undefined
  }
}

/**
 * Drops a file's pages from the page cache (GNU dd: `iflag=nocache count=0` covers the whole
 * file). A binary that was just built sits wholly in the page cache, and the kernel's fault-around
 * then maps up to 16 cached neighbours of every page the process touches: about 20 MB more
 * resident text than the same binary started from disk. Dropping them first makes the peak RSS
 * the same whether the build ran a second or a week ago. Answers whether it worked.
 */
export function evictFromPageCache(file) {
  const r = spawnSync('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none'], { stdio: 'ignore' })
  return r.error === undefined && r.status === 0
}

/**
 * Polls a process's memory while a scenario runs: the largest VmRSS seen during the scenario,
 * and VmHWM, the kernel's own high-water mark over the process's whole life (it catches peaks
 * between two polls).
 */
export function memoryPoller(pid, everyMs = 200) {
  let peakRss = 0
  let hwm = 0
  let peakAnon = 0
  const poll = () => {
    const m = memoryOf(pid)
    if (!m) return
    if (m.rssMB > peakRss) peakRss = m.rssMB
    if (m.hwmMB > hwm) hwm = m.hwmMB
    if (m.anonMB > peakAnon) peakAnon = m.anonMB
  }
  poll()
  const timer = setInterval(poll, everyMs)
  return {
    /** Stops polling and returns { peakRssMB, hwmMB, peakAnonMB }. */
    stop() {
      clearInterval(timer)
      poll()
      return { peakRssMB: peakRss, hwmMB: hwm, peakAnonMB: peakAnon }
    },
  }
}

/**
 * CPU time (user + system) a process has used so far, in seconds, from /proc/<pid>/stat (Linux;
 * undefined elsewhere). Fields 14 and 15 count clock ticks, 100 a second on Linux (USER_HZ).
 */
export function cpuSecondsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces: count fields from after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return undefined
  }
}

/**
 * CPU seconds of a process and of every process below it (PostgreSQL's postmaster and its
 * backends; taskset execs, so a pinned server is its own pid), from /proc. A backend that exited
 * meanwhile is lost from the sum (its time moves to its parent's cutime only once reaped, which
 * /proc/<pid>/stat fields 16–17 count; they are added too).
 */
export function cpuSecondsOfTree(pid) {
  let entries
  try {
    entries = readdirSync('/proc').filter((e) => /^\d+$/.test(e))
  } catch {
    return undefined
  }
  const children = new Map()
  const own = new Map()
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      const ppid = Number(fields[1])
      own.set(Number(e), (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) / 100)
      if (!children.has(ppid)) children.set(ppid, [])
      children.get(ppid).push(Number(e))
    } catch {
      // Gone between the listing and the read.
    }
  }
  if (!own.has(pid)) return undefined
  let total = 0
  const stack = [pid]
  while (stack.length > 0) {
    const p = stack.pop()
    total += own.get(p) ?? 0
    stack.push(...(children.get(p) ?? []))
  }
  return total
}

/** Runs the child to its end; peak RSS from /usr/bin/time when present, else by polling VmHWM. */
export function runTimed(cmd, args, { env: childEnv, cwd, rssFile }) {
  const useTime = existsSync('/usr/bin/time')
  const child = useTime
    ? spawn('/usr/bin/time', ['-f', '%M', '-o', rssFile, cmd, ...args], { env: childEnv, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(cmd, args, { env: childEnv, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let peakKb = 0
  child.stdout.on('data', (c) => (stdout += c))
  child.stderr.on('data', (c) => process.stderr.write(c))
  const poll = useTime
    ? undefined
    : setInterval(() => {
        try {
          const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
          if (m) peakKb = Math.max(peakKb, Number(m[1]))
        } catch {
          // The child is gone; the last reading stands.
        }
      }, 20)
  return new Promise((resolvePromise, reject) => {
    child.once('error', reject)
    child.once('exit', (code) => {
      if (poll) clearInterval(poll)
      if (useTime) peakKb = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop())
      resolvePromise({ code, peakKb, stdout })
    })
  })
}

/**
 * Runs a load child (wrk, paced-patch) to its end and resolves with the JSON it prints on a line
 * `<MARKER> {…}`; rejects with its output when it fails or prints none.
 */
export function runForResult(command, args, marker, what) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    child.once('error', reject)
    child.once('exit', (code) => {
      const line = new RegExp(`^${marker} (\\{.*\\})$`, 'm').exec(out)
      if (code !== 0 || !line) reject(new Error(`${what} failed (exit ${code}):\n${out}\n${err}`))
      else resolve(JSON.parse(line[1]))
    })
  })
}
