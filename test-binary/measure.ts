/**
 * The figures of the release note, measured on dist/replenish (not a test: nothing here passes
 * or fails). `npm run build && node --import tsx test-binary/measure.ts`
 *   size, cold start (spawn → first 200 from /healthz, median of 10, on an existing database),
 *   RSS after start, RSS after 10,000 requests (mixed reads and writes, 8 clients, rate limit off).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const BINARY = fileURLToPath(new URL('../dist/replenish', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'replenish-measure-'))
const env = { PATH: '/nonexistent', REPLENISH_DB: join(dir, 'r.db'), REPLENISH_PROCESS_EVERY: '0', REPLENISH_RATE_LIMIT: '0', REPLENISH_LOG: 'json' }

function start(): Promise<{ child: ChildProcess; url: string; started: number }> {
  const started = performance.now()
  const child = spawn(BINARY, ['serve', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'inherit'] })
  return new Promise((resolve, reject) => {
    let out = ''
    const onData = (d: Buffer): void => {
      out += d.toString()
      const m = /^replenish listening on (http:\S+)$/m.exec(out)
      if (m) {
        // Keep draining stdout (the access log) so the pipe never fills.
        child.stdout?.off('data', onData).on('data', () => {})
        resolve({ child, url: m[1] as string, started })
      }
    }
    child.stdout?.on('data', onData)
    child.on('exit', (code) => reject(new Error(`exited ${code}`)))
  })
}

async function stop(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.on('exit', resolve))
  child.kill('SIGTERM')
  await exited
}

const rssMiB = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? (s[(s.length - 1) / 2] as number) : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2
}

spawnSync(BINARY, ['migrate'], { env })
const starts: number[] = []
for (let i = 0; i < 10; i++) {
  const { child, url, started } = await start()
  const res = await fetch(`${url}/healthz`)
  if (res.status !== 200) throw new Error(`healthz ${res.status}`)
  starts.push(performance.now() - started)
  await stop(child)
}

const adminToken = (spawnSync(BINARY, ['admin-tokens', 'create'], { env, encoding: 'utf8' }).stdout.trimEnd().split('\n').at(-1)) as string
const { child, url } = await start()
await fetch(`${url}/healthz`)
const rssStart = rssMiB(child.pid as number)
const post = (path: string, body: unknown, key: string) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.json() as Promise<any>)
const user = await post('/admin/api/v1/users', { user: { email: 'load@example.com' } }, adminToken)
const key = (await post(`/admin/api/v1/users/${user.id}/api_keys`, {}, adminToken)).key as string
const item = await post('/admin/api/v1/subscribables', { subscribable: { sku: 'LOAD', name: 'Load' } }, adminToken)
const first = await post('/api/v1/subscriptions', { subscription: { interval_length: 1, line_items_attributes: [{ subscribable_id: item.id, quantity: 1 }] } }, key)

let sent = 0
const TOTAL = 10_000
const began = performance.now()
await Promise.all(Array.from({ length: 8 }, async () => {
  while (sent < TOTAL) {
    const n = sent++
    const r = n % 10 === 0
      ? await fetch(`${url}/api/v1/subscriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ subscription: { interval_length: 1 + (n % 4), line_items_attributes: [{ subscribable_id: item.id, quantity: 1 }] } }) })
      : n % 10 < 4
        ? await fetch(`${url}/api/v1/subscriptions?page=1`, { headers: { authorization: `Bearer ${key}` } })
        : await fetch(`${url}/api/v1/subscriptions/${first.id}`, { headers: { authorization: `Bearer ${key}` } })
    if (r.status !== 200) throw new Error(`request ${n}: ${r.status}`)
    await r.arrayBuffer()
  }
}))
const seconds = (performance.now() - began) / 1000
const rssAfter = rssMiB(child.pid as number)
await stop(child)
rmSync(dir, { recursive: true, force: true })

console.log(`binary size:            ${(statSync(BINARY).size / 1_048_576).toFixed(1)} MiB (${statSync(BINARY).size} bytes)`)
console.log(`cold start (median/10): ${median(starts).toFixed(0)} ms  [${starts.map((s) => s.toFixed(0)).join(', ')}]`)
console.log(`RSS after start:        ${rssStart.toFixed(1)} MiB`)
console.log(`RSS after ${TOTAL} requests: ${rssAfter.toFixed(1)} MiB  (${(TOTAL / seconds).toFixed(0)} req/s over ${seconds.toFixed(1)} s: 10% creates, 30% lists, 60% shows; 8 clients)`)
