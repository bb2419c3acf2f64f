/**
 * The README's walk-through, run as a reader runs it (issue 15 item 8): its ```sh block(s) are read
 * from README.md at test time, pasted into `sh` against a server started the way `npm start`
 * starts one (on a temporary database), with URL, KEY and ADMIN set to what that start printed.
 * Every curl line must answer 2xx, the processor must make an installment, and its outcome is 200.
 *
 * The lines run through the real `sh` and `curl` rather than being interpreted here: the point is
 * that they work when pasted (quoting, `$(…)`, form data), which only a shell can tell.
 * `.ci/run` installs curl when the machine lacks it.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { createServer } from 'node:net'
import type { AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServe, tempDir } from '../cli/harness.ts'
import { until } from '../helpers/wait.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const SECTION = '## A walk through the API'

/** The ```sh blocks between the walk-through's heading and the next `## ` heading. */
function walkthroughBlocks(readme: string): string[] {
  const start = readme.indexOf(`\n${SECTION}\n`)
  assert.ok(start >= 0, `README.md has no "${SECTION}" section`)
  const rest = readme.slice(start + SECTION.length + 2)
  const next = rest.search(/^## /m)
  const section = next >= 0 ? rest.slice(0, next) : rest
  return [...section.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] as string)
}

/** `npm start`'s arguments after src/main.ts, read from package.json so the test follows it. */
function npmStartArgs(): string[] {
  const scripts = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts
  const m = /^node --import tsx src\/main\.ts (.+)$/.exec(scripts['start'] ?? '')
  assert.ok(m, `npm start is not \`node --import tsx src/main.ts …\`: ${scripts['start']}`)
  return (m[1] as string).split(' ')
}

/** A port nothing listens on now, for the walk-through's webhook receiver. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}

/** Sets `NAME=` lines (the placeholders a reader fills in) to real values; each must be there once. */
function fillIn(block: string, values: Record<string, string>): string {
  let out = block
  for (const [name, value] of Object.entries(values)) {
    const line = new RegExp(`^${name}=\\S*`, 'gm')
    assert.equal(out.match(line)?.length, 1, `the walk-through sets ${name}= once`)
    out = out.replace(line, `${name}='${value}'`)
  }
  return out
}

/**
 * Wraps curl so each call leaves "<status> <arguments>" in the log while its body still goes to
 * stdout (a `$(curl …)` in the walk-through reads it); arguments spread over lines are logged on one. A curl that cannot connect fails the
 * script (`set -e`). The recorder's -o and -w come after the line's own: curl keeps the last
 * -w, so the walk-through's `-w '\n'` does not replace the status code.
 */
const CURL_RECORDER = `set -e
curl() {
  command curl "$@" -o "$WALK_DIR/body" -w '%{http_code}' > "$WALK_DIR/status"
  printf '%s %s\\n' "$(cat "$WALK_DIR/status")" "$(printf '%s' "$*" | tr '\\n' ' ')" >> "$WALK_DIR/log"
  cat "$WALK_DIR/body"
}
`

function run(script: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn('sh', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 })
  let stdout = ''
  let stderr = ''
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d))
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d))
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })))
}

test('the README walk-through runs as written on a fresh `npm start`: every curl answers 2xx, processing makes installment 1, its outcome is 200', async (t) => {
  assert.equal(spawnSync('curl', ['--version']).error, undefined, 'the walk-through test needs curl on PATH (.ci/run installs it)')
  const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'))
  assert.ok(blocks.length > 0, 'the walk-through has a ```sh block')
  // Issue 29 item 6: a reader's prompt starts on its own line after each answer, and a long
  // answer is cut. A command spread over lines (`\` at the end) counts as one.
  for (const command of blocks.join('\n').replace(/\\\n/g, ' ').split('\n').filter((l) => l.startsWith('curl '))) {
    assert.ok(/-w '[^']*\\n'/.test(command) || /\| head\b/.test(command), `a walk-through curl line without -w '…\\n' (or | head): ${command}`)
  }

  const dir = tempDir(t)
  const db = join(dir, 'replenish.db')
  const [command, ...flags] = npmStartArgs()
  assert.equal(command, 'serve')
  // As npm start: the default schedule of the processor inside serve (the harness turns it off),
  // and the default retries. The walk-through itself waits until its webhook receiver listens
  // before it registers it, and until no delivery is pending before it stops it: pasted at once,
  // on a busy machine, the first events could go out before the receiver's node had started, and
  // the last ones after a fixed pause had ended.
  const server = await startServe(t, { REPLENISH_DB: db, REPLENISH_PROCESS_EVERY: '10' }, flags)
  const printed = async (re: RegExp): Promise<string> => {
    await until(`npm start to print ${re}`, () => re.test(server.stderr.join('\n')))
    return (re.exec(server.stderr.join('\n')) as RegExpExecArray)[1] as string
  }
  const key = await printed(/API key[^:\n]*: (rpl_\S+)/)
  const admin = await printed(/admin token[^:\n]*: (rpladm_\S+)/)

  const hooks = await freePort()
  const script = blocks.map((b) => fillIn(b, { URL: server.url, KEY: key, ADMIN: admin, HOOKS: String(hooks) })).join('\n')
  const env: Record<string, string> = { WALK_DIR: dir, REPLENISH_DB: db }
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('REPLENISH_')) env[name] ??= value
  const result = await run(CURL_RECORDER + script, env)
  const redact = (text: string): string => text.replaceAll(key, '$KEY').replaceAll(admin, '$ADMIN')
  assert.equal(result.code, 0, `the walk-through stopped (status ${result.code}):\n${redact(result.stderr)}`)

  const calls = readFileSync(join(dir, 'log'), 'utf8').trimEnd().split('\n').map((line) => {
    const [status, ...args] = line.split(' ')
    return { status: Number(status), args: redact(args.join(' ')) }
  })
  // The wait for the last deliveries asks for pending ones until there are none: once or more.
  const pendingPolls = calls.filter((c) => c.args.includes('/deliveries?state=pending')).length
  assert.ok(pendingPolls >= 1, 'the walk-through waits for the pending deliveries')
  assert.equal(calls.length - pendingPolls + 1, script.match(/\bcurl\s/g)?.length, 'every curl line ran')
  const failed = calls.filter((c) => c.status < 200 || c.status > 299)
  assert.deepEqual(failed, [], 'every curl line answers 2xx')

  const processed = /^processed (\d+) /m.exec(result.stdout)
  assert.ok(processed, `the walk-through runs the processor:\n${redact(result.stdout).slice(-2000)}`)
  assert.ok(Number(processed[1]) >= 1, `the processor processed ${processed[1]} subscriptions`)
  const outcome = calls.filter((c) => c.args.includes('/installments/1/outcome'))
  assert.deepEqual(outcome.map((c) => c.status), [200], 'the outcome of installment 1 is recorded')
  // The receiver it starts printed the events serve delivered to it, the processor's among them.
  assert.match(result.stdout, /webhook: \{"id":1,"type":"subscription\.created"/)
  assert.match(result.stdout, /webhook: \{"id":\d+,"type":"installment\.created"/)
  // Every event reached it before the walk-through stopped it: the first ones (it waited until
  // the receiver listened) and the last ones (it waited until none was pending).
  const feed = await fetch(`${server.url}/admin/api/v1/events?after=0&limit=100`, { headers: { authorization: `Bearer ${admin}` } })
  const events = ((await feed.json()) as { events: { id: number }[] }).events.map((e) => e.id)
  const received = new Set([...result.stdout.matchAll(/webhook: \{"id":(\d+),/g)].map((m) => Number(m[1])))
  assert.deepEqual([...received].sort((x, y) => x - y), events)
})
