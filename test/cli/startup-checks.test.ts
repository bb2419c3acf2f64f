/**
 * Issue 15 item 3: a database file this user cannot write is refused at start by every command
 * that writes, with status 3 and a line naming the file and the reason; `backup`, which only
 * reads, still copies it. Tests run as root here, and 0444 does not stop root: the commands run
 * as `nobody` (setpriv) when the test is root, as the test's own user otherwise.
 */
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { chmodSync, mkdirSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import type { TestContext } from 'node:test'
import { MAIN_TS, runCli, spawnProcess, tempDir } from './harness.ts'

const TSX = import.meta.resolve('tsx')
const NOBODY = 65534

/** `replenish ARGS` as a real process, as a user that is not root (0444 binds it). */
async function runAsUser(t: TestContext, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const node = [process.execPath, '--import', TSX, MAIN_TS, ...args]
  const [command, ...rest] = process.getuid?.() === 0 ? ['setpriv', `--reuid=${NOBODY}`, `--regid=${NOBODY}`, '--clear-groups', ...node] : node
  // Node passes NODE_V8_COVERAGE (set by c8) on to every child unless the child's environment
  // names it: a process that cannot write the coverage folder would add EACCES lines to stderr.
  const child = spawnProcess(t, command as string, rest, { env: { ...env, NODE_V8_COVERAGE: '' } })
  // A server that starts anyway must fail the test, not hang it.
  const listening = child.waitFor(/^replenish listening on \S+$/m).then(
    () => 'listening',
    () => 'exited',
  )
  const outcome = await Promise.race([child.exited.then(() => 'exited'), listening])
  if (outcome === 'listening') {
    child.kill('SIGKILL')
    assert.fail(`${args.join(' ')} started on a database it cannot write: ${child.stdout()}`)
  }
  const { code } = await child.exited
  return { code, stdout: child.stdout(), stderr: child.stderr() }
}

test('a database file this user cannot write (0444) stops every command that writes with status 3 naming the file; backup still copies it', async (t) => {
  const dir = tempDir(t)
  const db = join(dir, 'r.db')
  const env = { REPLENISH_DB: db, REPLENISH_PORT: '0', REPLENISH_PROCESS_EVERY: '0' }
  assert.equal((await runCli(['migrate'], env)).status, 0)
  assert.equal((await runCli(['users', 'create', '--email', 'ann@example.com'], env)).status, 0)
  chmodSync(db, 0o444)
  chmodSync(dir, 0o777) // the directory stays writable: only the file is read-only
  const owner = statSync(db).uid
  const line = `replenish: cannot use the database ${db}: permission denied: it is read-only for this user (mode 0444, owner uid ${owner}) (SQLite: attempt to write a readonly database)\n`
  // `admin-tokens list` only reads, but opens the database as the others do (it checks and
  // migrates it first): it stops alike, as docs/operations.md says.
  const writers = [['serve'], ['process'], ['migrate'], ['admin-tokens', 'create'], ['admin-tokens', 'list'], ['users', 'create', '--email', 'bob@example.com'], ['keys', 'create', '--user', '1']]
  const runs = await Promise.all(writers.map((argv) => runAsUser(t, argv, env)))
  for (const [i, run] of runs.entries()) {
    assert.deepEqual(run, { code: 3, stdout: '', stderr: line }, (writers[i] as string[]).join(' '))
  }

  const copy = join(dir, 'copy.db')
  assert.deepEqual(await runAsUser(t, ['backup', copy], env), { code: 0, stdout: `backup of ${db} written to ${copy}\n`, stderr: '' })
  // A target directory this user cannot write is named before anything is copied (status 2).
  const shut = join(dir, 'shut')
  mkdirSync(shut, { mode: 0o555 })
  assert.deepEqual(await runAsUser(t, ['backup', join(shut, 'copy.db')], env), {
    code: 2,
    stdout: '',
    stderr: `replenish: cannot write the backup: this user cannot create files in the directory ${shut}\n`,
  })
  const raw = new DatabaseSync(copy, { readOnly: true })
  t.after(() => raw.close())
  assert.deepEqual({ ...(raw.prepare('SELECT email FROM users').get() as object) }, { email: 'ann@example.com' })
})
