import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { pinned } from './process.mjs'

export const LUA_SCRIPT = fileURLToPath(new URL('../scenarios.lua', import.meta.url))

export const INSTALL_HINT = [
  'wrk, the load generator of the bench, is not installed.',
  'On Debian or Ubuntu: sudo apt-get update && sudo apt-get install -y wrk',
  'On macOS: brew install wrk. Elsewhere: https://github.com/wg/wrk (make, then put wrk on PATH).',
].join('\n')

/**
 * One wrk run of one scenario; resolves with what scenarios.lua's done() printed, plus req/s.
 * wrk's own error counters (socket errors, timeouts) are returned beside the Lua count of
 * non-2xx answers; the caller fails the bench on any of them.
 */
export function runWrk({ url, scenario, dataFile, run, seconds, connections, threads, cpu }) {
  const args = [
    '-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s',
    '-s', LUA_SCRIPT, url, '--', dataFile, scenario, String(run), String(threads),
  ]
  const [command, argv] = pinned(cpu, 'wrk', args)
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (c) => (out += c))
    child.stderr.on('data', (c) => (err += c))
    child.once('error', reject)
    child.once('exit', (code) => {
      const line = /^BENCH_RESULT (\{.*\})$/m.exec(out)
      if (code !== 0 || !line) {
        reject(new Error(`wrk ${scenario} failed (exit ${code}):\n${out}\n${err}`))
        return
      }
      const r = JSON.parse(line[1])
      resolve({ ...r, rps: r.requests / (r.duration_us / 1e6), socketErrors: r.connect_errors + r.read_errors + r.write_errors + r.timeouts })
    })
  })
}
