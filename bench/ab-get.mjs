#!/usr/bin/env node
/**
 * A/B of the hot read, for a change to the request path that must not slow it (issue 28: the
 * compression layer keeps answers under 1 KiB on its fast path): serve's CPU time per
 * `GET /api/v1/subscriptions/:id`, this tree against another, both running at once, in blocks of
 * 10,000 requests taken in turn (ABBA…), so a machine that others share slows both alike. CPU time
 * (from /proc) rather than requests per second: it does not count the time the server waited for
 * a core someone else had. Each tree gets its own database seeded by bench/lib/seed.mjs; the
 * requests ask for gzip, deflate and br as a browser does.
 *
 *   git archive <commit> | tar -x -C /tmp/base && ln -s "$PWD/node_modules" /tmp/base/node_modules
 *   node bench/ab-get.mjs --base /tmp/base
 */
import http from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { spawnSync } from 'node:child_process'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { fileURLToPath } from 'node:url'
import { seed } from './lib/seed.mjs'
import { benchEnv } from './lib/env.mjs'
import { cpuSecondsOf, startServer } from './lib/process.mjs'

const { values: opts } = parseArgs({ options: { base: { type: 'string' }, rounds: { type: 'string', default: '12' }, block: { type: 'string', default: '10000' } } })
if (!opts.base) throw new Error('--base DIR: the other tree (a checkout or `git archive` of the commit to compare with, with node_modules)')
const trees = { base: resolve(opts.base), this: resolve(fileURLToPath(new URL('..', import.meta.url))) }
const rounds = Number(opts.rounds)
const block = Number(opts.block)
const CONCURRENCY = 8

const dirs = []
const servers = {}
try {
  for (const [name, root] of Object.entries(trees)) {
    const dir = mkdtempSync(join(tmpdir(), `replenish-ab-${name}-`))
    dirs.push(dir)
    const env = benchEnv(join(dir, 'bench.db'))
    const command = [process.execPath, ['--import', 'tsx', join(root, 'src', 'main.ts')]]
    const migrated = spawnSync(command[0], [...command[1], 'migrate'], { env, cwd: root, encoding: 'utf8' })
    if (migrated.status !== 0) throw new Error(`${name}: migrate failed: ${migrated.stderr}`)
    const users = seed(env.REPLENISH_DB, '2026-03-01')
    const server = await startServer(name, command[0], [...command[1], 'serve'], { cwd: root, env })
    servers[name] = { server, users, agent: new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY }) }
  }
  for (const s of Object.values(servers)) await run(s, 5000) // warm-up
  const perGet = { base: [], this: [] }
  for (let round = 0; round < rounds; round++) {
    for (const name of round % 2 === 0 ? ['base', 'this'] : ['this', 'base']) {
      const s = servers[name]
      const before = cpuSecondsOf(s.server.pid)
      await run(s, block)
      perGet[name].push(((cpuSecondsOf(s.server.pid) - before) / block) * 1e6)
    }
  }
  const median = (list) => {
    const sorted = [...list].sort((a, b) => a - b)
    return (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2
  }
  for (const name of ['base', 'this']) {
    process.stdout.write(`${name.padEnd(4)} ${trees[name]}: CPU per GET median ${median(perGet[name]).toFixed(1)} µs (blocks: ${perGet[name].map((x) => x.toFixed(0)).join(' ')})\n`)
  }
} finally {
  for (const s of Object.values(servers)) {
    s.agent.destroy()
    await s.server.stop()
  }
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
}

/** `n` GETs of the users' own subscriptions, CONCURRENCY at a time on kept-alive connections. */
async function run(s, n) {
  let next = 0
  const one = (user, id) => new Promise((done, fail) => {
    http.get(`${s.server.url}/api/v1/subscriptions/${id}`, { agent: s.agent, headers: { authorization: `Bearer ${user.key}`, 'accept-encoding': 'gzip, deflate, br' } }, (res) => {
      res.resume()
      res.on('end', () => (res.statusCode === 200 ? done() : fail(new Error(`GET answered ${res.statusCode}`))))
    }).on('error', fail)
  })
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < n) {
      const k = next++
      const user = s.users[k % s.users.length]
      await one(user, user.subscriptions[k % user.subscriptions.length])
    }
  }))
}
