/**
 * Finds what a server allocates that outlives V8's young generation (the garbage that makes full
 * collections). Preload it into the server:
 *
 *   node --import ./bench/lib/old-garbage.mjs dist/replenish.cjs serve    # then load it, then
 *   kill -USR2 <pid>                                                       # writes the table
 *
 * Three seconds after start it starts the inspector's sampling heap profiler keeping only
 * objects that survived the young generation (`OLD_GARBAGE_ALL=1`: every allocation); SIGUSR2
 * stops it and writes, to `OLD_GARBAGE_OUT` (default /tmp/old-garbage.txt), the bytes sampled
 * per allocating function with its two callers. Steps 12 and 13 of docs/performance.md came
 * from it.
 */
import { Session } from 'node:inspector'
import { writeFileSync } from 'node:fs'

const session = new Session()
session.connect()
const everything = process.env.OLD_GARBAGE_ALL === '1'
setTimeout(() => {
  session.post('HeapProfiler.enable', () =>
    session.post('HeapProfiler.startSampling', {
      samplingInterval: 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: everything,
    }))
}, 3000).unref()

process.on('SIGUSR2', () => {
  session.post('HeapProfiler.stopSampling', (err, result) => {
    if (err) throw err
    const bytes = new Map()
    const walk = (node, stack) => {
      const f = node.callFrame
      const here = [...stack, `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}:${f.columnNumber + 1}`]
      if (node.selfSize > 0) {
        const key = here.slice(-3).join(' < ')
        bytes.set(key, (bytes.get(key) ?? 0) + node.selfSize)
      }
      for (const child of node.children) walk(child, here)
    }
    walk(result.profile.head, [])
    const rows = [...bytes].sort((a, b) => b[1] - a[1]).slice(0, 40)
    const out = process.env.OLD_GARBAGE_OUT ?? '/tmp/old-garbage.txt'
    writeFileSync(out, rows.map(([where, n]) => `${(n / 1024).toFixed(0).padStart(8)} KB  ${where}`).join('\n') + '\n')
    process.stderr.write(`old-garbage: written to ${out}\n`)
  })
})
