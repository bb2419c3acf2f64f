import { fileURLToPath } from 'node:url'
import { pinned, runForResult } from './process.mjs'

export const LUA_SCRIPT = fileURLToPath(new URL('../scenarios.lua', import.meta.url))

export const INSTALL_HINT = [
  'wrk, the load generator of the bench, is not installed.',
  'On Debian or Ubuntu: sudo apt-get update && sudo apt-get install -y wrk',
  'On macOS: brew install wrk. Elsewhere: https://github.com/wg/wrk (make, then put wrk on PATH).',
].join('\n')

/**
 * One wrk run of one scenario; resolves with what scenarios.lua's done() printed, plus req/s.
 * wrk's own error counters (socket errors, timeouts) are returned beside the Lua count of
 * non-2xx answers; the caller fails the bench on any of them. `slice` of `slices`: the share of
 * the users this wrk process drives when several run at once, one per replenish instance.
 */
export async function runWrk({ url, scenario, dataFile, run, seconds, connections, threads, cpu, slice = 0, slices = 1 }) {
  const args = [
    '-t', String(threads), '-c', String(connections), '-d', `${seconds}s`, '--timeout', '5s',
    '-s', LUA_SCRIPT, url, '--', dataFile, scenario, String(run), String(threads), String(slice), String(slices),
  ]
  const [command, argv] = pinned(cpu, 'wrk', args)
  const r = await runForResult(command, argv, 'BENCH_RESULT', `wrk ${scenario}`)
  return { ...r, rps: r.requests / (r.duration_us / 1e6), socketErrors: r.connect_errors + r.read_errors + r.write_errors + r.timeouts }
}
