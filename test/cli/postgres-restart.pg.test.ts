/**
 * Issue 25, items 1 and 6: a PostgreSQL restart under write load, as an operator does it
 * (`pg_ctl stop -m fast` or `-m immediate`, then start), several times in a row. node-pg emits
 * 'error' on a checked-out client whose connection ends; without a handler on every client the
 * `serve` process died of it ("Unhandled 'error' event … Connection terminated unexpectedly").
 * Here the process stays up through every cycle, answers again by itself once the server is back,
 * and while it is down answers 503 with Retry-After, never a 500, logging one line per outage
 * rather than a stack per request.
 *
 * The server is a throwaway cluster of the test's own (never the shared one) and `serve` a real
 * process, so a crash is an exit, not a failed assertion inside the test's process.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnCli } from './harness.ts'
import { startPostgresCluster } from '../helpers/postgres.ts'
import { request } from '../helpers/server.ts'
import { sleep } from '../helpers/webhooks.ts'

const TOKEN = 'restart-admin-token-0123456789'
const CYCLES = ['fast', 'immediate', 'fast', 'immediate'] as const
const WORKERS = 4
/** How long the server stays down in each cycle. */
const DOWN_MS = 700
/** "Answers again by itself" after a start: a bound on a hang, for a busy machine. */
const BACK_WITHIN_MS = 60_000

test('a PostgreSQL restarted under write load, fast and immediate, four times: serve stays up, answers 503 while it is down and 200 again by itself', async (t) => {
  const cluster = await startPostgresCluster({ maxConnections: 40 })
  t.after(() => cluster.stop())
  const serve = spawnCli(t, ['serve'], {
    env: { REPLENISH_DB: cluster.url, REPLENISH_PORT: '0', REPLENISH_ADMIN_TOKEN: TOKEN, REPLENISH_LOG: 'off', REPLENISH_RATE_LIMIT: '0', REPLENISH_PROCESS_EVERY: '1' },
  })
  const url = (await serve.waitFor(/^replenish listening on (http:\S+)$/m))[1] as string
  let crashed: string | undefined
  void serve.exited.then(({ code, signal }) => (crashed = `serve exited (${code ?? signal}) mid-test:\n${serve.stderr()}`))

  const statuses = new Map<number, number>()
  let lastOk = 0
  let missingRetryAfter = 0
  let running = true
  let n = 0
  const worker = async (): Promise<void> => {
    while (running && crashed === undefined) {
      const res = await request(url, 'POST', '/admin/api/v1/users', { key: TOKEN, json: { user: { email: `restart${++n}@example.com` } } })
        .catch((err: unknown) => {
          // A refused connection: serve is gone, which `crashed` reports.
          if (err instanceof TypeError && err.message === 'fetch failed') return undefined
          throw err
        })
      if (res === undefined) break
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
      if (res.status === 201) lastOk = Date.now()
      if (res.status === 503) {
        if (res.headers.get('retry-after') === null) missingRetryAfter++
        assert.equal(res.body.error, 'Internal server error')
        await sleep(20)
      }
    }
  }
  const load = Array.from({ length: WORKERS }, worker)
  let failed: unknown
  for (const w of load) w.catch((err: unknown) => (failed ??= err))
  const answersAgain = async (since: number, what: string): Promise<void> => {
    const deadline = Date.now() + BACK_WITHIN_MS
    while (lastOk <= since) {
      assert.equal(crashed, undefined)
      if (failed !== undefined) throw failed
      assert.ok(Date.now() < deadline, `no write succeeded within ${BACK_WITHIN_MS / 1000} s ${what}`)
      await sleep(25)
    }
  }

  await answersAgain(0, 'at first')
  for (const mode of CYCLES) {
    await cluster.halt(mode)
    await sleep(DOWN_MS)
    const started = Date.now()
    await cluster.start()
    await answersAgain(started, `after a ${mode} stop and a start`)
  }
  running = false
  await Promise.all(load)

  assert.equal(crashed, undefined)
  const seen = Object.fromEntries(statuses)
  assert.deepEqual(Object.keys(seen).filter((s) => s !== '201' && s !== '503'), [], `only 201 and 503: ${JSON.stringify(seen)}`)
  assert.ok((seen[503] ?? 0) > 0, `some requests met the server down: ${JSON.stringify(seen)}`)
  assert.equal(missingRetryAfter, 0, 'every 503 says when to try again')
  const errors = serve.stderr().split('\n').filter((l) => l.trim() !== '')
  assert.ok(!errors.some((l) => /^\s+at /.test(l) || /"stack"/.test(l)), `no stack on stderr:\n${errors.join('\n')}`)
  const outages = errors.filter((l) => l.includes('answered 503 until it is back'))
  assert.ok(outages.length >= 1 && outages.length <= CYCLES.length * 2, `one line per outage, not one per request (${seen[503]} of them):\n${outages.join('\n')}`)
  // Still the same process, answering.
  assert.equal((await request(url, 'GET', '/readyz')).status, 200)
})
