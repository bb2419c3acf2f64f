import { cpuSecondsOfTree } from '../lib/process.mjs'

/**
 * The experiments' measurement: `each(item)` for `warm` items, then for `n` more, `inFlight` at a
 * time over `items` (spread by a prime stride), printing the CPU per call on both sides (node from
 * cpuUsage, PostgreSQL from /proc of the postmaster's process tree) and the calls a second.
 */
export async function measure({ label, what, each, items, inFlight, warm, n, postmaster }) {
  const run = async (count) => {
    let next = 0
    await Promise.all(Array.from({ length: inFlight }, async () => {
      while (next < count) await each(items[(next++ * 7919) % items.length])
    }))
  }
  await run(warm)
  const c0 = process.cpuUsage(); const p0 = cpuSecondsOfTree(postmaster); const t0 = performance.now()
  await run(n)
  const c = process.cpuUsage(c0); const p1 = cpuSecondsOfTree(postmaster); const t = performance.now() - t0
  console.log(`${label}: node ${((c.user + c.system) / n).toFixed(0)} µs, PostgreSQL ${((p1 - p0) * 1e6 / n).toFixed(0)} µs per ${what}; ${(n / t * 1000).toFixed(0)}/s`)
}
